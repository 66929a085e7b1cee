"""``diff --format json``: the change report's stable keys (``ChangeReport.to_dict``), for scripts."""

from __future__ import annotations

import json
from typing import TextIO

import click

from policy_engine.reports.kit.subjects import DiffLoadFailure, DiffOutput


def write(output: DiffOutput, stream: TextIO) -> None:
    click.echo(json.dumps(output.report.to_dict(output.fail_on), indent=2, default=str), file=stream)


def write_load_failure(failure: DiffLoadFailure, stream: TextIO) -> None:
    """``ok`` and ``loaded`` false, the problems listed: a script tells a bad input from a bad change."""
    click.echo(json.dumps({"base": failure.base, "head": failure.head, "ok": False, "loaded": False,
                           "load_errors": failure.problems}, indent=2), file=stream)
