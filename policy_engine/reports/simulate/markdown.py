"""``simulate --format markdown``: headline figures and one row per share and instance type."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

import click

from policy_engine.foundation.units import duration_text, instance_hours_text
from policy_engine.reports.kit import safe_text
from policy_engine.reports.kit.markdown import code, table
from policy_engine.reports.kit.subjects import SimulateOutput
from policy_engine.reports.tables import why_waited
from policy_engine.reports.tables.type_tables import TYPE_HEADERS, all_types_text, type_rows
from policy_engine.simulation.results.calibration import ShareCalibration
from policy_engine.simulation.results.records import SimulationResult

if TYPE_CHECKING:
    from policy_engine.inputs.prices import Prices


def render(result: SimulationResult, *, source: str = "",
           calibration: Sequence[ShareCalibration] | None = None, prices: Prices | None = None) -> str:
    """The run as Markdown; ``calibration`` adds observed vs simulated waits per share, ``prices`` the plans' costs."""
    summary = result.summary
    statuses = ", ".join(f"{status} {count:,}" for status, count in summary["by_status"].items()) or "none"
    lines = ["### batch-quota simulate" + (f": {code(source)}" if source else ""), "",
             *table(("jobs", "by status", "preemptions",  # instance-hours lost: per type, in the next table
                     "wait p50", "wait p95", "wait max", "simulated time"),
                    [(f"{summary['jobs']:,}", statuses, f"{summary['preemptions']:,}",
                      duration_text(summary["wait_p50"]), duration_text(summary["wait_p95"]),
                      duration_text(summary["wait_max"]), duration_text(result.time))],
                    align="rlrrrrr"),
             "", "Per instance type (never summed across types):", "",
             *table(TYPE_HEADERS, type_rows(summary), align="l" + "r" * (len(TYPE_HEADERS) - 1)),
             ""]
    weighted = all_types_text(summary, prices.per_instance_hour) if prices is not None else "-"
    if weighted != "-":
        lines += [f"All types, weighted by your price per instance-hour: utilisation {weighted} (price-weighted).", ""]
    lines += ["Per share and instance type:", ""]
    lines += table(("share", "instance type", "strategy", "limit (instances)", "jobs", "own use",
                    "mean borrowed (instances)", "mean lent (instances)",
                    "wait p50", "wait p95", "preemptions", "instance-hours lost"),
                   ((m.share, m.instance_type, m.strategy, m.limit, f"{m.jobs:,}", f"{m.own_utilisation:.0%}",
                     f"{m.mean_borrowed:.2f}", f"{m.mean_lent:.2f}", duration_text(m.wait_p50),
                     duration_text(m.wait_p95), f"{m.preemptions:,}", instance_hours_text(m.instance_hours_lost))
                    for m in result.shares),
                   align="lllrrrrrrrrr")
    lines.append("")
    if result.plans is not None:
        from policy_engine.reports.tables.plan_tables import markdown_lines

        lines += markdown_lines(result.plans)  # hours only: the plans' fees are in the bill (cost section)
    if calibration:
        lines += ["Observed vs simulated (waits: jobs with an observed start; agree: same status, end and "
                  "preemptions):", ""]
        lines += table(("share", "jobs", "observed wait p50", "simulated wait p50", "observed wait p95",
                        "simulated wait p95", "observed preemptions", "simulated preemptions", "agree"),
                       ((c.share, c.jobs, duration_text(c.observed_wait_p50), duration_text(c.simulated_wait_p50),
                         duration_text(c.observed_wait_p95), duration_text(c.simulated_wait_p95),
                         c.observed_preemptions, c.simulated_preemptions, f"{c.agreeing}/{c.observed_jobs}")
                        for c in calibration),
                       align="lrrrrrrrr")
        lines.append("")
    return "\n".join(lines)


def write(output: SimulateOutput, stream: TextIO) -> None:
    if output.costs is not None:  # the billing period first: every figure below the bill is read over it
        from policy_engine.reports.tables.cost_tables import period_text

        click.echo(f"_Bill for {safe_text.markdown(period_text(output.costs.period))}_\n", file=stream)
    click.echo(render(output.result, source=output.source, calibration=output.calibration,
                      prices=output.costs.prices if output.costs else None), file=stream, nl=False)
    if output.waits is not None and (waited := why_waited.markdown(output.waits)):
        click.echo("\n".join(["", *waited]), file=stream, nl=False)
    if output.plan_account is not None and output.topology is not None:
        from policy_engine.reports.tables import plan_account_tables

        click.echo("\n".join(["", *plan_account_tables.markdown_lines(output.topology, output.plan_account)]),
                   file=stream, nl=False)
    if output.deploy_note():
        click.echo(f"\n_{safe_text.markdown(output.deploy_note())}_", file=stream)
    if output.costs is not None:
        from policy_engine.reports.tables import cost_markdown

        click.echo("\n".join(["", "#### The bill, who pays, waste", "", *cost_markdown.render(output.costs)]),
                   file=stream)
    if output.targets:
        from policy_engine.reports.tables.target_tables import markdown_lines

        click.echo("\n".join(["", *markdown_lines(output.targets)]), file=stream)
