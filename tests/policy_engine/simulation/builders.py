"""Small fluent helpers for simulator tests: one queue, one environment, named shares."""

from __future__ import annotations

from policy_engine.limits import TIME_LIMIT_REASONS
from policy_engine.model import JobQueue, JobStateTimeLimitAction, QuotaShare, ServiceEnvironment, Topology
from policy_engine.simulation.engine import Engine, PriorityUpdate, SimulationSettings
from policy_engine.simulation.jobs import JobSpec
from policy_engine.simulation.results import SimulationResult, build_result

GPU = "ml.g5.xlarge"
QUEUE = "q"


def share(name: str, limit: int, strategy: str = "LEND", borrow_limit: int | None = None,
          in_share: bool = False, state: str = "ENABLED", instance_type: str = GPU) -> QuotaShare:
    return QuotaShare(name=name, capacity={instance_type: limit}, strategy=strategy, borrow_limit=borrow_limit,
                      in_share_preemption=in_share, state=state)


def topology(environment: int, *shares: QuotaShare, time_limit: int | None = None,
             oversubscribed: bool = False, instance_type: str = GPU,
             reasons: tuple[str, ...] = TIME_LIMIT_REASONS) -> Topology:
    """``time_limit``: one action of that many seconds for each of ``reasons`` (default: every reason AWS accepts)."""
    actions = tuple(JobStateTimeLimitAction(max_time_seconds=time_limit, reason=reason)
                    for reason in reasons) if time_limit else ()
    return Topology(
        service_environments=(ServiceEnvironment(name="env", capacity={instance_type: environment}),),
        job_queues=(JobQueue(name=QUEUE, service_environment="env", shares=shares,
                             job_state_time_limit_actions=actions),),
        allow_oversubscription=oversubscribed,
    )


def job(name: str, share_name: str, instances: int = 1, priority: int = 1, at: float = 0, duration: float = 3600,
        instance_type: str = GPU, **extra) -> JobSpec:
    return JobSpec(name, f"{QUEUE}/{share_name}", instance_type, instances, priority, at, duration, **extra)


def run(topo: Topology, jobs, updates=(), until: float | None = None, **settings) -> SimulationResult:
    engine = Engine(topo, jobs, [PriorityUpdate(*u) for u in updates], SimulationSettings(**settings))
    engine.run(until)
    return build_result(engine)


def statuses(result: SimulationResult) -> dict[str, str]:
    return {record.name: record.status for record in result.jobs}
