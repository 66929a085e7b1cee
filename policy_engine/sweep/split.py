"""One large simulation across workers: job queues share nothing, so each runs on its own and the results merge.

A queue and its service environment (AWS allows one queue per quota-managed environment) form a
part; every part is simulated to its own end, then all are advanced to the latest end (the
sequential run's clock, so utilisation is time-weighted over the same span) and their records
merged in workload and topology order. The cluster summary is computed by the simulator's own
``summary`` from the merged records and each pool's integral, in the sequential run's pool order,
so the output is identical to ``simulate`` run in one process.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

from policy_engine.foundation.model import Topology
from policy_engine.simulation.core.engine import Action, Engine
from policy_engine.simulation.results.capacity_hours import merge_hours
from policy_engine.simulation.results.metrics import EnvironmentSpan, cluster_summary
from policy_engine.simulation.results.records import SimulationResult, build_result
from policy_engine.simulation.results.type_usage import (
    SUMMARY_KEY,
    TypeSeconds,
    engine_seconds,
    summary_json,
    summed,
    type_usage,
)
from policy_engine.simulation.scenarios.workload import Scenario
from policy_engine.simulation.topology_changes import EnvironmentUpdate, ShareUpdate
from policy_engine.simulation.usage import merge_logs
from policy_engine.sweep.executor import Executor


@dataclass(frozen=True)
class Part:
    """The sub-scenario of some job queues (a list of queue names, in topology order)."""

    queues: tuple[str, ...]
    scenario: Scenario


def partition(topology: Topology) -> list[tuple[str, ...]] | None:
    """Queues grouped by service environment, in topology order; ``None`` when groups interleave."""
    groups: dict[str, list[str]] = {}
    for queue in topology.job_queues:
        groups.setdefault(queue.service_environment, []).append(queue.name)
    parts = [tuple(names) for names in groups.values()]
    flat = [name for names in parts for name in names]
    if flat != [queue.name for queue in topology.job_queues]:
        return None  # one environment serves non-adjacent queues: pool order would differ, run as one
    return parts


def split(scenario: Scenario) -> list[Part] | None:
    groups = partition(scenario.topology)
    if groups is None or scenario.topology.training_plans:  # a plan's instances serve the jobs of every queue
        return None
        return None
    parts = []
    for names in groups:
        wanted = set(names)
        queues = tuple(q for q in scenario.topology.job_queues if q.name in wanted)
        environments = {q.service_environment for q in queues}
        topology = scenario.topology.model_copy(update={
            "job_queues": queues,
            "service_environments": tuple(e for e in scenario.topology.service_environments
                                          if e.name in environments),
            "guarantees": (),  # not simulated; the share names they use may be elsewhere
        })
        jobs = [spec for spec in scenario.jobs if spec.share.partition("/")[0] in wanted]
        names_here = {spec.name for spec in jobs}
        updates = [update for update in scenario.updates if _belongs(update, wanted, environments, names_here)]
        live = {name: state for name, state in scenario.live.items() if name in names_here}
        parts.append(Part(names, replace(scenario, topology=topology, jobs=jobs, updates=updates, live=live,
                                         observed={})))
    return parts


def _belongs(update: Action, queues: set[str], environments: set[str], jobs: set[str]) -> bool:
    """Whether an action touches this part: its job, its share's queue or its environment."""
    if isinstance(update, ShareUpdate):
        return update.share.partition("/")[0] in queues
    if isinstance(update, EnvironmentUpdate):
        return update.name in environments
    return update.job in jobs


def start_part(part: Part, until: float | None) -> Engine:
    """Phase one (on a worker): simulate the part to its end (or ``until``); the engine stays there."""
    engine = Engine(part.scenario.topology, part.scenario.jobs, part.scenario.updates, part.scenario.settings,
                    part.scenario.live)
    engine.run(until)
    return engine


def end_time(engine: Engine) -> float:
    return engine.now


def finish_part(engine: Engine, until: float) -> tuple[SimulationResult, list[tuple[int, int, float, float]],
                                                      dict[str, TypeSeconds]]:
    """Phase two: advance to the common end and snapshot; each pool's (environment ordinal, capacity, integral,
    the capacity-seconds correction of topology changes), and the instance-seconds of each instance type."""
    engine.run(until)
    ordinals: dict[int, int] = {}
    pools = [(ordinals.setdefault(id(pool.env), len(ordinals)), pool.env.capacity, pool.used_int,
              engine.capacity_corrections.get(pool.env, 0.0))
             for pool in engine.pools]
    return build_result(engine), pools, engine_seconds(engine)


class MergeError(RuntimeError):
    """A part's result carries something this merge does not know how to combine."""


#: ``SimulationResult`` fields ``merge`` combines; any other one set on a part is refused, never dropped.
MERGED_FIELDS = {"time", "jobs", "shares", "summary", "utilisation", "usage", "hours"}


def merge(scenario: Scenario, time: float,
          parts: Sequence[tuple[SimulationResult, list[tuple[int, int, float, float]],
                                dict[str, TypeSeconds]]]) -> SimulationResult:
    """The sequential run's result from the parts' (in topology order)."""
    for result, _, _ in parts:
        for name in (f.name for f in fields(result) if f.name not in MERGED_FIELDS):
            if getattr(result, name) is not None:
                raise MergeError(f"the parts' {name!r} cannot be merged: run this simulation without "
                                 "--scheduler/--workers")
    position = {spec.name: index for index, spec in enumerate(scenario.jobs)}
    records = sorted((record for result, _, _ in parts for record in result.jobs), key=lambda r: position[r.name])
    shares = [metrics for result, _, _ in parts for metrics in result.shares]
    environments: dict[tuple[int, int], EnvironmentSpan] = {}  # (part, environment ordinal), in pool order
    used: list[float] = []
    for number, (_, part_pools, _) in enumerate(parts):
        for ordinal, capacity, used_seconds, correction in part_pools:
            environments[(number, ordinal)] = EnvironmentSpan(capacity, correction)
            used.append(used_seconds)
    cluster = cluster_summary(time, environments.values(), used, [r.status for r in records],
                              [r.wait_seconds for r in records], shares)
    cluster[SUMMARY_KEY] = summary_json(type_usage(time, summed(seconds for _, _, seconds in parts), shares))
    series = None
    if scenario.settings.utilisation_series:
        series = sorted((s for result, _, _ in parts for s in result.utilisation or ()), key=lambda sample: sample[0])
    usage = merge_logs([result.usage for result, _, _ in parts]) if scenario.settings.usage_log else None
    return SimulationResult(time, records, shares, cluster, series, usage,
                            hours=merge_hours(time, [result.hours for result, _, _ in parts]))


def simulate_parallel(scenario: Scenario, executor: Executor, until: float | None = None) -> SimulationResult:
    """``simulate`` with the queues on ``executor``'s workers; the same result as one sequential run."""
    parts = split(scenario)
    if parts is None or len(parts) < 2:
        engine = start_part(Part((), scenario), until)
        return build_result(engine)
    client = getattr(executor, "client", None)
    if client is None:  # in-process
        engines = [start_part(part, until) for part in parts]
        end = until if until is not None else max(engine.now for engine in engines)
        return merge(scenario, end, [finish_part(engine, end) for engine in engines])
    shipped = client.scatter(parts)  # each part's workload goes to one worker, once
    engines = [client.submit(start_part, part, until, pure=False, retries=2) for part in shipped]
    try:
        end = until if until is not None else max(client.gather([client.submit(end_time, e) for e in engines]))
        finished = client.gather([client.submit(finish_part, engine, end, pure=False) for engine in engines])
    finally:
        for future in (*engines, *shipped):
            future.release()
    return merge(scenario, end, finished)
