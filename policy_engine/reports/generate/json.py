"""``generate --format json``: ``jobs`` (how many were written), ``output`` (the jobs file), ``scenario`` (the
scenario file or null) and ``notes`` (what was said on stderr), for scripts."""

from __future__ import annotations

import json
from typing import Any, TextIO

import click

from policy_engine.reports.generate.view import GenerateOutput, build


def to_dict(output: GenerateOutput) -> dict[str, Any]:
    return build(output).to_dict()


def write(output: GenerateOutput, stream: TextIO) -> None:
    click.echo(json.dumps(to_dict(output), indent=2), file=stream)
