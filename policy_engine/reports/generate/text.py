"""``generate --format text``: what was written, one line per file."""

from __future__ import annotations

from typing import TextIO

import click

from policy_engine.reports.kit.subjects import GenerateOutput


def write(output: GenerateOutput, stream: TextIO) -> None:
    click.echo(f"wrote {output.jobs:,} job(s) to {output.output}", file=stream)
    if output.scenario:
        click.echo(f"wrote scenario {output.scenario}", file=stream)
