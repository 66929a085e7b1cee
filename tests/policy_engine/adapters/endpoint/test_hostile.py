"""Hostile requests: every one is a 4xx in AWS's error shape, and the server keeps answering.

Nesting past the JSON decoder's bound, multi-megabyte strings, invalid UTF-8, numbers out of
every range, and path tricks on ``/v1/tags/{arn}``, on the AWS API and the control API.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from botocore.exceptions import ClientError

from policy_engine.adapters.endpoint.server import start_in_thread
from policy_engine.adapters.endpoint.service import Options, Service
from policy_engine.inputs.examples import example_topology
from tests.policy_engine.adapters.endpoint.conftest import SIGNED, client

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
    "1e308 duration tag": ("POST", "/v1/submitservicejob", _submit(tags={"batch-quota:duration": "1e308"})),
    "NaN duration tag": ("POST", "/v1/submitservicejob", _submit(tags={"batch-quota:duration": "nan"})),
    "duration tag past year 9999": ("POST", "/v1/submitservicejob",
                                    _submit(tags={"batch-quota:duration": "253402300000"})),
    "null priority": ("POST", "/v1/submitservicejob", _submit(schedulingPriority=None)),
    "null tags": ("POST", "/v1/submitservicejob", _submit(tags=None)),
    "null retry strategy": ("POST", "/v1/submitservicejob", _submit(retryStrategy=None)),
    "null attempts": ("POST", "/v1/submitservicejob", _submit(retryStrategy={"attempts": None})),
    "null priority update": ("POST", "/v1/updateservicejob", json.dumps({"jobId": "x",
                                                                         "schedulingPriority": None}).encode()),
    "null share limits": ("POST", "/v1/updatequotashare", json.dumps({"quotaShareArn": SHARE,
                                                                       "capacityLimits": None}).encode()),
    "null filter values": ("POST", "/v1/listservicejobs", json.dumps({
        "jobQueue": "training", "filters": [{"name": "JOB_NAME", "values": None}]}).encode()),
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
                                     headers={"content-type": "application/json", **SIGNED})
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


J11 = {"content-type": "application/x-amz-json-1.1"}
TRAIL = "com.amazonaws.cloudtrail.v20131101.CloudTrail_20131101.LookupEvents"
JSON_11 = {
    "ListTrainingPlans StartTimeAfter NaN": ("SageMaker.ListTrainingPlans", b'{"StartTimeAfter": NaN}'),
    "ListTrainingPlans StartTimeBefore 1e308": ("SageMaker.ListTrainingPlans", b'{"StartTimeBefore": 1e308}'),
    "ListTrainingPlans StartTimeAfter year 10000": ("SageMaker.ListTrainingPlans",
                                                    b'{"StartTimeAfter": "10000-01-01T00:00:00Z"}'),
    "ListTrainingPlans null filters": ("SageMaker.ListTrainingPlans", b'{"Filters": null}'),
    "DescribeTrainingPlan with dot segments": ("SageMaker.DescribeTrainingPlan", b'{"TrainingPlanName": "../x"}'),
    "LookupEvents StartTime NaN": (TRAIL, b'{"StartTime": NaN}'),
    "LookupEvents EndTime -Infinity": (TRAIL, b'{"EndTime": -Infinity}'),
    "LookupEvents StartTime 1e308": (TRAIL, b'{"StartTime": 1e308}'),
    "LookupEvents StartTime a word": (TRAIL, b'{"StartTime": "yesterday"}'),
    "LookupEvents null attributes": (TRAIL, b'{"LookupAttributes": [null]}'),
    "LookupEvents deep body": (TRAIL, b"[" * 100_000 + b"]" * 100_000),
}


@pytest.mark.parametrize("case", list(JSON_11))
def test_a_hostile_json_11_request_is_a_validation_error_and_the_server_stays_up(served, case):
    target, body = JSON_11[case]
    request = urllib.request.Request(served.url + "/", data=body, method="POST",
                                     headers={"X-Amz-Target": target, **J11, **SIGNED})
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=60)
    assert caught.value.code == 400
    assert json.loads(caught.value.read())["__type"] in ("ValidationException", "SerializationException")
    assert client(served).describe_service_environments()["serviceEnvironments"]


def test_an_endpoint_asked_to_run_infinitely_fast_stops_its_clock_at_the_last_date():
    """``Options(speed=1e308)`` (``serve --speed`` refuses it; the Python API may pass it): the clock stops at
    9999-12-31T23:59:59Z, every call that shows a date answers, and a job that would end later is refused."""
    with start_in_thread(Service(Options(speed=1e308), example_topology())) as running:
        assert running.clock() == running.service.latest
        batch = client(running)
        with pytest.raises(ClientError) as caught:
            batch.submit_service_job(**json.loads(_submit()))
        assert "would reach 9999-12-31" in caught.value.response["Error"]["Message"]
        assert batch.list_service_jobs(jobQueue="training")["jobSummaryList"] == []
        assert batch.get_job_queue_snapshot(jobQueue="training")["frontOfQueue"]["jobs"] == []
        assert running.export()["time"] == running.service.latest


@pytest.mark.parametrize("region", ["../../x", "", "\x1b[31mred", "us-east-1/../*", "US-EAST-1", "us-east-1 "])
def test_a_region_that_is_not_aws_is_refused(region):
    from click.testing import CliRunner

    from policy_engine.cli import main

    with pytest.raises(ValueError, match="is not an AWS Region name"):
        Service(Options(region=region))
    result = CliRunner().invoke(main, ["serve", "--port", "0", "--region", region])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"error: --region {region!r} is not an AWS Region name (lower-case words and a number joined by hyphens, "
        "as us-east-1, in one of AWS's partitions)".replace("\x1b", "\\x1b")]


@pytest.mark.parametrize("region", ["us-east-1", "eu-central-2", "cn-north-1", "us-gov-west-1", "us-isob-east-1"])
def test_regions_of_every_partition_are_served(region):
    assert Service(Options(region=region)).account.arns.queue("q").split(":")[3] == region


@pytest.mark.parametrize(("option", "value"), [("--speed", "1e308"), ("--speed", "1e7"),
                                               ("--default-duration", "1e308"), ("--transition-seconds", "1e300"),
                                               ("--preemption-seconds", "3e11")])
def test_serve_numbers_past_their_bound_are_refused(option, value):
    from click.testing import CliRunner

    from policy_engine.cli import main

    result = CliRunner().invoke(main, ["serve", "--port", "0", option, value])
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"error: {option}: ") and "must be between 0 and" in line


def _raw_head(url: str, head: bytes, chunk: int) -> bytes:
    """Send ``head`` (a request line and headers) ``chunk`` bytes at a time; the answer, or what came before the
    server closed the connection."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    answer = b""
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        try:
            for start in range(0, len(head), chunk):
                sock.sendall(head[start:start + chunk])
        except OSError:  # closed by the server part way: its answer is already there
            pass
        while True:
            try:
                data = sock.recv(65536)
            except OSError:
                break
            if not data:
                break
            answer += data
            if b"\r\n\r\n" in answer and b"content-length" in answer.lower():
                length = int(answer.lower().split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0])
                if len(answer.split(b"\r\n\r\n", 1)[1]) >= length:
                    break
    return answer


@pytest.mark.parametrize(("what", "head"), [
    ("a 200 KB request line", b"GET /v1/tags/" + b"a" * 200_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
    ("a 200 KB header", b"GET /_batch-quota/clock HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 200_000
     + b"\r\n\r\n"),
    ("2,000 headers of 100 bytes", b"GET /_batch-quota/clock HTTP/1.1\r\nHost: 127.0.0.1\r\n"
     + b"".join(b"X-H%d: %s\r\n" % (i, b"a" * 90) for i in range(2000)) + b"\r\n"),
    ("a header that never ends", b"GET /_batch-quota/clock HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "
     + b"a" * 300_000),
])
@pytest.mark.parametrize("chunk", [1024, 1_000_000])
def test_a_request_head_past_80_kb_is_refused_431_and_the_server_stays_up(served, what, head, chunk):
    answer = _raw_head(served.url, head, chunk)
    assert answer.startswith(b"HTTP/1.1 431 "), (what, answer[:200])
    error = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert error["__type"] == "ClientException" and "81920 bytes" in error["message"]
    assert client(served).describe_service_environments()["serviceEnvironments"]


def test_a_head_under_the_bound_is_answered(served):
    head = b"GET /_batch-quota/clock HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 60_000 + b"\r\n\r\n"
    for chunk in (1024, 1_000_000):
        assert _raw_head(served.url, head, chunk).startswith(b"HTTP/1.1 200 ")
