"""The embedded default topology: AWS's three-share quota-management example.

One ``ml.g5.xlarge`` each for QS1 (LEND_AND_BORROW, borrow limit 200 %, in-share
preemption on), QS2 (LEND) and QS3 (RESERVE), in a 3-instance environment.
``topologies/example.yaml`` is the same topology as a file; a test keeps them equal.
"""

from __future__ import annotations

from pathlib import Path

from policy_engine.foundation.model import (
    Guarantee,
    JobQueue,
    QuotaShare,
    ServiceEnvironment,
    Strategy,
    Topology,
    share_id,
)

INSTANCE_TYPE = "ml.g5.xlarge"

#: The YAML form shipped with the package (same meaning as ``example_topology()``).
EXAMPLE_YAML = Path(__file__).parents[1] / "data" / "example.yaml"


def example_topology() -> Topology:
    """The worked example from AWS's quota-management notebook."""
    return Topology(
        service_environments=(ServiceEnvironment(name="gpu-env", capacity={INSTANCE_TYPE: 3}),),
        job_queues=(
            JobQueue(
                name="training",
                service_environment="gpu-env",
                shares=(
                    QuotaShare(
                        name="QS1",
                        capacity={INSTANCE_TYPE: 1},
                        strategy="LEND_AND_BORROW",
                        borrow_limit=200,
                        in_share_preemption=True,
                    ),
                    QuotaShare(name="QS2", capacity={INSTANCE_TYPE: 1}, strategy="LEND"),
                    QuotaShare(name="QS3", capacity={INSTANCE_TYPE: 1}, strategy="RESERVE"),
                ),
            ),
        ),
        guarantees=(
            Guarantee(share="training/QS1", min_capacity={INSTANCE_TYPE: 1}, burst_capacity={INSTANCE_TYPE: 2}),
            Guarantee(share="training/QS2", min_capacity={INSTANCE_TYPE: 1}),
            Guarantee(share="training/QS3", min_capacity={INSTANCE_TYPE: 1}, never_preempted=True),
        ),
    )


#: Instance types used by ``large_topology`` (five, AWS's per-share and per-environment maximum).
LARGE_INSTANCE_TYPES = ("ml.g5.xlarge", "ml.g5.2xlarge", "ml.g5.12xlarge", "ml.p4d.24xlarge", "ml.p5.48xlarge")

_STRATEGIES: tuple[Strategy, ...] = ("LEND_AND_BORROW", "LEND", "RESERVE")


def large_topology(queues: int = 50, shares_per_queue: int = 20, instance_types: int = 5, *,
                   guarantees: bool = False) -> Topology:
    """An account at AWS's limits (50 queues x 20 shares, 5 instance types): benchmarks and scale tests.

    Each share gets 2 instances of every type and the environment exactly the sum, so the
    topology is valid; strategies rotate LEND_AND_BORROW / LEND / RESERVE. With ``guarantees``
    every share also gets a satisfiable guarantee (min_capacity, burst_capacity and, where it
    holds, never_preempted), so the benchmark pays for proving every promise.
    """
    types = LARGE_INSTANCE_TYPES[:instance_types]
    environments, job_queues = [], []
    for q in range(queues):
        shares = tuple(
            QuotaShare(
                name=f"team-{q:02d}-{s:02d}",
                capacity=dict.fromkeys(types, 2),
                strategy=_STRATEGIES[s % 3],
                borrow_limit=100 if _STRATEGIES[s % 3] == "LEND_AND_BORROW" else None,
                in_share_preemption=s % 2 == 0,
                tags={"team": f"team-{q:02d}-{s:02d}"},
            )
            for s in range(shares_per_queue)
        )
        capacity = dict.fromkeys(types, 2 * shares_per_queue)
        environments.append(ServiceEnvironment(name=f"env-{q:02d}", capacity=capacity))
        job_queues.append(JobQueue(name=f"queue-{q:02d}", service_environment=f"env-{q:02d}", shares=shares))
    promises = tuple(_large_guarantee(queue, share) for queue in job_queues for share in queue.shares) \
        if guarantees else ()
    return Topology(service_environments=tuple(environments), job_queues=tuple(job_queues), guarantees=promises)


def _large_guarantee(queue: JobQueue, share: QuotaShare) -> Guarantee:
    """What ``large_topology``'s share can be promised: its limit, its burst (a borrower reaches its
    100 % ceiling from lenders in the queue) and never_preempted when it neither borrows nor preempts itself."""
    return Guarantee(
        share=share_id(queue, share),
        min_capacity=dict(share.capacity),
        burst_capacity={t: share.ceiling(t) or n for t, n in share.capacity.items()},
        never_preempted=not share.borrows and not share.in_share_preemption,
    )
