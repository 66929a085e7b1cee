"""batch-quota's policy engine: pure Python, never imports aws_cdk.

Data flows one way: topology (``model``, ``loading``) -> checks -> simulation,
synthesis (``quota_constructs``) and reports.
"""

from policy_engine.loading import LoadError, load_topology
from policy_engine.model import Guarantee, JobQueue, JobStateTimeLimitAction, QuotaShare, ServiceEnvironment, Topology

__all__ = [
    "Guarantee",
    "JobQueue",
    "JobStateTimeLimitAction",
    "LoadError",
    "QuotaShare",
    "ServiceEnvironment",
    "Topology",
    "load_topology",
]
