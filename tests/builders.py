"""Builders for test topologies, jobs and runs: one module, every default written here, once.

Two topology shapes, one per kind of test:

- ``topology(*shares)`` is what the checks read: one service environment ``gpu-env`` sized to exactly
  the shares' limits (so the capacity rules pass unless a test sets ``environment=``) and one job queue
  ``training`` holding the shares.
- ``simulated_topology(environment, *shares)`` is what the simulator runs: the environment's size comes
  first because scheduling tests are about it; service environment ``env``, job queue ``q``
  (``SIMULATED_QUEUE``), the queue ``job`` submits to.

``share`` serves both. Its defaults are AWS's where AWS has one and the quietest choice where it has
none: 1 instance of ``GPU``, strategy ``RESERVE`` (the share neither lends nor borrows, so a test about
one share is not disturbed by the others unless it says ``LEND`` or ``LEND_AND_BORROW``), AWS's
borrow limit (unset, which AWS reads as -1, unlimited), no in-share preemption, ``ENABLED``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from policy_engine.analysis.rules import REGISTRY, Context
from policy_engine.foundation.findings import Finding
from policy_engine.foundation.limits import TIME_LIMIT_REASONS
from policy_engine.foundation.model import (
    Guarantee,
    JobQueue,
    JobStateTimeLimitAction,
    QuotaShare,
    ServiceEnvironment,
    State,
    Strategy,
    Topology,
)
from policy_engine.simulation.core.engine import Engine, PriorityUpdate, SimulationSettings
from policy_engine.simulation.core.jobs import JobSpec
from policy_engine.simulation.results.records import SimulationResult, build_result

#: The instance type of every builder unless a test names another.
GPU = "ml.g5.xlarge"
#: The job queue of ``simulated_topology``; ``job`` submits to ``q/SHARE``.
SIMULATED_QUEUE = "q"


def share(name: str, count: int = 1, strategy: Strategy = "RESERVE", *, borrow_limit: int | None = None,
          in_share_preemption: bool = False, state: State = "ENABLED", instance_type: str = GPU,
          capacity: dict[str, int] | None = None, **fields: Any) -> QuotaShare:
    """A share of ``count`` instances of ``instance_type`` (or ``capacity=`` for several types); other
    ``QuotaShare`` fields (``tags``, ...) pass through."""
    return QuotaShare(name=name, capacity=capacity if capacity is not None else {instance_type: count},
                      strategy=strategy, borrow_limit=borrow_limit, in_share_preemption=in_share_preemption,
                      state=state, **fields)


def guarantee(share_ref: str, **promises: Any) -> Guarantee:
    """A guarantee on ``QUEUE/SHARE`` (``min_instances=``, ``within_seconds=``, ...)."""
    return Guarantee(share=share_ref, **promises)


def topology(*shares: QuotaShare, environment: int | dict[str, int] | None = None,
             guarantees: Iterable[Guarantee] = (), queue: str = "training", **fields: Any) -> Topology:
    """For the checks: environment ``gpu-env`` (default: exactly the shares' limits; an int means that many
    ``GPU``) and one queue ``queue`` holding ``shares``; other ``Topology`` fields pass through."""
    if environment is None:
        environment = {}
        for each in shares:
            for instance_type, count in each.capacity.items():
                environment[instance_type] = environment.get(instance_type, 0) + count
    elif isinstance(environment, int):
        environment = {GPU: environment}
    return Topology(
        service_environments=(ServiceEnvironment(name="gpu-env", capacity=environment),),
        job_queues=(JobQueue(name=queue, service_environment="gpu-env", shares=tuple(shares)),),
        guarantees=tuple(guarantees),
        **fields,
    )


def simulated_topology(environment: int, *shares: QuotaShare, time_limit: int | None = None,
                       oversubscribed: bool = False, instance_type: str = GPU,
                       reasons: tuple[str, ...] = TIME_LIMIT_REASONS) -> Topology:
    """For the simulator: ``environment`` instances of ``instance_type`` in ``env``, one queue ``q``.

    ``time_limit``: one action of that many seconds for each of ``reasons`` (default: every reason AWS
    accepts); without it, none. ``oversubscribed`` sets ``allow_oversubscription``.
    """
    actions = tuple(JobStateTimeLimitAction(max_time_seconds=time_limit, reason=reason)
                    for reason in reasons) if time_limit else ()
    return Topology(
        service_environments=(ServiceEnvironment(name="env", capacity={instance_type: environment}),),
        job_queues=(JobQueue(name=SIMULATED_QUEUE, service_environment="env", shares=shares,
                             job_state_time_limit_actions=actions),),
        allow_oversubscription=oversubscribed,
    )


def job(name: str, share_name: str, instances: int = 1, priority: int = 1, at: float = 0, duration: float = 3600,
        instance_type: str = GPU, **extra: Any) -> JobSpec:
    """A job for ``q/share_name``: one ``GPU`` instance, priority 1, submitted at 0, running an hour."""
    return JobSpec(name, f"{SIMULATED_QUEUE}/{share_name}", instance_type, instances, priority, at, duration, **extra)


def simulate(topo: Topology, jobs: Iterable[JobSpec], updates: Iterable[tuple[Any, ...]] = (),
             until: float | None = None, **settings: Any) -> SimulationResult:
    """Run the engine to the end (or ``until``); ``updates`` are ``PriorityUpdate`` fields as tuples."""
    engine = Engine(topo, jobs, [PriorityUpdate(*u) for u in updates], SimulationSettings(**settings))
    engine.run(until)
    return build_result(engine)


def statuses(result: SimulationResult) -> dict[str, str]:
    """Each job's final status, by name."""
    return {record.name: record.status for record in result.jobs}


def run_rule(rule_id: str, topology: Topology) -> list[Finding]:
    """Run one rule over ``topology`` and return what it found."""
    return REGISTRY[rule_id].run(Context(topology))


#: The files ``scenario_files`` writes: two lending shares of ``GPU`` in queue ``training`` and a few jobs.
SCENARIO_TOPOLOGY = f"""\
service_environments: [{{name: gpu-env, capacity: {{{GPU}: 4}}}}]
job_queues:
  - name: training
    service_environment: gpu-env
    shares:
      - {{name: QS1, capacity: {{{GPU}: 2}}, strategy: LEND_AND_BORROW}}
      - {{name: QS2, capacity: {{{GPU}: 2}}, strategy: LEND_AND_BORROW}}
"""


def scenario_files(folder: Any, jobs: int = 6) -> Any:
    """``topology.yaml``, ``jobs.csv`` (``jobs`` jobs alternating between QS1 and QS2) and ``scenario.yaml`` naming
    both, in ``folder`` (a ``Path``); returns the scenario's path: for tests that run commands on files."""
    (folder / "topology.yaml").write_text(SCENARIO_TOPOLOGY, encoding="utf-8")
    (folder / "jobs.csv").write_text("name,share,submit_at,duration\n" + "".join(
        f"j{i},QS{1 + i % 2},{i * 60},{1800 + i * 60}\n" for i in range(jobs)), encoding="utf-8")
    (folder / "scenario.yaml").write_text("topology: topology.yaml\njobs: jobs.csv\n", encoding="utf-8")
    return folder / "scenario.yaml"
