"""``batch-quota diff BASE HEAD``: what a topology change does, for the pull request that makes it.

BASE and HEAD are files, ``REF:PATH`` read from git, or ``/dev/null``. Exit 0 when nothing got
worse, 1 when a guarantee was lost, a declared guarantee weakened or dropped (unless a suppression of
BQ501/BQ502 in HEAD accepts it), a finding was added or a deploy hazard found (``--fail-on``), 2 on
bad input.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NoReturn

import click

from policy_engine.changes.report import FAIL_ON
from policy_engine.cli.commands.cost_options import convention, cost_options, note_unused, period_or_exit
from policy_engine.cli.commands.sample_options import sample_seed_or_exit, samples_option, seed_option
from policy_engine.cli.commands.shared import (
    EXIT_FINDINGS,
    EXIT_OK,
    FiniteFloatRange,
    LocalWorkers,
    fail_input,
    python_topologies,
)
from policy_engine.inputs.loading import LoadError
from policy_engine.reports.kit.subjects import DiffLoadFailure, DiffOutput
from policy_engine.reports.registry import DIFF_FORMATS
from policy_engine.simulation.scenarios.workload import MAX_SECONDS

if TYPE_CHECKING:
    from policy_engine.changes.impact import Impact

_FAIL_ON = (*FAIL_ON, "never")


def _load_failure(output_format: str, problems: list[str], base: str, head: str) -> NoReturn:
    """CI reads stdout: a document saying the inputs did not load, then the usual lines on stderr, exit 2."""
    write = DIFF_FORMATS.renderer(output_format).load_failure
    if write is not None:
        write(DiffLoadFailure(problems, base, head), sys.stdout)
    fail_input(problems)


@python_topologies("read from git (REF:PATH: another revision's code) or named by the --scenario's topology:")
@click.command("diff")
@click.argument("base")
@click.argument("head")
@click.option("--rename", "renames", multiple=True, metavar="OLD=NEW",
              help="Declare a rename (repeatable): QUEUE/SHARE=QUEUE/SHARE for a share (or a move between "
                   "queues), NAME=NAME for a job queue or service environment. Renames are never guessed.")
@DIFF_FORMATS.option()
@click.option("--fail-on", "fail_on", multiple=True, type=click.Choice(_FAIL_ON),
              help="What makes the exit code 1 (repeatable; default: all of guarantee (a proof lost), "
                   "guarantee-weakened, guarantee-dropped (a declared promise lowered or removed), finding and "
                   "hazard; never: always 0 unless the input is bad).")
@click.option("--scenario", type=click.Path(dir_okay=False), default=None,
              help="Replay this scenario's jobs on BASE and apply HEAD at --at: jobs preempted, waits, hours lost.")
@click.option("--at", "at", type=FiniteFloatRange(min=0, max=MAX_SECONDS), default=None, metavar="SECONDS",
              help="When HEAD is deployed in the --scenario replay (default 0).")
@cost_options
@samples_option("each figure is the median with its p10-p90, each per-share difference is paired (without and "
                "with the change on the same sample) and said only when significant (its p10-p90 excludes 0), the "
                "bill and instance-hours lost too; the jobs listed, the notes and the cost reports are sample 1's. "
                "Needs --scenario.")
@seed_option
@click.option("--scheduler", metavar="ADDRESS",
              help="With --samples: replay the samples on the Dask cluster at ADDRESS (tcp://HOST:8786); default "
                   "$DASK_SCHEDULER_ADDRESS, else a local cluster, or in this process when that is sooner "
                   "(docs/compare.md).")
@click.option("--workers", type=LocalWorkers(), metavar="N",
              help="With --samples: replay them on a local cluster of N worker processes; 1 runs them here.")
def command(base: str, head: str, renames: tuple[str, ...], output_format: str, fail_on: tuple[str, ...],
            scenario: str | None, at: float | None, prices_path: str | None, chargeback: str | None,
            period_text: str | None, allow_python: bool = False, samples: int = 1, seed: int | None = None,
            scheduler: str | None = None, workers: int | None = None) -> None:
    """What changes from BASE to HEAD: per team, per guarantee, per finding, and what a deploy replaces."""
    from policy_engine.changes.compare import compare
    from policy_engine.changes.sources import load_side
    from policy_engine.inputs.renames import parse_renames

    if "never" in fail_on and len(set(fail_on)) > 1:
        raise click.UsageError("--fail-on never cannot be combined with other --fail-on values")
    if at is not None and scenario is None:
        raise click.UsageError("--at needs --scenario (the workload to replay)")
    if (prices_path or chargeback or period_text) and scenario is None:
        raise click.UsageError("--prices/--chargeback/--period price the --scenario replay: add --scenario")
    if (samples > 1 or seed is not None or scheduler or workers is not None) and scenario is None:
        raise click.UsageError("--samples/--seed/--scheduler/--workers sample the --scenario replay: add --scenario")
    if (scheduler or workers is not None) and samples <= 1:
        raise click.UsageError("--scheduler/--workers run the workload samples: add --samples N (N of at least 2)")
    effective = () if "never" in fail_on else (tuple(dict.fromkeys(fail_on)) or FAIL_ON)
    problems: list[str] = []
    sides = []
    for argument in (base, head):
        try:
            sides.append(load_side(argument, allow_python))
        except LoadError as error:
            problems += error.problems
    if problems:
        _load_failure(output_format, problems, base, head)
    base_side, head_side = sides
    try:
        declared = parse_renames(renames, base_side.topology, head_side.topology)
    except LoadError as error:
        _load_failure(output_format, error.problems, base, head)
    report = compare(base_side.topology, head_side.topology, declared, base_label=base_side.label,
                     head_label=head_side.label, policies=(base_side.policies, head_side.policies))
    if scenario is not None:
        from policy_engine.changes.impact import replay
        from policy_engine.inputs.prices import load_prices
        from policy_engine.simulation.scenarios.workload import load_scenario

        try:
            loaded = load_scenario(scenario, allow_python=allow_python)
            prices = load_prices(prices_path, [base_side.topology, head_side.topology]) if prices_path else None
            period = period_or_exit(period_text, loaded.settings.start)
            first_seed = sample_seed_or_exit(loaded, samples, seed)
            if samples > 1:
                impact = _sampled(_Replay(loaded, base_side.topology, head_side.topology, declared, at or 0.0,
                                          prices, convention(chargeback), period, first_seed), samples,
                                  scheduler, workers)
            else:
                impact = replay(loaded, base_side.topology, head_side.topology, declared, at or 0.0, prices,
                                convention(chargeback), period)
        except LoadError as error:
            _load_failure(output_format, error.problems, base, head)
        if prices is not None:
            note_unused(prices, 2)
        report = report.with_impact(impact)
    DIFF_FORMATS.renderer(output_format).render(DiffOutput(report, effective), sys.stdout)
    raise SystemExit(EXIT_FINDINGS if report.failures(effective) else EXIT_OK)


@dataclass(frozen=True)
class _Replay:
    """What every sample's replay shares (scattered to the workers once)."""

    scenario: Any
    base: Any
    head: Any
    renames: Any
    at: float
    prices: Any
    convention: Any
    period: Any
    seed: int


def _replay_sample(shared: _Replay, sample: int) -> tuple[int, Impact]:
    """One sample's replay, drawn here (on the worker): a task of the sweeps' executor."""
    from policy_engine.changes.impact import replay
    from policy_engine.simulation.scenarios.samples import sample_for

    scenario = replace(shared.scenario, jobs=list(sample_for(shared.scenario, sample, shared.seed)))
    return sample, replay(scenario, shared.base, shared.head, shared.renames, shared.at, shared.prices,
                          shared.convention, shared.period)


def _sampled(shared: _Replay, samples: int, scheduler: str | None, workers: int | None) -> Impact:
    """Every sample's replay on the executor (in-process when a local cluster would not pay for its start, as
    ``compare`` decides), combined (``impact.combine_impacts``)."""
    import os

    from policy_engine.changes.impact import combine_impacts
    from policy_engine.cli.commands.shared import executor_or_exit
    from policy_engine.comparison.parallel import local_workers, runs_in_process
    from policy_engine.sweep.executor import SCHEDULER_ENV, DaskExecutor, usable_cores

    if scheduler is None and workers is None and not os.environ.get(SCHEDULER_ENV):
        # two runs per sample (without and with the change): as many job-runs as compare's designs
        small = runs_in_process(2 * len(shared.scenario.jobs), samples, usable_cores())
        workers = 1 if small else local_workers(samples, usable_cores())
    executor = executor_or_exit(scheduler, workers)
    with executor:
        try:
            found = dict(executor.map(_replay_sample, shared, list(range(samples))))
        except Exception as error:  # the cluster itself failed (a worker died too often, the scheduler is gone)
            if not isinstance(executor, DaskExecutor) or isinstance(error, LoadError):
                raise
            fail_input([f"the Dask cluster failed: {type(error).__name__}: {error}"])
    from policy_engine.simulation.scenarios.samples import recorded

    return combine_impacts([found[sample] for sample in range(samples)], shared.seed, recorded(shared.scenario))
