"""The embedded default topology: AWS's three-share quota-management example.

One ``ml.g5.xlarge`` each for QS1 (LEND_AND_BORROW, borrow limit 200 %, in-share
preemption on), QS2 (LEND) and QS3 (RESERVE), in a 3-instance environment.
``topologies/example.yaml`` is the same topology as a file; a test keeps them equal.
"""

from __future__ import annotations

from pathlib import Path

from policy_engine.model import Guarantee, JobQueue, QuotaShare, ServiceEnvironment, Topology

INSTANCE_TYPE = "ml.g5.xlarge"

#: The YAML form shipped with the package (same meaning as ``example_topology()``).
EXAMPLE_YAML = Path(__file__).with_name("data") / "example.yaml"


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
