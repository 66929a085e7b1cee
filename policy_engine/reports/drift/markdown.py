"""``drift --format markdown``: a verdict heading and one table row per difference, for a pull-request comment.

Built with ``reports.kit.markdown``: object names, fields and values are cells shown literally, so a
name with a ``|``, a backtick or HTML cannot break the table or inject markup.
"""

from __future__ import annotations

from typing import Any, TextIO

import click

from policy_engine.adapters.aws.drift import shown
from policy_engine.reports.kit.markdown import code, table
from policy_engine.reports.kit.subjects import DriftOutput


def _value(value: Any) -> str:
    return "-" if value is None else shown(value)


def render(output: DriftOutput) -> str:
    differences, source, region = output.differences, code(output.source), code(output.region)
    if not differences and output.unreadable:
        return (f"### Incomplete\n\n{len(output.unreadable)} object(s) could not be read (Region {region}); "
                f"no drift among the objects of {source} that were read.\n")
    if not differences:
        return f"### No drift\n\nThe account (Region {region}) matches {source}.\n"
    rows = [(d.kind, d.object, d.field or "-", _value(d.expected), _value(d.actual)) for d in differences]
    lines = [f"### Drift: {len(differences)} difference(s)", "", f"{source} against the account (Region {region})",
             "", *table(("kind", "object", "field", "topology", "account"), rows)]
    return "\n".join(lines) + "\n"


def write(output: DriftOutput, stream: TextIO) -> None:
    click.echo(render(output), file=stream, nl=False)
