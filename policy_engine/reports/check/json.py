"""Machine output of ``batch-quota check --format json``: findings plus the per-share summary."""

from __future__ import annotations

import json
from typing import Any, TextIO

import click

from policy_engine.analysis.checks import CheckReport
from policy_engine.foundation.findings import finding_to_dict
from policy_engine.reports.kit.subjects import CheckLoadFailure, CheckOutput


def to_dict(report: CheckReport, *, source: str = "", strict: bool = False, declared_guarantees: int = 0
            ) -> dict[str, Any]:
    """``ok`` is the exit code's verdict: no unsuppressed error (and, with ``strict``, no unsuppressed warning);
    ``guarantees``: how many the topology declares and how many were proven."""
    proven, declared = report.guarantees_proven(declared_guarantees)
    return {
        "source": source,
        "ok": report.passes(strict),
        "strict": strict,
        "loaded": True,
        "load_errors": [],
        "errors": len(report.errors),
        "warnings": len(report.warnings),
        "notes": len(report.notes),
        "suppressed": len(report.suppressed),
        "guarantees": {"declared": declared, "proven": proven},
        "findings": [finding_to_dict(f) for f in report.findings],
        "summaries": {name: summary.to_dict() for name, summary in report.summaries.items()},
    }


def load_failure_to_dict(problems: list[str], *, source: str = "") -> dict[str, Any]:
    """The object for a file that cannot be loaded (exit 2): same keys as :func:`to_dict`, no rule ran."""
    return {
        "source": source,
        "ok": False,
        "strict": False,
        "loaded": False,
        "load_errors": list(problems),
        "errors": len(problems),
        "warnings": 0,
        "suppressed": 0,
        "guarantees": {"declared": 0, "proven": 0},
        "findings": [],
        "summaries": {},
    }


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
