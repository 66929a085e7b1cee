"""``simulate --format markdown``: headline figures and one row per share and instance type."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TextIO

import click

from policy_engine.reports.kit import safe_text
from policy_engine.reports.kit.markdown import code, table
from policy_engine.reports.simulate.view import (
    CalibrationRow,
    ShareCalibration,
    SimulateOutput,
    SimulationResult,
    bill_spread_line,
    build,
    calibration_rows,
    run_view,
)
from policy_engine.reports.tables import why_waited
from policy_engine.reports.tables.type_tables import TYPE_HEADERS

if TYPE_CHECKING:
    from policy_engine.reports.simulate.view import RunView


def _lines(run: RunView, source: str, calibration: Sequence[CalibrationRow] | None, label: str = "") -> list[str]:
    """``label``: what the shares table is across workload samples (``SimulateOutput.shares_label``)."""
    return [*_run_lines(run, source, label=label), *_sample_lines(run, calibration)]


def _run_lines(run: RunView, source: str, samples: int = 1, sample_one: str = "", label: str = "") -> list[str]:
    """The headline, the per-type and the per-share tables; with ``samples`` (more than 1) the headline is titled
    ``sample_one`` and the other two are the medians across the samples; ``label`` (one sample): what the shares
    table is, said in its title."""
    statuses = ", ".join(f"{status} {count:,}" for status, count in run.by_status.items()) or "none"
    types = ("Per instance type (never summed across types):" if samples <= 1 else
             f"Per instance type across {samples} samples, median (p10-p90) (never summed across types):")
    one = "Per share and instance type" + (f", {safe_text.markdown(label)}:" if label else ":")
    shares = (one if samples <= 1 else
              f"Per share and instance type across {samples} samples, medians (their p10-p90 in the spread table):")
    lines = ["### batch-quota simulate" + (f": {code(source)}" if source else ""), "",
             *([f"{safe_text.markdown(sample_one[0].upper() + sample_one[1:])}:", ""] if sample_one else []),
             *table(("jobs", "by status", "preemptions",  # instance-hours lost: per type, in the next table
                     "wait p50", "wait p95", "wait max", "simulated time"),
                    [(f"{run.jobs:,}", statuses, f"{run.preemptions:,}", run.wait_p50, run.wait_p95, run.wait_max,
                      run.time)],
                    align="rlrrrrr"),
             "", types, "",
             *table(TYPE_HEADERS, run.types, align="l" + "r" * (len(TYPE_HEADERS) - 1)),
             ""]
    if run.weighted_utilisation != "-":
        lines += [f"All types, weighted by your price per instance-hour: utilisation {run.weighted_utilisation} "
                  "(price-weighted).", ""]
    lines += [shares, ""]
    lines += table(("share", "instance type", "strategy", "limit (instances)", "jobs", "own use",
                    "mean borrowed (instances)", "mean lent (instances)",
                    "wait p50", "wait p95", "preemptions", "instance-hours lost"),
                   ((m.share, m.instance_type, m.strategy, m.limit, f"{m.jobs:,}", f"{m.own_utilisation:.0%}",
                     f"{m.mean_borrowed:.2f}", f"{m.mean_lent:.2f}", m.wait_p50, m.wait_p95, f"{m.preemptions:,}",
                     m.instance_hours_lost_text)
                    for m in run.shares),
                   align="lllrrrrrrrrr")
    lines.append("")
    return lines


def _sample_lines(run: RunView, calibration: Sequence[CalibrationRow] | None) -> list[str]:
    """The training plans and observed vs simulated: the one run's (with ``--samples N``, sample 1's)."""
    lines: list[str] = []
    if run.plans is not None:
        from policy_engine.reports.tables.plan_tables import markdown_lines

        lines += markdown_lines(run.plans)  # hours only: the plans' fees are in the bill (cost section)
    if calibration:
        lines += ["Observed vs simulated (waits: submission to the first start, all a history records, of jobs with "
                  "an observed start; agree: same status, end and preemptions):", ""]
        lines += table(("share", "jobs", "observed wait p50", "simulated wait p50", "observed wait p95",
                        "simulated wait p95", "observed preemptions", "simulated preemptions", "agree"),
                       ((c.share, c.jobs, c.observed_first_start_wait_p50, c.simulated_first_start_wait_p50,
                         c.observed_first_start_wait_p95, c.simulated_first_start_wait_p95, c.observed_preemptions,
                         c.simulated_preemptions, f"{c.agreeing}/{c.observed_jobs}")
                        for c in calibration),
                       align="lrrrrrrrr")
        lines.append("")
    return lines


def render(result: SimulationResult, *, source: str = "", calibration: Sequence[ShareCalibration] | None = None,
           rates: Mapping[str, float] | None = None) -> str:
    """The run as Markdown; ``calibration`` adds observed vs simulated waits per share, ``rates`` (the prices per
    instance-hour) the price-weighted utilisation of all types."""
    run = run_view(result, rates, jobs=False)
    return "\n".join(_lines(run, source, calibration_rows(calibration) if calibration is not None else None))


def write(output: SimulateOutput, stream: TextIO) -> None:
    view = build(output, jobs=False)
    if view.bill_period is not None:  # the billing period first: every figure below the bill is read over it
        click.echo(f"_Bill for {safe_text.markdown(view.bill_period)}_\n", file=stream)
    if output.samples <= 1:
        click.echo("\n".join(_lines(view.run, view.source, view.calibration, output.shares_label())), file=stream,
                   nl=False)
    else:  # the medians (and their spreads), then every section of sample 1 alone under its own heading
        from policy_engine.reports.simulate.view import SPREAD_HEAD, spread_rows, spread_title
        from policy_engine.reports.tables.share_comparison import markdown_table

        click.echo("\n".join([*_run_lines(view.run, view.source, output.samples, view.sample_one),
                              f"_{safe_text.markdown(output.samples_line())}_", "", f"{spread_title(output)}:", "",
                              *markdown_table(SPREAD_HEAD, spread_rows(output)), "",
                              f"#### {safe_text.markdown(view.sample_one[0].upper() + view.sample_one[1:])}", "",
                              "Every table below is the first sample's alone, not a median.", "",
                              *_sample_lines(view.run, view.calibration)]), file=stream, nl=False)
    if view.waits is not None and (waited := why_waited.markdown(view.waits)):
        click.echo("\n".join(["", *waited]), file=stream, nl=False)
    if view.plan_account is not None and view.topology is not None:
        from policy_engine.reports.tables import plan_account_tables

        click.echo("\n".join(["", *plan_account_tables.markdown_lines(view.topology, view.plan_account)]),
                   file=stream, nl=False)
    if view.deploy_note:
        click.echo(f"\n_{safe_text.markdown(view.deploy_note)}_", file=stream)
    if view.costs is not None:
        from policy_engine.reports.tables import cost_markdown

        spread = [f"_{safe_text.markdown(line)}_", ""] if (line := bill_spread_line(output)) is not None else []
        click.echo("\n".join(["", "#### The bill, who pays, waste", "", *spread, *cost_markdown.render(view.costs)]),
                   file=stream)
    if view.targets:
        from policy_engine.reports.tables.target_tables import markdown_lines

        click.echo("\n".join(["", *markdown_lines(view.targets)]), file=stream)
