"""What the endpoint answers and ``import`` writes states every LEND_AND_BORROW share's borrow limit (-1 when unset)
and every queue's priority (0 included), and never a borrow limit on another share: a client that drops a zero or
an unset value (the SageMaker SDK drops priority 0, its notebook helper ``borrowLimit: 0``) then changes nothing."""

from __future__ import annotations

import yaml
from botocore.validate import ParamValidator
from click.testing import CliRunner

from policy_engine.cli.app import main
from tests.policy_engine.adapters.endpoint.conftest import INSTANCE, client

TOPOLOGY = {
    "service_environments": [{"name": "gpu", "capacity": {INSTANCE: 6}}],
    "job_queues": [{"name": "training", "service_environment": "gpu", "priority": 0, "shares": [
        {"name": "unset", "capacity": {INSTANCE: 2}, "strategy": "LEND_AND_BORROW"},
        {"name": "zero", "capacity": {INSTANCE: 2}, "strategy": "LEND_AND_BORROW", "borrow_limit": 0},
        {"name": "lends", "capacity": {INSTANCE: 2}, "strategy": "LEND"}]}],
}
EXPECTED = {"unset": {"strategy": "LEND_AND_BORROW", "borrowLimit": -1},
            "zero": {"strategy": "LEND_AND_BORROW", "borrowLimit": 0}, "lends": {"strategy": "LEND"},
            "created": {"strategy": "LEND_AND_BORROW", "borrowLimit": -1}, "reserved": {"strategy": "RESERVE"}}


def _answers_in_shape(batch, operation: str, **params) -> dict:
    """One call whose answer is validated against the botocore model's output shape."""
    answer = getattr(batch, operation)(**params)
    body = {key: value for key, value in answer.items() if key != "ResponseMetadata"}
    shape = batch.meta.service_model.operation_model(batch.meta.method_to_api_mapping[operation]).output_shape
    report = ParamValidator().validate(body, shape)
    assert not report.has_errors(), report.generate_report()
    return body


def test_describe_answers_and_import_state_borrow_limits_and_priorities(endpoint, monkeypatch, tmp_path):
    endpoint.load_topology(TOPOLOGY)
    batch = client(endpoint)
    queue = "arn:aws:batch:us-east-1:123456789012:job-queue/training"
    batch.create_quota_share(quotaShareName="created", jobQueue=queue,
                             capacityLimits=[{"maxCapacity": 1, "capacityUnit": INSTANCE}],
                             resourceSharingConfiguration={"strategy": "LEND_AND_BORROW"},
                             preemptionConfiguration={"inSharePreemption": "DISABLED"})
    batch.create_quota_share(quotaShareName="reserved", jobQueue=queue,
                             capacityLimits=[{"maxCapacity": 1, "capacityUnit": INSTANCE}],
                             resourceSharingConfiguration={"strategy": "LEND_AND_BORROW", "borrowLimit": 10},
                             preemptionConfiguration={"inSharePreemption": "DISABLED"})
    # an update to a strategy that cannot borrow drops the borrow limit; AWS refuses one on such a share
    batch.update_quota_share(quotaShareArn=f"{queue}/quota-share/reserved",
                             resourceSharingConfiguration={"strategy": "RESERVE"})
    listed = _answers_in_shape(batch, "list_quota_shares", jobQueue="training")["quotaShares"]
    assert {share["quotaShareName"]: share["resourceSharingConfiguration"] for share in listed} == EXPECTED
    for name, sharing in EXPECTED.items():
        described = _answers_in_shape(batch, "describe_quota_share", quotaShareArn=f"{queue}/quota-share/{name}")
        assert described["resourceSharingConfiguration"] == sharing
    queues = _answers_in_shape(batch, "describe_job_queues", jobQueues=["training"])["jobQueues"]
    assert queues[0]["priority"] == 0
    monkeypatch.setenv("AWS_ENDPOINT_URL_BATCH", endpoint.url)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER", endpoint.url)
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                        ("AWS_DEFAULT_REGION", "us-east-1")):
        monkeypatch.setenv(name, value)
    imported = tmp_path / "account.yaml"
    result = CliRunner().invoke(main, ["import", "-o", str(imported)])
    assert result.exit_code == 0, result.output
    written = yaml.safe_load(imported.read_text(encoding="utf-8"))["job_queues"][0]
    assert written["priority"] == 0
    assert {share["name"]: share.get("borrow_limit") for share in written["shares"]} == {
        "unset": -1, "zero": 0, "lends": None, "created": -1, "reserved": None}
