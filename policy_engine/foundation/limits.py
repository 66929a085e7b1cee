"""AWS's documented limits for quota management, as data: one table, one source line each.

Rules read these values instead of repeating numbers, so a limit AWS changes is a
one-line edit here, and the rule catalogue quotes the same figures the checks use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SERVICE_LIMITS = "AWS Batch user guide, service_limits"
_API = "AWS Batch API reference / botocore batch model"
_CFN_QUEUE = "CloudFormation schema AWS::Batch::JobQueue (the API model has no bound)"
_INTEGER = "botocore batch model: an Integer shape is a signed 32-bit number"
_TIME_LIMIT_REASONS = "AWS Batch user guide, 'Automatic remediation with jobStateTimeLimitActions'"

#: The largest value an API ``Integer`` holds; CloudFormation passes larger ones on, and the API refuses them.
INTEGER_MAX = 2**31 - 1


@dataclass(frozen=True)
class Limit:
    """One documented bound: ``minimum <= value <= maximum`` (``None`` = no bound on that side)."""

    minimum: int | None
    maximum: int | None
    what: str
    source: str

    def allows(self, value: int) -> bool:
        return not self.below(value) and not self.above(value)

    def below(self, value: int) -> bool:
        return self.minimum is not None and value < self.minimum

    def above(self, value: int) -> bool:
        return self.maximum is not None and value > self.maximum

    @property
    def at_most(self) -> int:
        """The maximum of a limit that has one, as a plain figure (a page size, a rate, a count of resources)."""
        if self.maximum is None:
            raise ValueError(f"{self.what} has no maximum")
        return self.maximum

    def excess(self, value: int) -> int:
        """How far ``value`` is above the maximum (0 when within it or unbounded)."""
        return max(0, value - self.maximum) if self.maximum is not None else 0

    def range_text(self) -> str:
        if self.maximum is None:
            return f">= {self.minimum}"
        if self.minimum is None:
            return f"<= {self.maximum}"
        return f"{self.minimum} to {self.maximum}" if self.minimum < 0 else f"{self.minimum}-{self.maximum}"


NAME_LENGTH = Limit(1, 128, "name length (share, queue, environment, scheduling policy)", _SERVICE_LIMITS)
SHARE_MAX_CAPACITY = Limit(1, INTEGER_MAX, "a share's maxCapacity per instance type",
                           f"{_SERVICE_LIMITS}; {_INTEGER}")
ENVIRONMENT_MAX_CAPACITY = Limit(1, INTEGER_MAX, "a service environment's capacity per instance type",
                                 f"{_API}; {_INTEGER}")
SHARE_CAPACITY_LIMITS = Limit(1, 5, "capacity limits (instance types) per quota share", _SERVICE_LIMITS)
ENVIRONMENT_CAPACITY_LIMITS = Limit(1, 5, "capacity limits (instance types) per service environment", _SERVICE_LIMITS)
SHARES_PER_QUEUE = Limit(None, 20, "quota shares per job queue", _SERVICE_LIMITS)
QUEUES_PER_ENVIRONMENT = Limit(None, 1, "job queues per quota-managed service environment", _SERVICE_LIMITS)
ENVIRONMENTS_PER_ACCOUNT = Limit(None, 50, "service environments per account and Region", _SERVICE_LIMITS)
QUEUES_PER_ACCOUNT = Limit(None, 50, "job queues per account and Region", _SERVICE_LIMITS)
BORROW_LIMIT = Limit(-1, INTEGER_MAX, "borrowLimit percent (-1 = unlimited)", f"{_API}; {_INTEGER}")
QUEUE_PRIORITY = Limit(0, 1000, "job queue priority", _CFN_QUEUE)
JOB_PRIORITY = Limit(0, 9999, "a job's schedulingPriority (SubmitServiceJob, UpdateServiceJob)", _API)
TAG_COUNT = Limit(0, 50, "tags per resource", "botocore batch model, TagrisTagsMap")
TAG_KEY_LENGTH = Limit(1, 128, "tag key length", "AWS tagging rules")
#: Tag keys starting with this (any case) are AWS's own: a user cannot set them, and they do not count toward 50.
SYSTEM_TAG_PREFIX = "aws:"
TAG_VALUE_LENGTH = Limit(0, 256, "tag value length", "AWS tagging rules")
TIME_LIMIT_SECONDS = Limit(600, 86400, "jobStateTimeLimitActions maxTimeSeconds", _API)
SUBMIT_PAYLOAD_BYTES = Limit(None, 10 * 1024, "SubmitServiceJob serviceRequestPayload size in bytes", _API)
SUBMIT_REQUEST_BYTES = Limit(None, 30 * 1024, "SubmitServiceJob request size in bytes", _API)
#: One page of a ``List*``/``Describe*`` call (``maxResults``), and the front of queue ``GetJobQueueSnapshot`` shows.
PAGE_SIZE = Limit(1, 100, "maxResults of one List*/Describe* page", _API)
SNAPSHOT_FRONT_OF_QUEUE = Limit(None, 100, "RUNNABLE jobs in GetJobQueueSnapshot's front of queue", _API)
TERMINATE_JOBS_PER_CALL = Limit(1, 50, "service job IDs in one TerminateServiceJobs call", _API)
RECENT_PREEMPTED_ATTEMPTS = Limit(None, 5, "preemptionSummary.recentPreemptedAttempts per job", _API)
SUBMIT_REQUESTS_PER_SECOND = Limit(None, 5, "SubmitServiceJob requests per second per account", _SERVICE_LIMITS)
LOOKUP_EVENTS_PAGE = Limit(1, 50, "CloudTrail LookupEvents MaxResults (default 50)",
                           "AWS CloudTrail API reference, LookupEvents")
_SAGEMAKER = "Amazon SageMaker API reference / botocore sagemaker model"
TRAINING_PLAN_NAME_LENGTH = Limit(1, 64, "SageMaker TrainingPlanName length", f"{_SAGEMAKER}, TrainingPlanName")
PLAN_RESERVED_CAPACITIES = Limit(1, 5, "reserved capacities (windows) per training plan",
                                 f"{_SAGEMAKER}, DescribeTrainingPlan ReservedCapacitySummaries (0-5)")
PLAN_INSTANCES = Limit(1, 256, "instances per reserved capacity of a training plan",
                       "Amazon SageMaker API reference, SearchTrainingPlanOfferings InstanceCount")
LIST_TRAINING_PLANS_PAGE = Limit(1, 100, "SageMaker ListTrainingPlans MaxResults",
                                 "botocore sagemaker model, ListTrainingPlansRequest.MaxResults")
STACK_RESOURCES = Limit(None, 500, "resources per CloudFormation stack (CDK refuses more: TooManyResourcesInStack)",
                        "AWS CloudFormation user guide, quotas")
STACK_OUTPUTS = Limit(None, 200, "outputs per CloudFormation template", "AWS CloudFormation user guide, quotas")
STACK_NAME_LENGTH = Limit(1, 128, "CloudFormation stack name length (a letter, then letters, digits and '-')",
                          "AWS CloudFormation user guide, CreateStack StackName")

#: The status reasons a SAGEMAKER_TRAINING queue's ``jobStateTimeLimitActions`` may name (AWS accepts no others).
TIME_LIMIT_REASONS: tuple[str, ...] = (
    "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY",
    "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE",
    "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED",
)
TIME_LIMIT_REASONS_SOURCE = _TIME_LIMIT_REASONS
#: ``jobStateTimeLimitActions.action`` and ``.state`` for SAGEMAKER_TRAINING queues: the only values AWS accepts.
TIME_LIMIT_ACTION = "TERMINATE"
TIME_LIMIT_STATE = "RUNNABLE"

#: SageMaker's ``TrainingPlanName`` pattern (length checked by ``TRAINING_PLAN_NAME_LENGTH``).
TRAINING_PLAN_NAME = re.compile(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,63}")

#: SageMaker training plans (developer guide, training-plan-utilization-for-training-jobs): SageMaker begins
#: terminating the instances of a reserved capacity this many seconds before its end (30 minutes), and a training
#: job waits at most this long pending for its plan's capacity before it fails with ``InsufficientCapacityError``.
PLAN_TERMINATION_LEAD_SECONDS = 30 * 60
PLAN_PENDING_SECONDS = 2 * 86400
PLAN_SOURCE = "SageMaker developer guide, training-plan-utilization-for-training-jobs"

#: What AWS sells (developer guide, search-training-plan-offerings-api-cli-sdk): "Reservation durations are
#: available in 1-day increments from 1 to 182 days. The reservation instance quantity options are 1, 2, 4, 8, 16,
#: 32 or 64 instances." The API allows other shapes (``PLAN_INSTANCES``); rule BQ609 warns of a reserved capacity
#: no offering has.
PLAN_OFFERING_DAYS = Limit(1, 182, "days of a training plan offering's reserved capacity (whole days)",
                           "SageMaker developer guide, search-training-plan-offerings")
PLAN_OFFERING_DAY_SECONDS = 86400
PLAN_OFFERING_INSTANCES: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
PLAN_OFFERING_SOURCE = "SageMaker developer guide, search-training-plan-offerings-api-cli-sdk"

#: An AWS account ID: exactly 12 digits (IAM user guide, "Your AWS account ID").
ACCOUNT_ID = re.compile(r"[0-9]{12}")

#: Letters, digits, hyphens and underscores (length checked by ``NAME_LENGTH``).
NAME_CHARACTERS = re.compile(r"[A-Za-z0-9_-]*")

#: Every limit, for the rule catalogue: ``name -> Limit``.
ALL: dict[str, Limit] = {
    name: value for name, value in globals().items() if isinstance(value, Limit)
}
