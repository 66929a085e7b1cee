"""``drift --format json``: ``source``, ``region``, ``drift``, ``differences`` (``Difference.to_dict``) and
``unreadable`` (one line per call that failed), for scripts."""

from __future__ import annotations

import json
from typing import Any, TextIO

import click

from policy_engine.reports.drift.view import DriftOutput, build


def to_dict(output: DriftOutput) -> dict[str, Any]:
    return build(output).document


def write(output: DriftOutput, stream: TextIO) -> None:
    click.echo(json.dumps(to_dict(output), indent=2, default=list), file=stream)
