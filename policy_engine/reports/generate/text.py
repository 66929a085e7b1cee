"""``generate --format text``: what was written, one line per file."""

from __future__ import annotations

from typing import TextIO

import click

from policy_engine.reports.generate.view import GenerateOutput, build


def write(output: GenerateOutput, stream: TextIO) -> None:
    view = build(output)
    click.echo(f"wrote {view.jobs:,} job(s) to {view.output}", file=stream)
    if view.scenario:
        click.echo(f"wrote scenario {view.scenario}", file=stream)
