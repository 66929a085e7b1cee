"""CDK constructs for AWS Batch quota management (the L2 layer aws-cdk-lib lacks).

Resource constructs wrap the L1 ``Cfn*`` classes and validate their props eagerly;
``QuotaTopology``/``TopologyStacks`` build a whole ``policy_engine`` topology, checked once.
"""

from quota_constructs.grants import JOB_SHARE_TAG
from quota_constructs.job_queue import TrainingJobQueue, TrainingJobQueueBase
from quota_constructs.quota_share import QuotaShare, QuotaShareBase
from quota_constructs.read_only_access import ReadOnlyQuotaAccess
from quota_constructs.scheduling_policy import QuotaSchedulingPolicy, SchedulingPolicyBase
from quota_constructs.service_environment import ServiceEnvironment, ServiceEnvironmentBase
from quota_constructs.topology_stack import QueueResources, QuotaTopology, TopologyStacks

__all__ = [
    "JOB_SHARE_TAG",
    "QueueResources",
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
