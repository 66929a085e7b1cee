"""An account as AWS would describe it, built from a synthesized template, and stubbed with botocore's Stubber.

CloudFormation's ``AWS::Batch::*`` properties are the API's request members in PascalCase;
the Describe/List responses are those members in camelCase plus what AWS adds (ARN,
status, the CloudFormation system tags). ``stub_import`` queues the exact calls the
importer makes, in its order, with request parameters and responses that the Stubber
validates against the installed botocore model.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import boto3
from botocore.stub import Stubber

REGION = "us-east-1"
ACCOUNT = "123456789012"


def batch_client() -> Any:
    """A client that cannot reach AWS: dummy credentials, fixed Region, a closed loopback port."""
    session = boto3.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION)
    return session.client("batch", endpoint_url="http://127.0.0.1:9")


def sagemaker_client() -> Any:
    """A SageMaker client that cannot reach AWS either (its calls are stubbed)."""
    session = boto3.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION)
    return session.client("sagemaker", endpoint_url="http://127.0.0.1:9")


def arn(kind: str, name: str) -> str:
    return f"arn:aws:batch:{REGION}:{ACCOUNT}:{kind}/{name}"


def _camel(value: Any) -> Any:
    if isinstance(value, dict):
        return {key[0].lower() + key[1:]: _camel(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_camel(item) for item in value]
    return value


@dataclass
class FakeAccount:
    environments: list[dict] = field(default_factory=list)
    policies: list[dict] = field(default_factory=list)
    queues: list[dict] = field(default_factory=list)
    shares: dict[str, list[dict]] = field(default_factory=dict)  # job queue ARN -> ListQuotaShares entries
    tags: dict[str, dict[str, str]] = field(default_factory=dict)  # share ARN -> tags

    @classmethod
    def from_template(cls, template: dict, stack_name: str = "Stack") -> FakeAccount:
        """What the account holds after CloudFormation created ``template``'s Batch resources."""
        resources = template["Resources"]
        system = {"aws:cloudformation:stack-name": stack_name}
        names: dict[str, str] = {}
        kinds = {"AWS::Batch::ServiceEnvironment": ("service-environment", "ServiceEnvironmentName"),
                 "AWS::Batch::SchedulingPolicy": ("scheduling-policy", "Name"),
                 "AWS::Batch::JobQueue": ("job-queue", "JobQueueName")}
        for logical_id, resource in resources.items():
            if resource["Type"] in kinds:
                kind, key = kinds[resource["Type"]]
                names[logical_id] = arn(kind, resource["Properties"][key])

        def resolve(value: Any) -> Any:
            if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in ("Ref", "Fn::GetAtt"):
                target = value.get("Ref") or value["Fn::GetAtt"][0]
                return names[target]
            if isinstance(value, dict):
                return {key: resolve(item) for key, item in value.items()}
            if isinstance(value, list):
                return [resolve(item) for item in value]
            return value

        account = cls()
        for logical_id, resource in resources.items():
            kind = resource["Type"]
            props = _camel(resolve(resource.get("Properties", {})))
            tags = {**props.pop("tags", {}), **system, "aws:cloudformation:logical-id": logical_id}
            if kind == "AWS::Batch::ServiceEnvironment":
                account.environments.append({**props, "serviceEnvironmentArn": names[logical_id], "status": "VALID",
                                             "state": props.get("state", "ENABLED"), "tags": tags})
            elif kind == "AWS::Batch::SchedulingPolicy":
                account.policies.append({**props, "arn": names[logical_id], "tags": tags})
            elif kind == "AWS::Batch::JobQueue":
                account.queues.append({**props, "jobQueueArn": names[logical_id], "status": "VALID",
                                       "statusReason": "JobQueue Healthy", "computeEnvironmentOrder": [],
                                       "state": props.get("state", "ENABLED"), "tags": tags})
            elif kind == "AWS::Batch::QuotaShare":
                queue_arn = props.pop("jobQueue")
                share_arn = f"{queue_arn}/quota-share/{props['quotaShareName']}"
                sharing = props.get("resourceSharingConfiguration", {})
                if sharing.get("strategy") == "LEND_AND_BORROW" and "borrowLimit" not in sharing:
                    sharing["borrowLimit"] = -1  # AWS reports its default
                account.shares.setdefault(queue_arn, []).append(
                    {**props, "quotaShareArn": share_arn, "jobQueueArn": queue_arn, "status": "VALID",
                     "state": props.get("state", "ENABLED")})
                account.tags[share_arn] = tags
        for queue in account.queues:
            account.shares.setdefault(queue["jobQueueArn"], [])
        return account

    def stub_import(self, stubber: Stubber, queues: list[str] | None = None, page_size: int = 100,
                    share_page_size: int = 100) -> int:
        """Queue the importer's calls (every queue, or ``queues`` by name); return how many."""
        calls = 0
        selected = [q for q in self.queues if queues is None or q["jobQueueName"] in queues]
        if queues is None:
            pages = [selected[i:i + page_size] for i in range(0, len(selected), page_size)] or [[]]
            for index, page in enumerate(pages):
                response: dict[str, Any] = {"jobQueues": page}
                if index + 1 < len(pages):
                    response["nextToken"] = f"queues-{index + 1}"
                stubber.add_response("describe_job_queues", response,
                                     {"nextToken": f"queues-{index}"} if index else {})
                calls += 1
        else:
            stubber.add_response("describe_job_queues", {"jobQueues": selected}, {"jobQueues": list(queues)})
            calls += 1
        quota = sorted((q for q in selected if q.get("jobQueueType") == "SAGEMAKER_TRAINING"
                        and q.get("schedulingPolicyArn")), key=lambda q: q["jobQueueName"])
        policy_arns = list(dict.fromkeys(q["schedulingPolicyArn"] for q in quota))
        for start in range(0, len(policy_arns), 100):
            chunk = policy_arns[start:start + 100]
            stubber.add_response("describe_scheduling_policies",
                                 {"schedulingPolicies": [p for p in self.policies if p["arn"] in chunk]},
                                 {"arns": chunk})
            calls += 1
        env_refs = list(dict.fromkeys(o["serviceEnvironment"] for q in quota for o in q["serviceEnvironmentOrder"]))
        for start in range(0, len(env_refs), 100):
            chunk = env_refs[start:start + 100]
            stubber.add_response("describe_service_environments",
                                 {"serviceEnvironments": [e for e in self.environments
                                                          if e["serviceEnvironmentArn"] in chunk]},
                                 {"serviceEnvironments": chunk})
            calls += 1
        policies = {p["arn"]: p for p in self.policies}
        for queue in quota:
            if "quotaSharePolicy" not in policies[queue["schedulingPolicyArn"]]:
                continue
            shares = self.shares[queue["jobQueueArn"]]
            pages = [shares[i:i + share_page_size] for i in range(0, len(shares), share_page_size)] or [[]]
            for index, page in enumerate(pages):
                response = {"quotaShares": page}
                if index + 1 < len(pages):
                    response["nextToken"] = f"shares-{index + 1}"
                params = {"jobQueue": queue["jobQueueArn"]}
                if index:
                    params["nextToken"] = f"shares-{index}"
                stubber.add_response("list_quota_shares", response, params)
                calls += 1
            for share in shares:
                stubber.add_response("list_tags_for_resource", {"tags": self.tags.get(share["quotaShareArn"], {})},
                                     {"resourceArn": share["quotaShareArn"]})
                calls += 1
        return calls


def topology_template(topology, stack_name: str = "Imported") -> dict:
    """The CloudFormation template the project's constructs synthesize for ``topology`` (one stack)."""
    from aws_cdk.assertions import Template

    from quota_constructs import TopologyStacks
    from tests.quota_constructs.conftest import fast_app

    stacks = TopologyStacks(fast_app(), topology, stack_name=stack_name, split="single").stacks
    return Template.from_stack(stacks[0]).to_json()


def service_job(name: str, share: str, status: str, *, queue: str = "training", instance_type: str = "ml.g5.xlarge",
                instances: int = 1, priority: int = 0, created_ms: int = 0, started_ms: int | None = None,
                stopped_ms: int | None = None, max_runtime: int | None = 86400, preempted: int = 0,
                preemption_retries: int | None = None, attempts: int = 1, job_id: str | None = None,
                usage_in_payload_only: bool = False) -> tuple[dict, dict]:
    """``(ListServiceJobs summary, DescribeServiceJob response)`` of one SageMaker training job."""
    import json as _json

    job_id = job_id or str(uuid.uuid5(uuid.NAMESPACE_URL, name))
    job_arn = f"arn:aws:batch:{REGION}:{ACCOUNT}:service-job/{job_id}"
    training_arn = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:training-job/{name}"
    usage = [] if usage_in_payload_only else [{"capacityUnit": instance_type, "quantity": float(instances)}]
    summary: dict[str, Any] = {"jobId": job_id, "jobArn": job_arn, "jobName": name,
                               "serviceJobType": "SAGEMAKER_TRAINING", "quotaShareName": share, "status": status,
                               "createdAt": created_ms, "capacityUsage": usage}
    payload = {"TrainingJobName": name, "RoleArn": f"arn:aws:iam::{ACCOUNT}:role/sagemaker",
               "AlgorithmSpecification": {"TrainingImage": "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch:2",
                                          "TrainingInputMode": "File"},
               "ResourceConfig": {"InstanceType": instance_type, "InstanceCount": instances, "VolumeSizeInGB": 50},
               "OutputDataConfig": {"S3OutputPath": "s3://bucket/output"}}
    if max_runtime is not None:
        payload["StoppingCondition"] = {"MaxRuntimeSeconds": max_runtime}
    described: dict[str, Any] = {
        "jobId": job_id, "jobArn": job_arn, "jobName": name, "jobQueue": arn("job-queue", queue),
        "serviceJobType": "SAGEMAKER_TRAINING", "quotaShareName": share, "status": status,
        "createdAt": created_ms, "startedAt": started_ms or 0, "schedulingPriority": priority,
        "serviceRequestPayload": _json.dumps(payload), "capacityUsage": usage,
        "retryStrategy": {"attempts": attempts},
        "preemptionSummary": {"preemptedAttemptCount": preempted, "recentPreemptedAttempts": []},
        "tags": {},
    }
    if preemption_retries is not None:
        described["preemptionConfiguration"] = {"preemptionRetriesBeforeTermination": preemption_retries}
    if started_ms is not None:
        summary["startedAt"] = started_ms
        summary["scheduledAt"] = started_ms
        described["scheduledAt"] = started_ms
        attempt = {"serviceResourceId": {"name": "TrainingJobArn", "value": training_arn}, "startedAt": started_ms}
        if stopped_ms is not None:
            attempt["stoppedAt"] = stopped_ms
            attempt["statusReason"] = "Completed" if status == "SUCCEEDED" else "AlgorithmError"
        described["attempts"] = [attempt]
        described["latestAttempt"] = {"serviceResourceId": {"name": "TrainingJobArn", "value": training_arn}}
        summary["latestAttempt"] = described["latestAttempt"]
    if stopped_ms is not None:
        summary["stoppedAt"] = stopped_ms
        described["stoppedAt"] = stopped_ms
        described["isTerminated"] = False
    return summary, described


def short(workload_name: str) -> str:
    """A workload job name without the job ID the connectors append (``NAME-<uuid>`` -> ``NAME``)."""
    return workload_name[:-37]


def http_handlers(account: FakeAccount) -> dict:
    """The account as handlers of ``LoopbackBatch``: the import's operations, unpaged."""
    return {
        "DescribeJobQueues": lambda body: {"jobQueues": [q for q in account.queues if not body.get("jobQueues")
                                                         or q["jobQueueName"] in body["jobQueues"]]},
        "DescribeSchedulingPolicies": lambda body: {"schedulingPolicies": [p for p in account.policies
                                                                           if p["arn"] in body["arns"]]},
        "DescribeServiceEnvironments": lambda body: {"serviceEnvironments": [
            e for e in account.environments if e["serviceEnvironmentArn"] in body["serviceEnvironments"]]},
        "ListQuotaShares": lambda body: {"quotaShares": account.shares[body["jobQueue"]]},
        "ListTagsForResource": lambda body: {"tags": account.tags[body["resourceArn"]]},
    }
