"""``drift --format text``: a verdict line, then one line per difference, for people."""

from __future__ import annotations

from typing import TextIO

import click

from policy_engine.reports.kit.safe_text import visible
from policy_engine.reports.kit.subjects import DriftOutput


def render(output: DriftOutput) -> str:
    differences, source, region = output.differences, output.source, output.region
    if not differences and output.unreadable:
        return (f"incomplete: {len(output.unreadable)} object(s) could not be read (Region {region}); "
                f"no drift among the objects of {source} that were read\n")
    if not differences:
        return f"no drift: the account (Region {region}) matches {source}\n"
    lines = [f"drift: {len(differences)} difference(s) between {source} and the account (Region {region})"]
    lines += [f"  {d.kind:<9} {d.line()}" for d in differences]
    return "".join(visible(line) + "\n" for line in lines)  # a name is shown, never a terminal escape


def write(output: DriftOutput, stream: TextIO) -> None:
    click.echo(render(output), file=stream, nl=False)
