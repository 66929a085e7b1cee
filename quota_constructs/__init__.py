"""CDK constructs for AWS Batch quota management (the L2 layer aws-cdk-lib lacks).

Resource constructs wrap the L1 ``Cfn*`` classes and validate their props eagerly;
``QuotaTopology``/``TopologyStacks`` build a whole ``policy_engine`` topology, checked once.
The CDK is an optional part of batch-quota (``pip install 'batch-quota[cdk]'``); without it this
package says so in one line instead of a bare ``ModuleNotFoundError`` deep in an import chain.
"""

import importlib.util

MISSING_CDK = ("the CDK constructs need aws-cdk-lib and constructs, which are not installed: "
               "pip install 'batch-quota[cdk]' (check, simulate and graph work without them)")

if importlib.util.find_spec("aws_cdk") is None or importlib.util.find_spec("constructs") is None:
    raise ImportError(MISSING_CDK)

from quota_constructs.base import (  # noqa: E402 (after the CDK check)
    QuotaShareBase,
    SchedulingPolicyBase,
    ServiceEnvironmentBase,
    TrainingJobQueueBase,
)
from quota_constructs.errors import QuotaConstructError  # noqa: E402
from quota_constructs.grants import JOB_SHARE_TAG  # noqa: E402
from quota_constructs.job_queue import TrainingJobQueue  # noqa: E402
from quota_constructs.quota_share import QuotaShare  # noqa: E402
from quota_constructs.read_only_access import ReadOnlyQuotaAccess  # noqa: E402
from quota_constructs.scheduling_policy import QuotaSchedulingPolicy  # noqa: E402
from quota_constructs.service_environment import ServiceEnvironment  # noqa: E402
from quota_constructs.topology_stack import QueueResources, QuotaTopology, TopologyStacks  # noqa: E402

__all__ = [
    "JOB_SHARE_TAG",
    "MISSING_CDK",
    "QueueResources",
    "QuotaConstructError",
    "QuotaSchedulingPolicy",
    "QuotaShare",
    "QuotaShareBase",
    "QuotaTopology",
    "ReadOnlyQuotaAccess",
    "SchedulingPolicyBase",
    "ServiceEnvironment",
    "ServiceEnvironmentBase",
    "TopologyStacks",
    "TrainingJobQueue",
    "TrainingJobQueueBase",
]
