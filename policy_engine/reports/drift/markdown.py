"""``drift --format markdown``: a verdict heading and one table row per difference, for a pull-request comment.

Built with ``reports.kit.markdown``: object names, fields and values are cells shown literally, so a
name with a ``|``, a backtick or HTML cannot break the table or inject markup.
"""

from __future__ import annotations

from typing import TextIO

import click

from policy_engine.reports.drift.view import DriftOutput, DriftVerdict, build
from policy_engine.reports.kit.markdown import code, table


def render(output: DriftOutput) -> str:
    view = build(output)
    source, region = code(view.source), code(view.region)
    if view.verdict is DriftVerdict.INCOMPLETE:
        return (f"### Incomplete\n\n{view.unreadable} object(s) could not be read (Region {region}); "
                f"no drift among the objects of {source} that were read.\n")
    if view.verdict is DriftVerdict.NONE:
        return f"### No drift\n\nThe account (Region {region}) matches {source}.\n"
    rows = [(row.kind, row.object, row.field or "-", row.expected, row.actual) for row in view.rows]
    lines = [f"### Drift: {len(view.rows)} difference(s)", "", f"{source} against the account (Region {region})",
             "", *table(("kind", "object", "field", "topology", "account"), rows)]
    return "\n".join(lines) + "\n"


def write(output: DriftOutput, stream: TextIO) -> None:
    click.echo(render(output), file=stream, nl=False)
