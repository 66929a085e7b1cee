"""``simulate --format markdown``: headline figures and one row per share and instance type."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

import click

from policy_engine.reports import safe_text
from policy_engine.reports.markdown import code, table
from policy_engine.reports.subjects import SimulateOutput
from policy_engine.simulation.outputs.calibration import ShareCalibration
from policy_engine.simulation.outputs.numbers import format_seconds
from policy_engine.simulation.outputs.results import SimulationResult


def _seconds(value: float) -> str:
    return f"{format_seconds(value)} s"


def render(result: SimulationResult, *, source: str = "",
           calibration: Sequence[ShareCalibration] | None = None) -> str:
    """The run as Markdown; ``calibration`` adds observed vs simulated waits per share."""
    summary = result.summary
    statuses = ", ".join(f"{status} {count}" for status, count in summary["by_status"].items()) or "none"
    lines = ["### batch-quota simulate" + (f": {code(source)}" if source else ""), "",
             *table(("jobs", "by status", "preemptions", "instance-hours lost", "cluster utilisation",
                     "wait p50", "wait p95", "wait max", "simulated time"),
                    [(summary["jobs"], statuses, summary["preemptions"], f"{summary['instance_hours_lost']:.2f}",
                      f"{summary['cluster_utilisation']:.0%}", _seconds(summary["wait_p50"]),
                      _seconds(summary["wait_p95"]), _seconds(summary["wait_max"]), _seconds(result.time))],
                    align="rlrrrrrrr"),
             ""]
    lines += table(("share", "instance type", "strategy", "limit", "jobs", "own use", "mean borrowed", "mean lent",
                    "wait p50", "wait p95", "preemptions", "instance-hours lost"),
                   ((m.share, m.instance_type, m.strategy, m.limit, m.jobs, f"{m.own_utilisation:.0%}",
                     f"{m.mean_borrowed:.2f}", f"{m.mean_lent:.2f}", _seconds(m.wait_p50), _seconds(m.wait_p95),
                     m.preemptions, f"{m.instance_hours_lost:.2f}") for m in result.shares),
                   align="lllrrrrrrrrr")
    lines.append("")
    if result.plans is not None:
        from policy_engine.reports.plan_tables import markdown_lines

        lines += markdown_lines(result.plans)
    if calibration:
        lines += ["Observed vs simulated (waits: jobs with an observed start; agree: same status, end and "
                  "preemptions):", ""]
        lines += table(("share", "jobs", "observed wait p50", "simulated wait p50", "observed wait p95",
                        "simulated wait p95", "observed preemptions", "simulated preemptions", "agree"),
                       ((c.share, c.jobs, _seconds(c.observed_wait_p50), _seconds(c.simulated_wait_p50),
                         _seconds(c.observed_wait_p95), _seconds(c.simulated_wait_p95), c.observed_preemptions,
                         c.simulated_preemptions, f"{c.agreeing}/{c.observed_jobs}") for c in calibration),
                       align="lrrrrrrrr")
        lines.append("")
    return "\n".join(lines)


def write(output: SimulateOutput, stream: TextIO) -> None:
    click.echo(render(output.result, source=output.source, calibration=output.calibration), file=stream,
               nl=False)
    if output.deploy_note():
        click.echo(f"\n_{safe_text.markdown(output.deploy_note())}_", file=stream)
    if output.targets:
        from policy_engine.reports.target_tables import markdown_lines

        click.echo("\n".join(["", *markdown_lines(output.targets)]), file=stream)
