"""``batch-quota sweep SCENARIO --vary PATH=VALUES ...``: replay a scenario against every candidate."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from policy_engine.cli.commands.axis_options import axis_options
from policy_engine.cli.commands.cost_options import cost_options, note_pricing, pricing_or_exit
from policy_engine.cli.commands.shared import (
    EXIT_FINDINGS,
    EXIT_OK,
    LocalWorkers,
    executor_or_exit,
    fail_input,
    python_topologies,
    scenario_or_exit,
)
from policy_engine.foundation.bounds import MAX_GRID
from policy_engine.reports.registry import SWEEP_FORMATS
from policy_engine.simulation.scenarios.workload import Scenario
from policy_engine.sweep.cost_metrics import RunCosts
from policy_engine.sweep.dataset import DatasetError, ResultsDataset, share_pairs
from policy_engine.sweep.expressions import ExpressionError, parse_expression
from policy_engine.sweep.grammar import Axis, VaryError, parse_vary
from policy_engine.sweep.grid import expand, grid_size
from policy_engine.sweep.guarantee_policy import GuaranteePolicy
from policy_engine.sweep.progress import progress_bar
from policy_engine.sweep.run_status import RunStatus
from policy_engine.sweep.runner import run_sweep, scenario_digest
from policy_engine.sweep.subjects import SweepOutput

DEFAULT_OBJECTIVE = "max(wait_p95)"
#: The shell's code for a program ended by Ctrl-C (128 + SIGINT).
EXIT_INTERRUPTED = 130


def axes_or_exit(vary: tuple[str, ...], scenario: Scenario) -> list[Axis]:
    try:
        axes = parse_vary(vary, scenario.topology)
    except VaryError as error:
        fail_input(error.problems)
        raise
    if scenario.profile is None:
        wrong = [f"--vary {axis.path}: only for a scenario whose workload is a profile "
                 f"(workload: {{profile: FILE, days: N}}); {scenario.source} lists its jobs" for axis in axes
                 if axis.kind == "profile"]
        if wrong:
            fail_input(wrong)
    return axes


def interrupted(dataset: ResultsDataset | None, out_dir: str | None, total: int) -> NoReturn:
    """Ctrl-C: say what was kept and how to go on; exit 130 like any program a terminal interrupts."""
    if dataset is not None:
        click.echo(f"interrupted: {len(dataset.written):,} of {total:,} run(s) are in {out_dir}; run the same "
                   "command with --resume to continue", err=True)
    else:
        click.echo("interrupted: no results kept (with --out DIR finished runs are kept and --resume continues)",
                   err=True)
    raise SystemExit(EXIT_INTERRUPTED)


@python_topologies("named by the scenario's topology:")
@click.command("sweep")
@click.argument("scenario", type=click.Path(dir_okay=False))
@axis_options("A field and its values (repeatable): training/QS1.borrow_limit=0,100,-1, "
              "training/QS2.capacity.ml.g5.xlarge=1..4, settings.backfill=false,true, workload.scale=0.8,1.2.")
@click.option("--sample", type=click.IntRange(1, MAX_GRID), metavar="N",
              help=f"Run N candidates drawn from the grid (needed past {MAX_GRID:,} candidates).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --sample.")
@click.option("--scheduler", metavar="ADDRESS",
              help="Run on the Dask cluster at ADDRESS (tcp://HOST:8786); default $DASK_SCHEDULER_ADDRESS, else "
                   "an embedded local cluster with one worker process per core.")
@click.option("--workers", type=LocalWorkers(), metavar="N",
              help="Worker processes of the local cluster; 1 runs in-process.")
@SWEEP_FORMATS.option("output")
@click.option("--out", "out_dir", type=click.Path(file_okay=False),
              help="Stream results to a Parquet dataset in DIR (one part file per batch of finished runs).")
@click.option("--resume", is_flag=True, help="Continue the sweep in --out DIR: finished runs are not run again.")
@click.option("--report", "report_dir", type=click.Path(file_okay=False),
              help="Write DIR/index.html: a chart per varied field and a heatmap for two.")
@click.option("--minimize", metavar="EXPR", help=f"Rank runs by EXPR, smallest first (default {DEFAULT_OBJECTIVE}).")
@click.option("--maximize", metavar="EXPR", help="Rank runs by EXPR, largest first (e.g. cluster_utilisation).")
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True, help="Rows of the text summary.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@cost_options
def command(scenario: str, vary: tuple[str, ...], sample: int | None, seed: int, scheduler: str | None,
            workers: int | None, output: str, out_dir: str | None, resume: bool, report_dir: str | None,
            minimize: str | None, maximize: str | None, top: int, quiet: bool, prices_path: str | None,
            chargeback: str | None, period_text: str | None, guarantee_policy: str,
            allow_python: bool = False) -> None:
    """Replay SCENARIO against every combination of the --vary values (check first, then simulate)."""
    loaded = scenario_or_exit(scenario, allow_python)
    axes = axes_or_exit(vary, loaded)
    if sample is None and grid_size(axes) > MAX_GRID:  # built in memory, a topology per candidate: refused, not run
        fail_input([f"--vary: the grid has {grid_size(axes):,} candidates, more than {MAX_GRID:,}; pass --sample N "
                    "to run N of them drawn at random, or vary fewer values"])
    if minimize and maximize:
        fail_input(["--minimize and --maximize: give one objective to rank by (tune takes several)"])
    if resume and not out_dir:
        fail_input(["--resume needs --out DIR: the dataset of the sweep to continue"])
    pricing = pricing_or_exit(prices_path, chargeback, loaded.topology, [maximize or minimize or DEFAULT_OBJECTIVE],
                              axes, period_text, loaded.settings.start)
    costs = RunCosts(loaded.topology, pricing)
    try:
        objective = parse_expression(maximize or minimize or DEFAULT_OBJECTIVE, loaded.topology, pricing)
    except ExpressionError as error:
        note_pricing(pricing, False)
        fail_input([f"--{'maximize' if maximize else 'minimize'}: {error}"])
        raise
    note_pricing(pricing, objective.reads_bill)
    pairs = share_pairs(loaded.topology, axes)
    dataset = None
    if out_dir:
        manifest = {"scenario": Path(scenario).name, "scenario_sha256": scenario_digest(loaded),
                    "vary": [{"path": a.path, "values": list(a.values)} for a in axes]}
        try:
            dataset = ResultsDataset(Path(out_dir), axes, pairs, manifest, resume)
        except DatasetError as error:
            fail_input([str(error)])
        stale = [record for record in dataset.written.values() if record.status == RunStatus.OK
                 and not (record.costs or {}).get("billable")]
        if stale or any((record.costs or {}).get("billable", {}).get("period") != pricing.period.to_json()
                        for record in dataset.written.values() if (record.costs or {}).get("billable")):
            fail_input([f"--resume {out_dir}: its runs were priced " + (
                "by the environments' capacity, before the bill replaced it (cost, idle_cost, share(X).cost are "
                "now bill, waste_cost, share(X).bill)" if stale else "over another --period")
                + ": run the sweep again into a new --out DIR"])
    candidates = list(expand(axes, sample, seed))
    if sample is not None and sample >= grid_size(axes):
        click.echo(f"note: --sample {sample} covers the whole grid of {grid_size(axes)}: running every candidate",
                   err=True)
    executor = executor_or_exit(scheduler, workers)
    try:
        with executor:
            if not quiet:  # before the bar: a line written under a live bar leaves a piece of the bar behind
                click.echo(f"{len(candidates):,} of {grid_size(axes):,} candidate(s) on {executor.description}",
                           err=True)
                finished = sum(1 for c in candidates if dataset is not None and c.key in dataset.written)
                if finished:
                    click.echo(f"resuming: {finished:,} run(s) already in {out_dir}, "
                               f"{len(candidates) - finished:,} to run", err=True)
            with progress_bar("sweep", not quiet) as update:
                try:
                    records = run_sweep(loaded, axes, candidates, executor, dataset, update, period=pricing.period,
                                        guarantees=GuaranteePolicy(guarantee_policy))
                except OSError as error:
                    fail_input([f"{out_dir}: cannot write results: {error.strerror or error}"])
                    raise
                except Exception as error:  # the cluster itself failed (a task's worker died too often, scheduler gone)
                    kept = f"; the finished runs are in {out_dir}: --resume continues" if out_dir else ""
                    fail_input([f"the Dask cluster failed: {type(error).__name__}: {error}{kept}"])
                    raise
    except KeyboardInterrupt:
        interrupted(dataset, out_dir, len(candidates))
    if report_dir:
        from policy_engine.reports.page.sweep_report import write_sweep_report

        try:
            page = write_sweep_report(records, axes, objective, Path(report_dir), source=scenario, costs=costs,
                                      maximize=bool(maximize))
        except OSError as error:
            fail_input([f"{report_dir}: cannot write the report: {error.strerror or error}"])
            raise
        click.echo(f"wrote {page}", err=True)
    SWEEP_FORMATS.renderer(output)(SweepOutput(records, axes, pairs, objective, bool(maximize), top, out_dir, costs),
                                   sys.stdout)
    raise SystemExit(EXIT_FINDINGS if any(r.status == RunStatus.ERROR for r in records) else EXIT_OK)
