"""``tune --format text``: the recommendation, its evidence against the current topology, the Pareto front."""

from __future__ import annotations

import json
from typing import TextIO

from rich.table import Table

from policy_engine.reports import terminal
from policy_engine.sweep.evaluate import OK
from policy_engine.sweep.subjects import TuneOutput
from policy_engine.sweep.tune import feasible


def write(output: TuneOutput, stream: TextIO) -> None:
    result, out_file = output.result, output.out_file
    console = terminal.console(file=stream, width=200) if not stream.isatty() else terminal.console(file=stream)
    ok = sum(1 for r in result.runs if r["status"] == OK)
    good = sum(1 for r in result.runs if feasible(r, output.constraints))
    console.print(f"{len(result.runs)} candidate(s) simulated or checked: {ok} ok, {good} meeting every constraint")
    if result.chosen is None:
        console.print("no candidate met every constraint: nothing to recommend")
        return
    values = ", ".join(f"{path}={json.dumps(value)}" for path, value in result.chosen["values"].items())
    console.print(f"recommended: {values}" + (f" (written to {out_file})" if out_file else ""), highlight=False)
    table = Table(title="Evidence: recommended against the current topology")
    for column in ("", "current", "recommended"):
        table.add_column(column, justify="right" if column else "left")
    for row in output.evidence:
        table.add_row(*row)
    console.print(table)
    if output.front_rows:
        front = Table(title=f"Pareto front ({len(output.front_rows)} point(s); --pick N chooses)")
        front.add_column("#", justify="right")
        for axis in output.axes:
            front.add_column(axis.path, overflow="fold")
        for objective in output.objectives:
            front.add_column(objective.label, justify="right")
        for point in output.front_rows:
            front.add_row(*point)
        console.print(front)
