"""``batch-quota compare SCENARIO --topology A.yaml --topology B.yaml`` (or ``compare S1.yaml S2.yaml``): designs
side by side on one workload.

Each design runs from time 0 on the same jobs, actions and settings, in parallel on the executor the sweeps use
(a local Dask cluster, ``--workers``, ``--scheduler``); the report gives, per share and instance type, each
design's waits, preemptions and utilisation and each later design's difference from the first, utilisation per
instance type, each share's cost (its chargeback, priced with ``--prices``, else in instance-hours), and the
targets met. Exit 0; 1 with ``--fail-on-target`` when the last design misses a target;
2 on bad input.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

import click

from policy_engine.cli.commands.cost_options import convention, cost_options, period_or_exit, prices_or_exit
from policy_engine.cli.commands.sample_options import sample_seed_or_exit, samples_option, seed_option
from policy_engine.cli.commands.shared import (
    EXIT_FINDINGS,
    EXIT_OK,
    DurationRange,
    LocalWorkers,
    SafePath,
    executor_or_exit,
    fail_input,
    python_topologies,
)
from policy_engine.comparison.parallel import IN_PROCESS_JOB_RUNS, SAMPLE_DRAW_JOB_RUNS
from policy_engine.inputs.loading import LoadError
from policy_engine.reports.registry import COMPARE_FORMATS
from policy_engine.simulation.scenarios.workload import MAX_SECONDS

if TYPE_CHECKING:
    from policy_engine.comparison.designs import Design
    from policy_engine.comparison.runs import DesignRun
    from policy_engine.simulation.results.billable import Period
    from policy_engine.simulation.scenarios.workload import Scenario


@python_topologies("given as a design (--topology, or a scenario's topology:)")
@click.command("compare")
@click.argument("scenarios", nargs=-1, required=True, type=SafePath(dir_okay=False))
@click.option("--topology", "topologies", multiple=True, type=SafePath(dir_okay=False), metavar="FILE",
              help="A design to run on SCENARIO's workload (repeatable, at least two; the scenario's own topology "
                   "is then not run). Without it, give two or more scenarios that share one workload.")
@click.option("--rename", "renames", multiple=True, metavar="OLD=NEW",
              help="As in diff: what a share (QUEUE/SHARE=QUEUE/SHARE), queue or environment of the first design is "
                   "called in the later ones (repeatable); the workload's jobs are renamed for them.")
@COMPARE_FORMATS.option("output")
@click.option("--report", "report_dir", type=SafePath(file_okay=False),
              help="Also write DIR/index.html: every design over time and the per-share differences (offline).")
@click.option("--fail-on-target", is_flag=True, help="Exit 1 when the last design misses one of its targets.")
@click.option("--until", type=DurationRange(min=0, max=MAX_SECONDS, min_open=True), metavar="DURATION",
              help="Stop every run's clock at DURATION (30d, 12h, 90m, 3600s or seconds; default: when the workload "
                   "is done).")
@click.option("--scheduler", metavar="ADDRESS",
              help="Run the designs on the Dask cluster at ADDRESS (tcp://HOST:8786); default "
                   "$DASK_SCHEDULER_ADDRESS, else a local cluster with one worker process per design (up to the "
                   "cores), or in this process when that is sooner: one core, or a small comparison (the designs "
                   f"beyond the first round times the jobs at most {IN_PROCESS_JOB_RUNS:,}, with --samples N also "
                   f"{SAMPLE_DRAW_JOB_RUNS:g} x N x the jobs; docs/compare.md).")
@click.option("--workers", type=LocalWorkers(), metavar="N",
              help="Run on a local cluster of N worker processes, whatever the size; 1 runs the designs one after "
                   "another in-process.")
@cost_options
@samples_option("each figure is the median with its p10-p90; every design runs on the same samples and each "
                "difference is paired (sample by sample) and shown only when significant (its p10-p90 excludes 0); "
                "the runs' summaries, bills and --report show sample 1.")
@seed_option
def command(scenarios: tuple[str, ...], topologies: tuple[str, ...], renames: tuple[str, ...], output: str,
            report_dir: str | None, fail_on_target: bool, until: float | None, scheduler: str | None,
            workers: int | None, allow_python: bool, prices_path: str | None, chargeback: str | None,
            period_text: str | None, samples: int = 1, seed: int | None = None) -> None:
    """Run each design from time 0 on one workload and report them side by side, per share."""
    from policy_engine.comparison import designs as chosen
    from policy_engine.inputs.input_files import refuse_overwriting_inputs

    if topologies and len(scenarios) > 1:
        fail_input([f"--topology runs designs on one scenario's workload; {len(scenarios)} scenarios given "
                    "(give one scenario with --topology per design, or scenarios only)"])
    if (len(topologies) if topologies else len(scenarios)) < 2:
        fail_input(["compare needs at least two designs: --topology A.yaml --topology B.yaml, or two scenarios"])
    try:
        if topologies:
            scenario, designs = chosen.from_topologies(scenarios[0], topologies, renames, allow_python)
        else:
            scenario, designs = chosen.from_scenarios(scenarios, renames, allow_python)
    except LoadError as error:
        fail_input(error.problems)
    overwritten = refuse_overwriting_inputs({"--report": report_dir}, [*scenarios, *topologies, *scenario.inputs,
                                                                     *([prices_path] if prices_path else [])])
    if overwritten:
        fail_input(overwritten)
    prices = prices_or_exit(prices_path, [design.topology for design in designs])  # before any run
    period = period_or_exit(period_text, scenario.settings.start)
    first_seed = sample_seed_or_exit(scenario, samples, seed)
    runs, description = run_designs(scenario, designs, until, bool(report_dir), scheduler, workers, period,
                                    samples=samples, seed=first_seed)
    from policy_engine.comparison.subjects import build, build_sampled
    from policy_engine.simulation.scenarios.samples import recorded

    if samples > 1:
        built = build_sampled(scenarios[0], runs, designs, description, prices, convention(chargeback), period,
                              first_seed, recorded(scenario))
    else:
        built = build(scenarios[0], len(scenario.jobs), runs, designs, description, prices, convention(chargeback),
                      period)
    result = replace(built, until=until)
    if report_dir:
        from pathlib import Path

        from policy_engine.reports.compare.html import write_page

        try:
            page = write_page(result, Path(report_dir))
        except OSError as error:
            fail_input([f"{report_dir}: cannot write the report: {error.strerror or error}"])
        click.echo(f"wrote {page}", err=True)
    COMPARE_FORMATS.renderer(output)(result, sys.stdout)
    if fail_on_target and not result.runs[-1].targets:  # a pass that judged nothing is said, never silent
        last = result.runs[-1]
        click.echo(f"note: --fail-on-target: the last design, {last.label} ({last.source}), declares no targets, "
                   "so none can be missed", err=True)
    if fail_on_target and result.last_misses():  # the exit says a target was missed; this line says which
        from policy_engine.reports.tables.target_tables import summary_line

        last = result.runs[-1]
        click.echo(f"--fail-on-target: the last design, {last.label} ({last.source}), "
                   f"{summary_line(last.targets).removeprefix('targets: ')}", err=True)
    raise SystemExit(EXIT_FINDINGS if fail_on_target and result.last_misses() else EXIT_OK)


def run_designs(scenario: Scenario, designs: list[Design], until: float | None, over_time: bool, scheduler: str | None,
         workers: int | None, period: Period | None = None, *, samples: int = 1, seed: int = 0
                ) -> tuple[list[DesignRun], str]:
    """Every design on the executor, back in design order, and where they ran (``explain``'s replays too). With
    ``samples`` above 1, every design on every workload sample (one task each, the sample drawn by the worker),
    back in sample then design order. Their time-weighted figures are over one window per sample, from 0 to the
    latest end among the designs (``comparison.runs.over_common_window``)."""
    from policy_engine.comparison.parallel import local_workers, runs_in_process
    from policy_engine.comparison.runs import Workload, over_common_window, run_design
    from policy_engine.simulation.gcpause import gc_paused
    from policy_engine.simulation.results.billable import Period
    from policy_engine.sweep.executor import SCHEDULER_ENV, DaskExecutor, usable_cores

    chosen = scheduler is None and workers is None and not os.environ.get(SCHEDULER_ENV)
    small = False
    if chosen:  # nothing says where: in-process when a local cluster would not pay for its start
        jobs = len(scenario.jobs) + len(scenario.live or ())
        small = runs_in_process(jobs, len(designs) * samples, usable_cores(), samples)
        workers = 1 if small else local_workers(len(designs) * samples, usable_cores())
    executor = executor_or_exit(scheduler, workers)
    if small and len(designs) * samples > 1 and usable_cores() > 1:
        executor.description = ("in-process: a small comparison, done before a local cluster would have started; "
                                "--workers N runs it on one")
    with executor, gc_paused():
        try:
            workload = Workload(scenario, until, over_time, period or Period(), samples, seed)
            tasks = [(index, design, sample) for sample in range(samples) for index, design in enumerate(designs)]
            runs = sorted(executor.map(run_design, workload, tasks), key=lambda run: (run.sample, run.index))
        except Exception as error:  # the cluster itself failed (a worker died too often, the scheduler is gone)
            if not isinstance(executor, DaskExecutor):
                raise
            fail_input([f"the Dask cluster failed: {type(error).__name__}: {error}"])
        return over_common_window(runs), executor.description
