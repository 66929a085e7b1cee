"""Machine output of ``batch-quota check --format json``: findings plus the per-share summary (the document is
read from the report by ``reports.check.view``)."""

from __future__ import annotations

import json
from typing import TextIO

import click

from policy_engine.reports.check.view import (
    CheckLoadFailure,
    CheckOutput,
    CheckReport,
    document,
    load_failure_document,
)

__all__ = ["load_failure_to_dict", "render", "render_load_failure", "to_dict", "write", "write_load_failure"]

to_dict = document
load_failure_to_dict = load_failure_document


def render_load_failure(problems: list[str], *, source: str = "") -> str:
    return json.dumps(load_failure_to_dict(problems, source=source), indent=2, allow_nan=False)


def render(report: CheckReport, *, source: str = "", strict: bool = False, declared_guarantees: int = 0) -> str:
    return json.dumps(to_dict(report, source=source, strict=strict, declared_guarantees=declared_guarantees),
                      indent=2, allow_nan=False)


def write(output: CheckOutput, stream: TextIO) -> None:
    click.echo(render(output.report, source=output.source, strict=output.strict,
                      declared_guarantees=len(output.topology.guarantees)), file=stream)


def write_load_failure(failure: CheckLoadFailure, stream: TextIO) -> None:
    click.echo(render_load_failure(failure.problems, source=failure.source), file=stream)
