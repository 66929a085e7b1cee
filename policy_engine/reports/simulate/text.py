"""``simulate``'s report for people: jobs, shares and a summary as rich tables (the jobs table is
``reports.tables.jobs_table``, shared with ``walkthrough``). Styled on a terminal, plain and 200 columns wide
when piped (see ``reports.kit.terminal``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TextIO

from rich.console import Console, ConsoleRenderable, RenderHook
from rich.table import Table

from policy_engine.reports.kit import terminal
from policy_engine.reports.kit.safe_text import rich_text, visible
from policy_engine.reports.simulate.view import (
    JOB_TABLE_LIMIT,
    CalibrationRow,
    RunView,
    SimulateOutput,
    SimulationResult,
    bill_spread_line,
    build,
    run_view,
)
from policy_engine.reports.tables import why_waited
from policy_engine.reports.tables.jobs_table import jobs_table
from policy_engine.reports.tables.type_tables import TYPE_HEADERS

__all__ = ["JOB_TABLE_LIMIT", "calibration_table", "print_run", "print_tables", "shares_table", "types_table", "write"]


def print_tables(result: SimulationResult, console: Console, rates: Mapping[str, float] | None = None) -> None:
    """The jobs (or their count, above ``JOB_TABLE_LIMIT``), the shares, and a one-line summary (with
    ``rates``, the prices per instance-hour, it adds the price-weighted utilisation of all types)."""
    print_run(run_view(result, rates), console)


def print_run(run: RunView, console: Console, *, sample_one: str = "",
              shares_title: str = "Shares (time-weighted over the run)",
              types_title: str = "Instance types (never summed across types; instance-hours over the run)") -> None:
    """The run's tables; with ``sample_one`` (``--samples N``) the jobs and the summary line are titled as the first
    sample's, the shares and types (medians across the samples) by ``shares_title`` and ``types_title``."""
    label = f"{sample_one}: " if sample_one else ""
    if run.job_rows is not None:
        console.print(jobs_table(run.job_rows, f"{label}Jobs at t={run.time}"))
    else:
        console.print(f"{label}{run.jobs:,} job(s) (use --format json for each job)")
    console.print(shares_table(run, shares_title))
    console.print(types_table(run, types_title))
    counts = ", ".join(f"{count:,} {status}" for status, count in run.by_status.items())
    console.print(f"{label}t={run.time}: {run.jobs:,} job(s){f' ({counts})' if counts else ''}; "
                  f"{run.preemptions:,} preemption(s); instance-hours lost {run.lost_by_type}; {run.utilisation}")


def shares_table(run: RunView, title: str = "Shares (time-weighted over the run)") -> Table:
    """One row per share and instance type: utilisation, borrowing and lending, waits and preemptions."""
    shares = Table(title=title)
    rows = [(visible(s.share), visible(s.instance_type), s.strategy, str(s.limit), f"{s.own_utilisation:.1%}",
             f"{s.mean_borrowed:.2f}", f"{s.mean_lent:.2f}", s.wait_p50, s.wait_p95, s.wait_max, f"{s.preemptions:,}",
             f"{s.instance_hours_lost:.2f}") for s in run.shares]
    for index, header in enumerate(("share", "type", "strategy", "limit (inst)", "own util",
                                    "mean borrowed (inst)", "mean lent (inst)", "wait p50", "wait p95", "wait max",
                                    "preemptions", "inst-h lost")):
        if index < 3:  # names fold on a narrow terminal
            shares.add_column(header, overflow="fold")
        else:  # numbers are never cut: as wide as the widest one (on a terminal see ``reports.kit.fitting``)
            shares.add_column(header, justify="right", overflow="fold",
                              min_width=max((len(row[index]) for row in rows), default=1))
    for row in rows:
        shares.add_row(*map(rich_text, row))
    return shares


def types_table(run: RunView,
                title: str = "Instance types (never summed across types; instance-hours over the run)") -> Table:
    """One row per instance type: utilisation and instance-hours, never added across types."""
    table = Table(title=title)
    for index, header in enumerate(TYPE_HEADERS):
        table.add_column(header, overflow="fold", justify="left" if index == 0 else "right")
    for row in run.types:
        table.add_row(*map(rich_text, row))
    return table


class _SampleOne(RenderHook):
    """Titles every table printed after it as the first sample's (``sample 1 of 5 (seed 0)``): with ``--samples N``
    the sections below the medians (plans, why jobs waited, the bill, the targets) describe sample 1 alone."""

    def __init__(self, label: str) -> None:
        self.label = label

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        for renderable in renderables:
            if isinstance(renderable, Table):
                title = renderable.title
                if not (isinstance(title, str) and title.startswith(self.label)):
                    renderable.title = f"{self.label}: {title}" if title else self.label
        return renderables


def calibration_table(rows: Sequence[CalibrationRow]) -> Table:
    """Observed vs simulated wait to the first start, and preemptions, per share (a workload from ``batch-quota
    history``, which records only a job's first start)."""
    table = Table(title="Observed vs simulated (waits: submission to the first start, all a history records, of "
                        "jobs with an observed start; agree: same status, end and preemptions)")
    for index, column in enumerate(("share", "jobs", "obs wait p50", "sim wait p50", "obs wait p95", "sim wait p95",
                                    "obs wait mean", "sim wait mean", "obs preemptions", "sim preemptions",
                                    "agree")):
        table.add_column(column, overflow="fold", justify="left" if index == 0 else "right")
    for row in rows:
        table.add_row(rich_text(row.share), f"{row.jobs:,}", row.observed_first_start_wait_p50,
                      row.simulated_first_start_wait_p50, row.observed_first_start_wait_p95,
                      row.simulated_first_start_wait_p95, row.observed_first_start_wait_mean,
                      row.simulated_first_start_wait_mean, f"{row.observed_preemptions:,}",
                      f"{row.simulated_preemptions:,}", f"{row.agreeing:,}/{row.observed_jobs:,}")
    return table


def write(output: SimulateOutput, stream: TextIO) -> None:
    console = terminal.for_stream(stream, file_width=200)
    view = build(output)
    if view.bill_period is not None:  # the billing period first: every figure below the bill is read over it
        console.print(f"Bill for {view.bill_period}.", markup=False, highlight=False)
    if view.sample_one:
        console.print(output.samples_line(), markup=False, highlight=False)
    print_run(view.run, console, sample_one=view.sample_one, shares_title=view.shares_title,
              types_title=view.types_title)
    if output.samples > 1:  # the shares table holds the medians; their spreads beside them
        from policy_engine.reports.simulate.view import SPREAD_HEAD, spread_rows, spread_title
        from policy_engine.reports.tables.share_comparison import rich_table

        console.print(rich_table(spread_title(output), SPREAD_HEAD, spread_rows(output)))
        console.push_render_hook(_SampleOne(view.sample_one))  # every table below is the first sample's alone
    if view.run.plans is not None:
        from policy_engine.reports.tables.plan_tables import text_tables

        for table in text_tables(view.run.plans):  # hours only: the plans' fees are in the bill
            console.print(table)
        if view.plan_account is not None and view.topology is not None:
            from policy_engine.reports.tables import plan_account_tables

            for item in plan_account_tables.text_tables(view.topology, view.plan_account):
                console.print(item)
    if view.waits is not None and (waited := why_waited.rich_table(view.waits)) is not None:
        console.print(waited)
    if view.deploy_note:
        console.print(view.deploy_note, markup=False)
    if view.calibration is not None:
        console.print(calibration_table(view.calibration))
    if view.costs is not None:
        from policy_engine.reports.tables.cost_text import print_costs

        if (line := bill_spread_line(output)) is not None:
            console.print(line, markup=False, highlight=False)
        print_costs(view.costs, console)
    if view.targets:
        from policy_engine.reports.tables.target_text import print_targets

        print_targets(view.targets, console)
