"""One design's run, as a task of the sweeps' executor: the workload is scattered to the workers once, each
task runs one design from time 0 and sends back only what the reports read (no job records cross processes).

``DesignRun`` holds the per-share metrics, the run's summary, its targets judged, utilisation per instance type
(never summed across types), its capacity ledger (``CapacityHours``: priced on the client, where the prices
are) and, for ``--report``, per-bin series over time and why its jobs waited (``wait_causes.attribute``, per share;
the per-job causes stay on the worker).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from policy_engine.comparison.designs import Design
from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.core.jobs import JobSpec
from policy_engine.simulation.gcpause import gc_paused
from policy_engine.simulation.results.billable import Billable, Period, billable
from policy_engine.simulation.results.capacity_hours import CapacityHours
from policy_engine.simulation.results.metrics import ShareMetrics
from policy_engine.simulation.results.records import build_result
from policy_engine.simulation.results.targets import TargetResult, evaluate_targets
from policy_engine.simulation.results.window import type_utilisation as type_utilisation_over
from policy_engine.simulation.results.window import widened_shares, widened_summary, widened_targets
from policy_engine.simulation.scenarios.workload import Scenario
from policy_engine.simulation.settings import Action
from policy_engine.simulation.topology_changes import EnvironmentUpdate, ShareUpdate

if TYPE_CHECKING:
    import numpy as np

    from policy_engine.simulation.results.records import SimulationResult
    from policy_engine.simulation.results.wait_causes import WaitCauses
    from policy_engine.simulation.view import EngineView


@dataclass(frozen=True)
class Workload:
    """What every design runs: shared by all tasks (scattered once)."""

    scenario: Scenario
    until: float | None = None
    #: ``--report``: keep the usage log and send back per-bin series and the wait causes
    over_time: bool = False
    #: ``--period``: what each run's bill covers (``outputs.billable``; default the whole workload)
    period: Period = field(default_factory=Period)
    #: ``--samples N``: more than 1 runs each design on N workloads drawn from the scenario
    #: (``simulation.scenarios.samples``), each drawn on the worker that runs it; 1 runs the scenario's own jobs
    samples: int = 1
    #: ``--seed``: sample ``n`` is drawn with ``seed + n``
    seed: int = 0


@dataclass(frozen=True)
class OverTime:
    """Per-bin means over the run: instances in use and capacity per instance type, waiting jobs."""

    edges: np.ndarray  # seconds
    used: dict[str, np.ndarray]
    capacity: dict[str, int]
    waiting: np.ndarray


@dataclass(frozen=True)
class DesignRun:
    index: int
    label: str
    source: str
    time: float
    summary: dict[str, Any]
    shares: list[ShareMetrics]
    targets: list[TargetResult]
    #: instance type -> instance-seconds used / capacity-seconds (time-weighted over the run; over the comparison's
    #: window after ``over_common_window``)
    utilisation: dict[str, float]
    #: instance type -> instances in the service environments at the end of the run
    capacity: dict[str, int] = field(default_factory=dict)
    over_time: OverTime | None = None
    #: own use, borrowed, lent and limit per share and type, in instance-hours (what costs are priced from)
    hours: CapacityHours | None = None
    #: ``--report``: each share's waiting seconds by cause (``job_causes`` left empty: no job crosses processes)
    waits: WaitCauses | None = None
    #: what AWS bills, in instance-hours, over the workload's period (what the bill is priced from)
    billable: Billable | None = None
    #: which workload sample it ran on (0: the first, or the scenario's own jobs without ``--samples``)
    sample: int = 0
    #: how many jobs that sample has
    jobs: int = 0


def _renamed_jobs(jobs: Sequence[JobSpec], design: Design) -> Sequence[JobSpec]:
    if not design.shares:
        return jobs
    names = design.shares
    return [job._replace(share=names[job.share]) if job.share in names else job for job in jobs]


def _renamed_actions(actions: Sequence[Action], design: Design) -> list[Action]:
    out: list[Action] = []
    for action in actions:
        if isinstance(action, ShareUpdate):
            action = replace(action, share=design.share(action.share))
        elif isinstance(action, EnvironmentUpdate):
            action = replace(action, name=design.environments.get(action.name, action.name))
        out.append(action)
    return out


def type_utilisation(engine: EngineView) -> tuple[dict[str, float], dict[str, int]]:
    """Per instance type: used instance-seconds over capacity-seconds of every environment, and the capacity."""
    used: defaultdict[str, float] = defaultdict(float)
    environments: dict[str, dict[int, object]] = defaultdict(dict)
    for pool in engine.pools:
        used[pool.instance_type] += pool.used_int
        environments[pool.instance_type][id(pool.env)] = pool.env
    span = engine.now or 0.0
    utilisation, capacity = {}, {}
    for instance_type, envs in environments.items():
        seconds = sum(env.capacity * span + engine.capacity_corrections.get(env, 0.0)  # type: ignore[attr-defined]
                      for env in envs.values())
        utilisation[instance_type] = round(used[instance_type] / seconds, 6) if seconds > 0 else 0.0
        capacity[instance_type] = sum(env.capacity for env in envs.values())  # type: ignore[attr-defined]
    return dict(sorted(utilisation.items())), dict(sorted(capacity.items()))


def _over_time(result: SimulationResult, capacity: dict[str, int]) -> OverTime:
    import numpy as np

    from policy_engine.simulation.results import aggregates as agg

    aggregates = agg.aggregate(result)
    used: dict[str, np.ndarray] = {}
    waiting = np.zeros(len(aggregates.edges) - 1)
    for series in aggregates.series:
        used[series.instance_type] = used.get(series.instance_type, 0) + series.own + series.borrowed
        waiting = waiting + series.depth
    return OverTime(aggregates.edges, dict(sorted(used.items())), capacity, waiting)


#: The last sample drawn in this process: the designs of one sample, run one after another here, draw it once.
_LAST_SAMPLE: dict[tuple[int, int, int], Sequence[JobSpec]] = {}


def sample_jobs(workload: Workload, sample: int) -> Sequence[JobSpec]:
    """The jobs of sample ``sample``: the scenario's own without ``--samples``, else drawn here (on the worker)."""
    scenario = workload.scenario
    if workload.samples <= 1:
        return scenario.jobs
    key = (id(scenario), workload.seed, sample)
    if key not in _LAST_SAMPLE:
        from policy_engine.simulation.scenarios.samples import sample_for

        _LAST_SAMPLE.clear()
        _LAST_SAMPLE[key] = sample_for(scenario, sample, workload.seed)
    return _LAST_SAMPLE[key]


def run_design(workload: Workload, task: tuple[int, Design] | tuple[int, Design, int]) -> DesignRun:
    """Run one design on the shared workload, or on its sample ``task[2]`` (a task of ``sweep.executor``). Only
    the first sample keeps the usage log and the wait causes (``--report`` draws sample 1)."""
    index, design = task[0], task[1]
    sample = task[2] if len(task) > 2 else 0
    scenario = workload.scenario
    over = workload.over_time and sample == 0
    settings = replace(scenario.settings, usage_log=True) if over else scenario.settings
    jobs = sample_jobs(workload, sample)
    with gc_paused():
        engine = Engine(design.topology, _renamed_jobs(jobs, design),
                        _renamed_actions(scenario.updates, design), settings, scenario.live or None)
        engine.run(workload.until if workload.until is not None else scenario.until)
        result = build_result(engine)
        utilisation, capacity = type_utilisation(engine)
        targets = evaluate_targets(design.topology, result)
        over_time = _over_time(result, capacity) if over else None
        waits = _waits(result, design) if over else None
        ledger = billable(result, workload.period)
    return DesignRun(index, design.label, design.source, result.time, result.summary, result.shares, targets,
                     utilisation, capacity, over_time, result.hours, waits, ledger, sample, len(jobs))


def over_common_window(runs: Sequence[DesignRun]) -> list[DesignRun]:
    """The runs with their time-weighted figures over one window per workload sample: from 0 to the latest end
    among the designs run on it (``results.window``), so a design that ends sooner is not credited with a higher
    utilisation; ``summary["window_seconds"]`` says the window."""
    windows: dict[int, float] = {}
    for run in runs:
        windows[run.sample] = max(windows.get(run.sample, 0.0), run.time)
    return [_over_window(run, windows[run.sample]) for run in runs]


def _over_window(run: DesignRun, window: float) -> DesignRun:
    if run.hours is None:
        return run
    shares = widened_shares(run.shares, run.hours, window)
    return replace(run, shares=shares, summary=widened_summary(run.summary, shares, run.hours, window),
                   targets=widened_targets(run.targets, shares),
                   utilisation=dict(sorted(type_utilisation_over(run.hours, run.capacity, window).items())))


def _waits(result: SimulationResult, design: Design) -> WaitCauses:
    """Per share, the waiting seconds by cause; the per-job causes are dropped (one per job, never sent back)."""
    from policy_engine.simulation.results.wait_causes import attribute

    return replace(attribute(result, design.topology), job_causes=())
