"""Small builders for test topologies: one environment, one queue, a few shares, in one line."""

from __future__ import annotations

from policy_engine.model import Guarantee, JobQueue, QuotaShare, ServiceEnvironment, Topology

GPU = "ml.g5.xlarge"


def share(name: str, count: int = 1, strategy: str = "RESERVE", **fields) -> QuotaShare:
    """A share with ``count`` instances of ``GPU`` (or ``capacity=`` for anything else)."""
    capacity = fields.pop("capacity", {GPU: count})
    return QuotaShare(name=name, capacity=capacity, strategy=strategy, **fields)


def topology(*shares: QuotaShare, environment: int | dict[str, int] | None = None, guarantees=(),
             queue: str = "training", **fields) -> Topology:
    """One environment ``gpu-env`` (default: exactly the shares' limits) and one queue holding ``shares``."""
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


def guarantee(share_ref: str, **promises) -> Guarantee:
    return Guarantee(share=share_ref, **promises)
