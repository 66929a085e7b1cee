"""Hostile requests: every one is a 4xx in AWS's error shape, and the server keeps answering.

Nesting past the JSON decoder's bound, multi-megabyte strings, invalid UTF-8, numbers out of
every range, and path tricks on ``/v1/tags/{arn}``, on the AWS API and the control API.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from policy_engine.adapters.endpoint.server import start_in_thread
from policy_engine.adapters.endpoint.service import Options, Service
from policy_engine.inputs.examples import example_topology
from tests.policy_engine.adapters.endpoint.conftest import client

QUEUE = "arn%3Aaws%3Abatch%3Aus-east-1%3A123456789012%3Ajob-queue%2Ftraining"
SHARE = "arn:aws:batch:us-east-1:123456789012:job-queue/training/quota-share/QS1"


def _submit(**overrides) -> bytes:
    request = {"jobName": "x", "jobQueue": "training", "serviceJobType": "SAGEMAKER_TRAINING",
               "quotaShareName": "QS1",
               "serviceRequestPayload": json.dumps({"ResourceConfig": {"InstanceType": "ml.g5.xlarge"}})}
    return json.dumps(request | overrides).encode()


def _payload(value) -> bytes:
    return _submit(serviceRequestPayload=value if isinstance(value, str) else json.dumps(value))


DEEP_ARRAY = b"[" * 100_000 + b"]" * 100_000
DEEP_OBJECT = b'{"a":' * 50_000 + b"1" + b"}" * 50_000

CORPUS = {
    # nesting
    "deep JSON array body": ("POST", "/v1/createquotashare", DEEP_ARRAY),
    "deep JSON object body": ("POST", "/v1/updateservicejob", DEEP_OBJECT),
    "deep JSON in the payload": ("POST", "/v1/submitservicejob", _payload("[" * 50_000 + "]" * 50_000)),
    "deep flow YAML topology": ("POST", "/_batch-quota/topology", b"{a: " * 10_000),
    "deep block YAML topology": ("POST", "/_batch-quota/topology", b"- " * 5_000 + b"x"),
    "deep JSON topology": ("POST", "/_batch-quota/topology", b'{"a":' * 5_000 + b"1" + b"}" * 5_000),
    "malformed YAML topology": ("POST", "/_batch-quota/topology", b"a: [1, 2\n  - :"),
    "alias bomb topology": ("POST", "/_batch-quota/topology",
                            b"a: &a [x, x, x, x, x, x, x, x, x]\n"
                            + b"".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n"
                                       .encode() for i in range(8))),
    "python tag topology": ("POST", "/_batch-quota/topology", b"!!python/object/apply:os.system [echo]"),
    "topology of the wrong type": ("POST", "/_batch-quota/topology", b"[1, 2]"),
    # sizes
    "5 MB job name": ("POST", "/v1/submitservicejob", _submit(jobName="x" * 5_000_000)),
    "5 MB payload": ("POST", "/v1/submitservicejob", _payload("x" * 5_000_000)),
    "5 MB tag value": ("POST", "/v1/tags/" + QUEUE, json.dumps({"tags": {"k": "v" * 5_000_000}}).encode()),
    "5 MB share name": ("POST", "/v1/createquotashare", json.dumps({
        "quotaShareName": "s" * 5_000_000, "jobQueue": "training",
        "capacityLimits": [{"maxCapacity": 1, "capacityUnit": "ml.g5.xlarge"}],
        "resourceSharingConfiguration": {"strategy": "LEND"},
        "preemptionConfiguration": {"inSharePreemption": "DISABLED"}}).encode()),
    "20 MB body": ("POST", "/_batch-quota/topology", b" " * 20_000_000),
    # encodings
    "invalid UTF-8 body": ("POST", "/v1/submitservicejob", b'{"jobName": "\xff\xfe"}'),
    "invalid UTF-8 topology": ("POST", "/_batch-quota/topology", b"\xff\xfe\xfd"),
    "NUL bytes body": ("POST", "/v1/createquotashare", b"\x00" * 1000),
    "lone surrogate id": ("POST", "/v1/describeservicejob", b'{"jobId": "\\ud800"}'),
    "body not an object": ("POST", "/v1/createquotashare", b"null"),
    # numbers
    "huge priority": ("POST", "/v1/submitservicejob", _submit(schedulingPriority=10**40)),
    "infinite priority": ("POST", "/v1/submitservicejob", _submit()[:-1] + b', "schedulingPriority": 1e999}'),
    "NaN priority": ("POST", "/v1/submitservicejob", _submit()[:-1] + b', "schedulingPriority": NaN}'),
    "5,000-digit priority": ("POST", "/v1/submitservicejob",
                             _submit()[:-1] + b', "schedulingPriority": 1' + b"0" * 5000 + b"}"),
    "priority 2**31": ("POST", "/v1/updateservicejob",
                       json.dumps({"jobId": "x", "schedulingPriority": 2**31}).encode()),
    "infinite duration tag": ("POST", "/v1/submitservicejob", _submit(tags={"batch-quota:duration": "1e999"})),
    "huge MaxRuntimeSeconds": ("POST", "/v1/submitservicejob", _payload(
        {"ResourceConfig": {"InstanceType": "ml.g5.xlarge"}, "StoppingCondition": {"MaxRuntimeSeconds": 1e300}})),
    "negative instance count": ("POST", "/v1/submitservicejob", _payload(
        {"ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": -3}})),
    "capacity 10**20": ("POST", "/v1/createserviceenvironment", json.dumps({
        "serviceEnvironmentName": "e", "serviceEnvironmentType": "SAGEMAKER_TRAINING",
        "capacityLimits": [{"maxCapacity": 10**20, "capacityUnit": "ml.g5.xlarge"}]}).encode()),
    "maxResults 10**10": ("POST", "/v1/describeserviceenvironments", json.dumps({"maxResults": 10**10}).encode()),
    "negative nextToken": ("POST", "/v1/describeserviceenvironments", json.dumps({"nextToken": "-1"}).encode()),
    "negative job nextToken": ("POST", "/v1/listservicejobs",
                               json.dumps({"jobQueue": "training", "nextToken": "-5"}).encode()),
    "5,000-digit nextToken": ("POST", "/v1/listservicejobs",
                              json.dumps({"jobQueue": "training", "nextToken": "9" * 5000}).encode()),
    "infinite created-at filter": ("POST", "/v1/listservicejobs", json.dumps({
        "jobQueue": "training", "filters": [{"name": "BEFORE_CREATED_AT", "values": ["1e999"]}]}).encode()),
    "infinite clock advance": ("POST", "/_batch-quota/clock/advance?seconds=1e400", b""),
    "clock advance past the bound": ("POST", "/_batch-quota/clock/advance?seconds=1e300", b""),
    "clock advance, bad bytes": ("POST", "/_batch-quota/clock/advance?seconds=%ff", b""),
    # paths
    "tags: dot segments": ("POST", "/v1/tags/..%2F..%2Fetc", b'{"tags": {"a": "b"}}'),
    "tags: dot segments in an ARN": ("GET", f"/v1/tags/{QUEUE}%2F..%2Ftraining", b""),
    "tags: raw slashes and dots": ("GET", f"/v1/tags/{SHARE}/../QS2", b""),
    "tags: invalid UTF-8 escape": ("GET", "/v1/tags/%ff%fe", b""),
    "tags: NUL": ("GET", "/v1/tags/%00", b""),
    "tags: empty job id": ("GET", "/v1/tags/arn:aws:batch:us-east-1:123456789012:service-job/", b""),
    "tags: 50 KB ARN": ("GET", "/v1/tags/arn%3A" + "a" * 50_000, b""),
    "tags: double-encoded ARN": ("GET", "/v1/tags/" + QUEUE.replace("%", "%25"), b""),
    "tags: untag, 30 KB key": ("DELETE", f"/v1/tags/{QUEUE}?tagKeys=" + "k" * 30_000, b""),
    "tags: untag without keys": ("DELETE", f"/v1/tags/{QUEUE}", b""),
    "control: dot segments": ("GET", "/_batch-quota/../../etc/passwd", b""),
    "unknown path": ("GET", "/v1/../../../etc/passwd", b""),
}


@pytest.fixture(scope="module")
def served():
    with start_in_thread(Service(Options(speed=0), example_topology())) as running:
        yield running


def _send(url: str, method: str, path: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url + path, data=body or None, method=method,
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@pytest.mark.parametrize("case", list(CORPUS))
def test_a_hostile_request_is_a_4xx_in_aws_error_shape_and_the_server_stays_up(served, case):
    method, path, body = CORPUS[case]
    status, headers, answer = _send(served.url, method, path, body)
    assert 400 <= status < 500, (status, answer[:300])
    error = json.loads(answer)
    assert set(error) == {"__type", "message"} and error["__type"] == "ClientException", error
    assert headers.get("x-amzn-errortype") == "ClientException"
    assert len(error["message"]) < 2000  # a message, not the request echoed back
    # still serving, with its state intact
    batch = client(served)
    assert [s["quotaShareName"] for s in batch.list_quota_shares(jobQueue="training")["quotaShares"]] == [
        "QS1", "QS2", "QS3"]


def test_a_request_line_beyond_the_http_parser_is_refused_and_the_server_stays_up(served):
    status, _, _ = _send(served.url, "GET", "/v1/tags/" + "a" * 200_000, b"")
    assert status == 400
    assert client(served).describe_service_environments()["serviceEnvironments"]
