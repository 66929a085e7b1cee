"""``batch-quota simulate SCENARIO``: replay a workload against a topology and report what happened."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TextIO

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from policy_engine.cli.commands.cost_options import convention, cost_options, period_or_exit, prices_or_exit
from policy_engine.cli.commands.sample_options import sample_seed_or_exit, samples_option, seed_option
from policy_engine.cli.commands.shared import (
    EXIT_FINDINGS,
    DurationRange,
    LocalWorkers,
    SafePath,
    executor_or_exit,
    fail_input,
    keep_until_exit,
    python_topologies,
    scenario_or_exit,
)
from policy_engine.foundation.bounds import MAX_INSTANT_SECONDS, PastTheLastInstant
from policy_engine.foundation.output_files import open_output
from policy_engine.inputs.input_files import refuse_overwriting_inputs
from policy_engine.reports.kit.safe_text import visible
from policy_engine.reports.kit.subjects import SimulateOutput
from policy_engine.reports.registry import SIMULATE_FORMATS
from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.core.preemption import POLICIES
from policy_engine.simulation.gcpause import gc_paused
from policy_engine.simulation.results.lending import ATTRIBUTIONS, DEFAULT_ATTRIBUTION
from policy_engine.simulation.results.numbers import as_number
from policy_engine.simulation.results.records import SimulationResult, build_result
from policy_engine.simulation.results.targets import TargetResult, evaluate_targets
from policy_engine.simulation.results.wait_causes import WaitCauses, attribute
from policy_engine.simulation.results.wait_orders import DEFAULT_ORDER, ORDERS
from policy_engine.simulation.scenarios.samples import recorded
from policy_engine.simulation.scenarios.workload import MAX_SECONDS

if TYPE_CHECKING:
    from policy_engine.comparison.runs import DesignRun
    from policy_engine.foundation.model import Topology
    from policy_engine.simulation.causes import Reason
    from policy_engine.simulation.core.jobs import Job
    from policy_engine.simulation.results.billable import Period
    from policy_engine.simulation.results.costs import CostReport
    from policy_engine.simulation.results.plan_account import PlanAccount
    from policy_engine.simulation.results.sampled_types import SampledTypeUsage
    from policy_engine.simulation.scenarios.workload import Scenario

#: Show a progress bar for workloads at least this large (and only on a terminal).
PROGRESS_MIN_JOBS = 10_000


@dataclass(frozen=True)
class CostChoice:
    """What the cost options ask for: ``wanted`` adds the tables to every format."""

    wanted: bool
    prices: str | None
    chargeback: str | None
    attribution: str
    period: str | None = None  # ``--period START..END``


#: ``--event-format``: the simulator's own state changes, or the EventBridge events AWS would send.
EVENT_FORMATS = ("changes", "eventbridge")


def _event_writer(handle: TextIO) -> Callable[[float, Job, str, str, str], None]:

    def write(time: float, job: Job, before: str, after: str, reason: str) -> None:
        handle.write(json.dumps({"time": as_number(time), "job": job.spec.name, "from": before, "to": after,
                                 "reason": reason}, allow_nan=False))
        handle.write("\n")

    return write


def _eventbridge_writer(handle: TextIO) -> Callable[[float, Job, str, str, Reason], None]:
    """The events ``serve --events`` sends for the same changes (simulated second 0 is the Unix epoch), from the
    engine's named causes (``on_reason``), worded as the endpoint words them."""
    from policy_engine.adapters.endpoint.base.status_reasons import status_reason
    from policy_engine.events.service_events import EventFactory, SimulatedJobs

    factory = EventFactory()
    jobs = SimulatedJobs()

    def write(time: float, job: Job, before: str, after: str, reason: Reason) -> None:
        if time > MAX_INSTANT_SECONDS:  # an event's time is a date: refused, never a year-10000 traceback
            raise PastTheLastInstant(time, "--event-format eventbridge")
        worded = status_reason(after, reason, str)
        for event in factory.for_change(jobs.ms(time), jobs.job_arn(job.spec.name), before, after, reason,
                                        lambda: jobs.describe(job, worded)):
            handle.write(json.dumps(event, separators=(",", ":"), allow_nan=False))
            handle.write("\n")

    return write


def _write_report(result: SimulationResult, topology: Topology, directory: str, source: str, share: str | None,
                  window: tuple[float, float] | None, costs: CostReport | None,
                  waits: WaitCauses | None = None, targets: Sequence[TargetResult] = (),
                  plan_account: PlanAccount | None = None, sample: str = "") -> None:
    """``--report DIR``; imported here so that plain runs never load matplotlib. ``sample``: which workload
    sample it draws (``--samples N``)."""
    from pathlib import Path

    from policy_engine.reports.page.html_report import write_report

    try:
        written = write_report(result, topology, Path(directory), source=source, share=share, window=window,
                               costs=costs, waits=waits, targets=targets, plan_account=plan_account,
                               sample=sample)
    except OSError as error:
        fail_input([f"{directory}: cannot write the report: {error.strerror or error}"])
    click.echo(f"wrote {written[0]} and {len(written) - 1} summary chart(s): "
               f"{', '.join(path.name for path in written[1:])}", err=True)


def _report_choice(topology: Topology, report_dir: str | None, share: str | None, window: str | None
                   ) -> tuple[str | None, tuple[float, float] | None, list[str]]:
    """``--report-share`` as a canonical ``QUEUE/SHARE`` and ``--report-window FROM:TO`` as seconds; problems listed."""
    problems: list[str] = []
    canonical: str | None = None
    parsed: tuple[float, float] | None = None
    if (share is not None or window is not None) and not report_dir:
        problems.append("--report-share/--report-window: they choose what the HTML report draws; add --report DIR")
    if share is not None:
        match = topology.find_share(share)
        if match.share_id is not None:
            canonical = match.share_id
        else:
            problems.append(f"--report-share: {match.error}")
    if window is not None:
        start, sep, end = window.partition(":")
        try:
            parsed = (float(start), float(end)) if sep else None
        except ValueError:
            parsed = None
        if parsed is None or not (0 <= parsed[0] < parsed[1] < float("inf")):
            problems.append(f"--report-window {window}: expected FROM:TO in seconds with 0 <= FROM < TO "
                            "(e.g. 86400:172800)")
            parsed = None
    return canonical, parsed, problems


def _warn_inert_time_limit_actions(topology: Topology) -> None:
    """An action naming a reason AWS does not accept (rule BQ115) never matches a job: say so, not a silent hang."""
    from policy_engine.analysis.rules import REGISTRY, Context

    for finding in REGISTRY["BQ115"].run(Context(topology)):
        click.echo(visible(f"warning: {finding.object}: {finding.message}; the simulator never fires it (AWS would "
                           f"refuse the queue: {finding.rule})"), err=True)


@python_topologies("named by the scenario's topology:")
@click.command("simulate")
@click.argument("scenario", type=SafePath(dir_okay=False))
@click.option("--until", type=DurationRange(min=0, max=MAX_SECONDS), metavar="DURATION",
              help="Stop the clock at DURATION (30d, 12h, 90m, 3600s or seconds) and report that instant, also "
                   "after the run has ended: utilisation is then time-weighted over [0, DURATION], idle time after "
                   "the end included.")
@SIMULATE_FORMATS.option("output")
@click.option("--report", "report_dir", type=SafePath(file_okay=False),
              help="Also write DIR/index.html (interactive, self-contained, opens offline) and summary PNGs beside it.")
@click.option("--report-share", metavar="QUEUE/SHARE",
              help="Per-job timeline of this share in the report (large runs draw none by default).")
@click.option("--report-window", metavar="FROM:TO",
              help="Per-job timeline of the jobs alive between FROM and TO seconds in the report.")
@click.option("--events", type=SafePath(dir_okay=False, writable=True), help="Write every state change (JSON Lines).")
@click.option("--event-format", type=click.Choice(EVENT_FORMATS), default=None,
              help="What --events writes: the simulator's state changes (changes, the default) or the EventBridge "
                   "events AWS sends for service jobs (eventbridge), to test an alerting rule offline.")
@click.option("--backfill/--no-backfill", default=None, help="Let jobs behind a blocked head use capacity it cannot.")
@click.option("--victim-policy", type=click.Choice(sorted(POLICIES)), help="Override the scenario's victim policy.")
@click.option("--wait-attribution", type=click.Choice(sorted(ORDERS)), default=DEFAULT_ORDER, show_default=True,
              help="Which cause a waiting second is charged to when several hold (the \"why jobs waited\" tables; "
                   "docs/simulator.md).")
@click.option("--wait-causes/--no-wait-causes", default=True, show_default=True,
              help="Charge every waiting second to a cause after the run (the \"why jobs waited\" tables, JSON "
                   "wait_causes, the report's chart); off saves its time on a million-job run.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option("--scheduler", metavar="ADDRESS",
              help="Simulate the job queues in parallel on the Dask cluster at ADDRESS (tcp://HOST:8786); "
                   "the output is the same as a sequential run.")
@click.option("--workers", type=LocalWorkers(), metavar="N",
              help="Simulate the job queues in parallel on a local Dask cluster of N worker processes.")
@click.option("--fail-on-target", is_flag=True,
              help="Exit 1 when the run misses one of the topology's targets (0 when every one is met).")
@click.option("--costs", "with_costs", is_flag=True,
              help="Add the bill, who pays and waste (in instance-hours; the bill with --prices, which implies it).")
@cost_options
@click.option("--lending-attribution", type=click.Choice(sorted(ATTRIBUTIONS)), default=None,
              help=f"Whose idle capacity a borrowed instance is, for the lender -> borrower capacity flows, in "
                   f"instance-hours (never money: a borrower's jobs are billed to it; default {DEFAULT_ATTRIBUTION}: "
                   "in proportion to each lender's idle capacity; docs/costs.md).")
@samples_option("each share's figures are the medians across the samples with their p10-p90, the bill too; the "
                "jobs, --events, --report, the cost tables and the targets are sample 1's. --scheduler/--workers "
                "then run the samples (not the job queues) in parallel; by default in-process when that is sooner "
                "(docs/compare.md).")
@seed_option
def command(scenario: str, until: float | None, output: str, events: str | None, event_format: str | None,
            backfill: bool | None, victim_policy: str | None, wait_attribution: str, wait_causes: bool, quiet: bool,
            report_dir: str | None, report_share: str | None, report_window: str | None, scheduler: str | None,
            workers: int | None, allow_python: bool, with_costs: bool, prices_path: str | None,
            chargeback: str | None, period_text: str | None, lending_attribution: str | None,
            fail_on_target: bool, samples: int = 1, seed: int | None = None) -> None:
    """Replay SCENARIO (YAML: topology, jobs, actions) through the quota scheduler model.

    With --costs, --prices, --chargeback, --period or --lending-attribution, the report adds what AWS would
    bill for the run, who pays and what was wasted (docs/costs.md); the HTML report (--report) always has that
    section.

    Exit 0; 1 with --fail-on-target when a target of the topology is missed; 2 on bad input.
    """
    if event_format is not None and not events:
        fail_input([f"--event-format {event_format}: it chooses what --events writes; add --events FILE"])
    # one pause of the cyclic collector over loading, simulating and writing: between separately paused
    # phases, its first collection would walk the million jobs just built (nothing here forms a cycle)
    with gc_paused():
        costs = CostChoice(with_costs or any(v is not None for v in (prices_path, chargeback, lending_attribution,
                                                                     period_text)),
                           prices_path, chargeback, lending_attribution or DEFAULT_ATTRIBUTION, period_text)
        missed = _simulate(scenario, until, output, events, event_format or "changes", backfill, victim_policy,
                           quiet, report_dir, report_share, report_window, scheduler, workers, allow_python, costs,
                           wait_attribution if wait_causes else None, fail_on_target, samples, seed)
    if fail_on_target and missed:
        click.echo(f"--fail-on-target: {missed} target criterion/criteria missed (the targets table says which and "
                   "by how much)", err=True)
        raise SystemExit(EXIT_FINDINGS)


def _simulate(scenario: str, until: float | None, output: str, events: str | None, event_format: str,
              backfill: bool | None, victim_policy: str | None, quiet: bool, report_dir: str | None,
              report_share: str | None, report_window: str | None, scheduler: str | None, workers: int | None,
              allow_python: bool, costs: CostChoice, wait_attribution: str | None = DEFAULT_ORDER,
              fail_on_target: bool = False, samples: int = 1, seed: int | None = None) -> int:
    """Run and report; returns how many target criteria the run missed. ``wait_attribution``: the order the
    waits are attributed in, ``None`` for no attribution."""
    loaded = scenario_or_exit(scenario, allow_python)
    if fail_on_target and not loaded.topology.targets:  # a pass that judged nothing is said, never silent
        click.echo(f"note: --fail-on-target: {scenario}'s topology declares no targets, so none can be missed",
                   err=True)
    prices = prices_or_exit(costs.prices, [loaded.topology])
    period = period_or_exit(costs.period, loaded.settings.start)
    overwritten = refuse_overwriting_inputs({"--events": events, "--report": report_dir},
                                            [scenario, *loaded.inputs, *([costs.prices] if costs.prices else [])])
    if overwritten:
        fail_input(overwritten)
    chosen_share, chosen_window, problems = _report_choice(loaded.topology, report_dir, report_share, report_window)
    if problems:
        fail_input(problems)
    _warn_inert_time_limit_actions(loaded.topology)
    for ref, count in sorted(loaded.on_demand_jobs.items()):
        click.echo(visible(f"note: {count:,} job(s) name training plan {ref}, run on demand (the scenario's "
                           "on_demand_plans: its plan is not in the topology)"), err=True)
    settings = loaded.settings
    if backfill is not None:
        settings = replace(settings, backfill=backfill)
    if victim_policy is not None:
        settings = replace(settings, victim_policy=victim_policy)
    if report_dir or costs.wanted or wait_attribution is not None:
        # the report's charts over time, the lending flows and the "why jobs waited" attribution are built from it
        settings = replace(settings, usage_log=True)
    loaded = replace(loaded, settings=settings)
    if until is None:
        until = loaded.until  # a history's replay stops where its window ended
    first_seed = sample_seed_or_exit(loaded, samples, seed)
    sampled = loaded
    if samples > 1:  # the first sample runs here as a run without samples would; the others after it
        from policy_engine.simulation.scenarios.samples import sample_for, sample_one

        loaded = replace(loaded, jobs=list(sample_for(sampled, 0, first_seed)))
        shown = " and ".join(name for name, given in (("--events", events), ("--report", report_dir)) if given)
        if shown:
            verb = "show" if events and report_dir else "shows"
            click.echo(f"note: {shown} {verb} {sample_one(recorded(sampled), samples, first_seed)}; the shares' and "
                       "instance types' figures are the medians across all of them", err=True)
        result = _sequential(loaded, until, events, quiet, event_format)
    elif scheduler or workers is not None:
        result = _parallel(loaded, until, events, scheduler, workers)
    else:
        result = _sequential(loaded, until, events, quiet, event_format)
        keep_until_exit(loaded, result)  # one process, no cluster: it ends without freeing them (about 1.3 s at 1M)
    cost_report = None
    if costs.wanted or report_dir:
        from policy_engine.simulation.results.costs import run_costs

        cost_report = run_costs(result, loaded.topology, prices, convention(costs.chargeback), costs.attribution,
                                period)
    waits = attribute(result, loaded.topology, wait_attribution) if wait_attribution is not None else None
    if not (scheduler or workers is not None):
        keep_until_exit(waits, cost_report)
    targets = tuple(evaluate_targets(loaded.topology, result))
    plan_account = None
    if result.plans is not None:  # every reserved hour accounted for (after the run, never on its hot path)
        from policy_engine.simulation.results.plan_account import account

        plan_account = account(result, loaded.topology)
    if report_dir:
        from policy_engine.simulation.scenarios.samples import sample_one

        _write_report(result, loaded.topology, report_dir, scenario, chosen_share, chosen_window, cost_report,
                      waits, targets, plan_account,
                      sample_one(recorded(sampled), samples, first_seed) if samples > 1 else "")
    calibration = None
    if loaded.observed:
        from policy_engine.simulation.results.calibration import calibrate

        calibration = calibrate(result, loaded.observed)
    sample_jobs: tuple[int, ...] = ()
    sample_types: tuple[SampledTypeUsage, ...] = ()
    bill_spread = None
    if samples > 1:  # each share's and type's figures: the medians across the samples, with their spreads
        from policy_engine.simulation.results.sampled_shares import sampled_shares
        from policy_engine.simulation.results.sampled_types import sampled_types

        others = _other_samples(sampled, until, samples, first_seed, scheduler, workers, period)
        sample_jobs = (len(loaded.jobs), *(run.jobs for run in others))
        sample_types = sampled_types([result.summary, *(run.summary for run in others)])
        result = replace(result, shares=sampled_shares([result.shares, *(run.shares for run in others)]))
        if cost_report is not None and costs.wanted and cost_report.priced:  # each sample's bill, priced here
            from policy_engine.simulation.results.costs import bill_spreads
            from policy_engine.simulation.results.costs import cost_report as priced

            bill_spread = bill_spreads([cost_report, *(
                priced(run.billable, run.hours, loaded.topology, prices, convention(costs.chargeback))
                for run in others if run.billable is not None and run.hours is not None)])
    SIMULATE_FORMATS.renderer(output)(SimulateOutput(result, scenario, calibration, loaded.topology.named_at_deploy,
                                                     cost_report if costs.wanted else None, waits,
                                                     targets=targets, plan_account=plan_account,
                                                     topology=loaded.topology, samples=samples, seed=first_seed,
                                                     sample_jobs=sample_jobs, sample_types=sample_types,
                                                     recorded=recorded(sampled), bill_spread=bill_spread), sys.stdout)
    return sum(1 for target in targets if not target.met)


def _other_samples(scenario: Scenario, until: float | None, samples: int, seed: int, scheduler: str | None,
                   workers: int | None, period: Period) -> list[DesignRun]:
    """Samples 2..N on the sweeps' executor (each drawn by its worker), in sample order: each one's jobs, per-share
    figures, summary (its per-type figures) and billable ledger over ``period``. In-process unless asked, or unless
    a local cluster pays for its start (``compare``'s rule)."""
    import os

    from policy_engine.comparison.designs import Design
    from policy_engine.comparison.parallel import local_workers, runs_in_process
    from policy_engine.comparison.runs import Workload, run_design
    from policy_engine.sweep.executor import SCHEDULER_ENV, DaskExecutor, usable_cores

    if scheduler is None and workers is None and not os.environ.get(SCHEDULER_ENV):
        small = runs_in_process(len(scenario.jobs), samples - 1, usable_cores())
        workers = 1 if small else local_workers(samples - 1, usable_cores())
    executor = executor_or_exit(scheduler, workers)
    design = Design(scenario.source, scenario.source, scenario.topology)
    quiet = replace(scenario, settings=replace(scenario.settings, usage_log=False))
    with executor, gc_paused():
        try:
            runs = sorted(executor.map(run_design, Workload(quiet, until, period=period, samples=samples, seed=seed),
                                       [(0, design, sample) for sample in range(1, samples)]),
                          key=lambda run: run.sample)
        except Exception as error:  # the cluster itself failed (a worker died too often, the scheduler is gone)
            if not isinstance(executor, DaskExecutor):
                raise
            fail_input([f"the Dask cluster failed: {type(error).__name__}: {error}"])
    return runs


def _parallel(loaded: Scenario, until: float | None, events: str | None, scheduler: str | None,
              workers: int | None) -> SimulationResult:
    """The job queues on a Dask cluster (or in-process with ``--workers 1``), merged."""
    from policy_engine.sweep.split import MergeError, partition, simulate_parallel

    if events:
        fail_input(["--events writes one stream in event order: run without --scheduler/--workers"])
    parts = partition(loaded.topology)
    if parts is None or len(parts) < 2:  # one part: nothing to run in parallel
        click.echo("note: one job queue (with its service environment) only: nothing to run in parallel, "
                   "simulating here", err=True)
        return _sequential(loaded, until, None, True)
    executor = executor_or_exit(scheduler, workers)
    with executor:
        try:
            return simulate_parallel(loaded, executor, until)
        except MergeError as error:
            fail_input([str(error)])


def _sequential(loaded: Scenario, until: float | None, events: str | None, quiet: bool,
                event_format: str = "changes") -> SimulationResult:
    engine = Engine(loaded.topology, loaded.jobs, loaded.updates, loaded.settings, loaded.live)
    with ExitStack() as stack:
        if events:
            try:
                handle = open_output(events)  # a FIFO nobody reads is refused, never waited on
            except OSError as error:
                fail_input([f"{events}: cannot write events file: {error.strerror or error}"])
            stack.callback(_close_quietly, handle)  # on the way out after a failure already said
            if event_format == "eventbridge":
                engine.on_reason = _eventbridge_writer(handle)
            else:
                engine.on_transition = _event_writer(handle)
        progress = None
        if not quiet and sys.stderr.isatty() and len(loaded.jobs) >= PROGRESS_MIN_JOBS:
            bar = stack.enter_context(Progress(TextColumn("simulating"), BarColumn(), MofNCompleteColumn(),
                                               TimeElapsedColumn(), console=Console(stderr=True), transient=True))
            task = bar.add_task("jobs", total=len(loaded.jobs))

            def progress(submitted: int) -> None:
                bar.update(task, completed=submitted)

        try:
            engine.run(until, progress)
        except OSError as error:  # only the events file is written while the engine runs
            fail_input([f"{events}: cannot write events file: {error.strerror or error}"])
        except PastTheLastInstant as error:
            fail_input([f"{events}: {error}"])
        if events:
            try:
                handle.close()  # the last lines reach the file (or fail) here, and are said
            except OSError as error:
                fail_input([f"{events}: cannot write events file: {error.strerror or error}"])
    return build_result(engine)


def _close_quietly(handle: TextIO) -> None:
    """Close an events file whose failure was already reported: a second flush error is not a second problem."""
    with contextlib.suppress(OSError):
        handle.close()
