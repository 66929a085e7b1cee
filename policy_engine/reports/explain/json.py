"""``explain --format json``: the share, its sentences as ``{"topic", "text"}`` and its figures (the per-share
summary ``check --format json`` writes), the training plans' windows and ``advice`` (each knob replayed,
``sweep.advice``), for scripts and bots (the document is read by ``reports.explain.view``)."""

from __future__ import annotations

import json
from typing import Any, TextIO

import click

from policy_engine.reports.explain.view import ExplainOutput, document


def to_dict(output: ExplainOutput) -> dict[str, Any]:
    return document(output)


def write(output: ExplainOutput, stream: TextIO) -> None:
    click.echo(json.dumps(to_dict(output), indent=2, allow_nan=False), file=stream)
