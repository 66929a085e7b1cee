"""``simulate``'s report for people: jobs, shares and a summary as rich tables (the jobs table is
``reports.tables.jobs_table``, shared with ``walkthrough``). Styled on a terminal, plain and 200 columns wide
when piped (see ``reports.kit.terminal``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TextIO

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from policy_engine.foundation.units import duration_text, instance_hours_text
from policy_engine.reports.kit import terminal
from policy_engine.reports.kit.safe_text import rich_text, visible
from policy_engine.reports.kit.subjects import SimulateOutput
from policy_engine.reports.tables import why_waited
from policy_engine.reports.tables.jobs_table import jobs_table
from policy_engine.reports.tables.type_tables import TYPE_HEADERS, type_rows, utilisation_phrase
from policy_engine.simulation.results.calibration import ShareCalibration
from policy_engine.simulation.results.records import SimulationResult
from policy_engine.simulation.results.type_usage import SUMMARY_KEY

#: Above this many jobs the text report shows shares and the summary only.
JOB_TABLE_LIMIT = 200


def print_tables(result: SimulationResult, console: Console, rates: Mapping[str, float] | None = None) -> None:
    """The jobs (or their count, above ``JOB_TABLE_LIMIT``), the shares, and a one-line summary (with
    ``rates``, the prices per instance-hour, it adds the price-weighted utilisation of all types)."""
    if len(result.jobs) <= JOB_TABLE_LIMIT:
        console.print(jobs_table(result, f"Jobs at t={duration_text(result.time)}"))
    else:
        console.print(f"{len(result.jobs):,} job(s) (use --format json for each job)")
    shares = Table(title="Shares (time-weighted over the run)")
    rows = [(visible(s.share), visible(s.instance_type), s.strategy, str(s.limit), f"{s.own_utilisation:.1%}",
             f"{s.mean_borrowed:.2f}", f"{s.mean_lent:.2f}", duration_text(s.wait_p50),
             duration_text(s.wait_p95), duration_text(s.wait_max), f"{s.preemptions:,}",
             f"{s.instance_hours_lost:.2f}") for s in result.shares]
    for index, header in enumerate(("share", "type", "strategy", "limit (inst)", "own util",
                                    "mean borrowed (inst)", "mean lent (inst)", "wait p50", "wait p95", "wait max",
                                    "preemptions", "inst-h lost")):
        if index < 3:  # names fold on a narrow terminal
            shares.add_column(header, overflow="fold")
        else:  # numbers are never cut: as wide as the widest one; the header wraps instead
            shares.add_column(header, justify="right", overflow="fold",
                              min_width=max((len(row[index]) for row in rows), default=1))
    for row in rows:
        shares.add_row(*map(rich_text, row))
    if Measurement.get(console, console.options.update_width(10_000), shares).maximum > console.width:
        # A narrow terminal: no box, single padding, numbers exactly as wide as the widest one (their headers
        # wrap), and the names fold into what is left.
        shares.box, shares.show_edge, shares.pad_edge, shares.collapse_padding = box.SIMPLE_HEAD, False, False, True
        for column in shares.columns[3:]:
            column.width = max(column.min_width or 1, 5)
    console.print(shares)
    console.print(types_table(result))
    summary = result.summary
    counts = ", ".join(f"{count:,} {status}" for status, count in summary["by_status"].items())
    console.print(f"t={duration_text(result.time)}: {summary['jobs']:,} job(s){f' ({counts})' if counts else ''}; "
                  f"{summary['preemptions']:,} preemption(s); instance-hours lost "
                  f"{_lost_by_type(summary)}; "
                  f"{utilisation_phrase(summary, rates)}")


def _lost_by_type(summary: dict) -> str:
    """``ml.p4d.24xlarge 192.91, ml.g5.12xlarge 922.45``: the work preemptions threw away, per type (an hour of one
    type is not worth one of another, so never one total)."""
    by_type = summary.get(SUMMARY_KEY, {})
    return ", ".join(f"{t} {instance_hours_text(figures.get('instance_hours_lost', 0.0))}"
                     for t, figures in by_type.items()) or instance_hours_text(summary["instance_hours_lost"])


def types_table(result: SimulationResult) -> Table:
    """One row per instance type: utilisation and instance-hours, never added across types."""
    table = Table(title="Instance types (never summed across types; instance-hours over the run)")
    for index, header in enumerate(TYPE_HEADERS):
        table.add_column(header, overflow="fold", justify="left" if index == 0 else "right")
    for row in type_rows(result.summary):
        table.add_row(*map(rich_text, row))
    return table


def calibration_table(rows: Sequence[ShareCalibration]) -> Table:
    """Observed vs simulated wait and preemptions per share (a workload from ``batch-quota history``)."""
    table = Table(title="Observed vs simulated (waits: jobs with an observed start; agree: same status, end and "
                        "preemptions)")
    for index, column in enumerate(("share", "jobs", "obs wait p50", "sim wait p50", "obs wait p95", "sim wait p95",
                                    "obs wait mean", "sim wait mean", "obs preemptions", "sim preemptions",
                                    "agree")):
        table.add_column(column, overflow="fold", justify="left" if index == 0 else "right")
    for row in rows:
        table.add_row(rich_text(row.share), f"{row.jobs:,}", duration_text(row.observed_wait_p50),
                      duration_text(row.simulated_wait_p50), duration_text(row.observed_wait_p95),
                      duration_text(row.simulated_wait_p95), duration_text(row.observed_wait_mean),
                      duration_text(row.simulated_wait_mean), f"{row.observed_preemptions:,}",
                      f"{row.simulated_preemptions:,}", f"{row.agreeing:,}/{row.observed_jobs:,}")
    return table


def write(output: SimulateOutput, stream: TextIO) -> None:
    console = terminal.console(file=stream, width=200) if not stream.isatty() else terminal.console(file=stream)
    costs = output.costs
    if costs is not None:  # the billing period first: every figure below the bill is read over it
        from policy_engine.reports.tables.cost_tables import period_text

        console.print(f"Bill for {period_text(costs.period)}.", markup=False, highlight=False)
    print_tables(output.result, console,
                 costs.prices.per_instance_hour if costs is not None and costs.prices is not None else None)
    if output.result.plans is not None:
        from policy_engine.reports.tables.plan_tables import text_tables

        for table in text_tables(output.result.plans):  # hours only: the plans' fees are in the bill
            console.print(table)
        if output.plan_account is not None and output.topology is not None:
            from policy_engine.reports.tables import plan_account_tables

            for item in plan_account_tables.text_tables(output.topology, output.plan_account):
                console.print(item)
    if output.waits is not None and (waited := why_waited.rich_table(output.waits)) is not None:
        console.print(waited)
    if output.deploy_note():
        console.print(output.deploy_note(), markup=False)
    if output.calibration is not None:
        console.print(calibration_table(output.calibration))
    if output.costs is not None:
        from policy_engine.reports.tables.cost_text import print_costs

        print_costs(output.costs, console)
    if output.targets:
        from policy_engine.reports.tables.target_text import print_targets

        print_targets(output.targets, console)
