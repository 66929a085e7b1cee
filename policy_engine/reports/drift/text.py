"""``drift --format text``: a verdict line, then one line per difference, for people."""

from __future__ import annotations

from typing import TextIO

import click

from policy_engine.reports.drift.view import DriftOutput, DriftVerdict, build
from policy_engine.reports.kit.safe_text import visible


def render(output: DriftOutput) -> str:
    view = build(output)
    source, region = view.source, view.region
    if view.verdict is DriftVerdict.INCOMPLETE:
        return (f"incomplete: {view.unreadable} object(s) could not be read (Region {region}); "
                f"no drift among the objects of {source} that were read\n")
    if view.verdict is DriftVerdict.NONE:
        return f"no drift: the account (Region {region}) matches {source}\n"
    lines = [f"drift: {len(view.rows)} difference(s) between {source} and the account (Region {region})"]
    lines += [f"  {row.kind:<9} {row.line}" for row in view.rows]
    return "".join(visible(line) + "\n" for line in lines)  # a name is shown, never a terminal escape


def write(output: DriftOutput, stream: TextIO) -> None:
    click.echo(render(output), file=stream, nl=False)
