"""The fuzz harness's endpoint share: hostile requests over HTTP to a real ``batch-quota serve`` process.

Used by ``test_fuzz_endpoint.py`` (a few hundred requests) and ``benchmarks/fuzz_bench.py --requests N``.
A request is drawn from the served surfaces: every AWS Batch operation of the model and the JSON 1.1 reads
(CloudTrail, SageMaker) with bodies built from their botocore shapes, whose leaves are at times replaced by
hostile values (null, NaN, 1e308, wrong types, megabytes, deep nesting, terminal escapes); the control API
(clock, reset, topology, export, findings, events) with odd query values and mutated topologies; and the
request guard's inputs (foreign ``Origin`` and ``Host``, no ``Authorization``, form and text content types,
oversized heads). A failure is a 5xx, an answer that is not JSON, a closed connection, more than
``TIME_LIMIT`` seconds, a request the guard must refuse that is not answered 403 (or that changed the
state), or a traceback in the server's log.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from botocore.model import Shape

from policy_engine.adapters.endpoint import cloudtrail
from policy_engine.adapters.endpoint.base import sagemaker
from policy_engine.adapters.endpoint.base.protocol import service_model
from policy_engine.adapters.endpoint.operations import HANDLERS
from tests.policy_engine import fuzz

TIME_LIMIT = 10.0
SIGNED = "AWS4-HMAC-SHA256 Credential=fuzz/20260101/us-east-1/batch/aws4_request, SignedHeaders=host, Signature=0"
JSON_11 = "application/x-amz-json-1.1"
QUEUE_ARN = "arn:aws:batch:us-east-1:123456789012:job-queue/training"

#: Values that have broken handlers before, put where any member is expected.
HOSTILE: list[Any] = [None, float("nan"), float("inf"), -float("inf"), 1e308, -1e308, 5e-324, 2**31, 2**63, 10**40,
                      -1, 0, True, "", "x" * 100_000, "\x1b[31mred", "../../x", "%2e%2e%2f", "\ud800", "NaN",
                      "1e308", "9999-12-31T23:59:59Z", "10000-01-01", [], {}, [None], {"a": None}, [[[[[]]]]],
                      "arn:aws:batch:us-east-1:123456789012:job-queue/training/../x", "training", "QS1"]
#: Plausible values per member name, so a request gets past validation into the handlers often.
PLAUSIBLE: dict[str, list[Any]] = {
    "jobQueue": ["training", QUEUE_ARN, "nope"], "quotaShareName": ["QS1", "QS2", "QS3", "QSX"],
    "jobName": ["j", "job-1", "a" * 128], "serviceJobType": ["SAGEMAKER_TRAINING"],
    "schedulingPriority": [0, 1, 5, 9999, 10000], "quotaShareArn": [QUEUE_ARN + "/quota-share/QS1"],
    "jobId": ["nope"], "serviceEnvironmentName": ["gpu-env", "env2"], "capacityUnit": ["ml.g5.xlarge", "ml.x"],
    "maxCapacity": [0, 1, 3, 10**6], "strategy": ["RESERVE", "LEND", "LEND_AND_BORROW"], "borrowLimit": [-1, 0, 200],
    "maxResults": [1, 100, 101], "name": ["JOB_NAME", "QUOTA_SHARE_NAME", "BEFORE_CREATED_AT", "x"],
}
#: The control API: (method, route) and the query values ``clock/advance`` is sent with.
CONTROL = [("GET", "clock"), ("POST", "clock/advance"), ("POST", "reset"), ("POST", "topology"), ("GET", "export"),
           ("GET", "findings"), ("GET", "events"), ("GET", "nowhere")]
SECONDS = ["0", "1", "3600", "1e9", "253402300800", "1e13", "1e308", "1e999", "nan", "-1", "", "x", "%ff",
           "1" * 5000]


@dataclass
class Request:
    kind: str
    method: str
    path: str
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    #: the guard must refuse it (403/401): the state must not change
    refused: bool = False


@dataclass
class Answer:
    request: Request
    status: int
    seconds: float
    problem: str | None


def _payload(rng: random.Random) -> str:
    config: dict[str, Any] = {"InstanceType": rng.choice(["ml.g5.xlarge", "ml.g5.xlarge", "ml.p5.48xlarge"]),
                              "InstanceCount": rng.choice([1, 1, 2, 0, 10**9])}
    payload: dict[str, Any] = {"ResourceConfig": config}
    if rng.random() < 0.3:
        payload["StoppingCondition"] = {"MaxRuntimeSeconds": rng.choice([60, 3600, 10**12, 1.5])}
    if rng.random() < 0.15:
        leaf = rng.choice(["ResourceConfig", "InstanceType", "InstanceCount", "TrainingPlanArn"])
        (config if leaf != "ResourceConfig" else payload)[leaf] = rng.choice(HOSTILE)
    return json.dumps(payload)


def value_for(shape: Shape, name: str, rng: random.Random, depth: int = 0) -> Any:
    """A value for member ``name`` of ``shape``: mostly of its type (plausible where known), at times hostile."""
    if rng.random() < 0.08:
        return rng.choice(HOSTILE)
    if name in PLAUSIBLE and rng.random() < 0.8:
        return rng.choice(PLAUSIBLE[name])
    if name == "serviceRequestPayload":
        return _payload(rng)
    if name == "tags" and rng.random() < 0.5:
        return {"batch-quota:duration": rng.choice(["60", "3600", "1e308", "nan", "inf", "-1", "2.5e11", "x"])}
    kind = shape.type_name
    if kind == "structure":
        members = shape.members.items()
        return {key: value_for(member, key, rng, depth + 1) for key, member in members
                if key in shape.required_members or (rng.random() < 0.4 and depth < 4)}
    if kind == "list":
        return [value_for(shape.member, name, rng, depth + 1) for _ in range(rng.choice([0, 1, 1, 2, 3]))]
    if kind == "map":
        return {f"k{i}": value_for(shape.value, name, rng, depth + 1) for i in range(rng.choice([0, 1, 2]))}
    if kind == "string":
        return rng.choice(shape.enum) if shape.enum else rng.choice(["x", "training", "QS1", "a-b_c"])
    if kind in ("integer", "long"):
        return rng.choice([0, 1, 5, 100, -1, 2**31 - 1])
    if kind in ("double", "float"):
        return rng.choice([0.0, 0.5, 1e3])
    if kind == "timestamp":
        return rng.choice([0, 1_800_000_000, 253_402_300_799, "2026-12-06T00:00:00Z"])
    if kind == "boolean":
        return rng.random() < 0.5
    return None


#: Valid requests of the walkthrough's account (operation, body): a seed gets one leaf replaced by a hostile value,
#: or none, so the campaign also drives the scheduler and reaches the handlers past validation.
SEEDS: list[tuple[str, dict[str, Any]]] = [
    ("SubmitServiceJob", {"jobName": "j", "jobQueue": "training", "quotaShareName": "QS1",
                          "serviceJobType": "SAGEMAKER_TRAINING", "schedulingPriority": 5,
                          "serviceRequestPayload": json.dumps({"ResourceConfig": {"InstanceType": "ml.g5.xlarge",
                                                                                  "InstanceCount": 1}}),
                          "tags": {"batch-quota:duration": "600"}, "retryStrategy": {"attempts": 2},
                          "timeoutConfig": {"attemptDurationSeconds": 3600},
                          "preemptionConfiguration": {"preemptionRetriesBeforeTermination": 3}}),
    ("ListServiceJobs", {"jobQueue": "training", "jobStatus": "RUNNING", "maxResults": 10}),
    ("ListServiceJobs", {"jobQueue": "training", "filters": [{"name": "JOB_NAME", "values": ["j*"]}]}),
    ("ListServiceJobs", {"jobQueue": "training", "filters": [{"name": "AFTER_CREATED_AT", "values": ["0"]}]}),
    ("GetJobQueueSnapshot", {"jobQueue": "training"}),
    ("UpdateQuotaShare", {"quotaShareArn": QUEUE_ARN + "/quota-share/QS2",
                          "capacityLimits": [{"maxCapacity": 2, "capacityUnit": "ml.g5.xlarge"}],
                          "resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": 100},
                          "preemptionConfiguration": {"inSharePreemption": "ENABLED"}}),
    ("CreateQuotaShare", {"quotaShareName": "QS4", "jobQueue": "training",
                          "capacityLimits": [{"maxCapacity": 1, "capacityUnit": "ml.g5.xlarge"}],
                          "resourceSharingConfiguration": {"strategy": "LEND"},
                          "preemptionConfiguration": {"inSharePreemption": "DISABLED"}}),
    ("UpdateServiceEnvironment", {"serviceEnvironment": "gpu-env",
                                  "capacityLimits": [{"maxCapacity": 4, "capacityUnit": "ml.g5.xlarge"}]}),
    ("DescribeQuotaShare", {"quotaShareArn": QUEUE_ARN + "/quota-share/QS1"}),
    ("DescribeJobQueues", {"jobQueues": ["training"]}),
    ("TerminateServiceJobs", {"jobIds": ["nope"], "reason": "fuzz"}),
]


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key)
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*path, index)
            yield from _leaves(item, (*path, index))


def _seed_request(rng: random.Random) -> Request:
    name, seed = rng.choice(SEEDS)
    body = json.loads(json.dumps(seed))
    if rng.random() < 0.75:
        *parent_path, last = rng.choice(list(_leaves(body)))
        parent = body
        for step in parent_path:
            parent = parent[step]
        parent[last] = rng.choice(HOSTILE)
    operation = service_model().operation_model(name)
    return Request(f"seed {name}", operation.http["method"], operation.http["requestUri"], _json(body),
                   {"Content-Type": "application/json", "Authorization": SIGNED})


def _json(value: Any) -> bytes:
    return json.dumps(value, allow_nan=True).encode("utf-8", "surrogatepass")


def _batch_request(rng: random.Random) -> Request:
    model = service_model()
    name = rng.choice(sorted(HANDLERS))
    operation = model.operation_model(name)
    shape = operation.input_shape
    body = value_for(shape, "", rng) if shape is not None else {}
    path = operation.http["requestUri"].split("?", 1)[0]
    if "{resourceArn}" in path:
        arn = body.pop("resourceArn", QUEUE_ARN) if isinstance(body, dict) else QUEUE_ARN
        from urllib.parse import quote

        path = path.replace("{resourceArn}", quote(str(arn).encode("utf-8", "surrogatepass"), safe=""))
        if isinstance(body, dict):
            body.pop("tagKeys", None)
    data = _json(body)
    if rng.random() < 0.05:
        data = rng.choice([b"[" * 5000, b"{", b"\xff\xfe", b"null", data[: len(data) // 2]])
    return Request(f"batch {name}", operation.http["method"], path, data,
                   {"Content-Type": "application/json", "Authorization": SIGNED})


def _json_11_request(rng: random.Random) -> Request:
    if rng.random() < 0.5:
        operation = "LookupEvents"
        shape = cloudtrail.service_model().operation_model(operation).input_shape
        target = cloudtrail.TARGET_PREFIX + operation
    else:
        operation = rng.choice(sagemaker.OPERATIONS)
        shape = sagemaker.service_model().operation_model(operation).input_shape
        target = sagemaker.TARGET_PREFIX + operation
    body = _json(value_for(shape, "", rng))
    return Request(f"json-1.1 {operation}", "POST", "/", body,
                   {"Content-Type": JSON_11, "X-Amz-Target": target, "Authorization": SIGNED})


#: A template of the walkthrough's kind for the deploy rehearsal's CloudFormation (a seed the campaign mutates).
TEMPLATE = json.dumps({
    "Parameters": {"Team": {"Type": "String", "Default": "ml"}},
    "Resources": {
        "Policy": {"Type": "AWS::Batch::SchedulingPolicy", "Properties": {
            "Name": "fuzz", "QuotaSharePolicy": {"IdleResourceAssignmentStrategy": "FIFO"}}},
        "Share": {"Type": "AWS::Batch::QuotaShare", "Properties": {
            "QuotaShareName": {"Fn::Sub": "${Team}-share"}, "JobQueue": "training",
            "CapacityLimits": [{"CapacityUnit": "ml.g5.xlarge", "MaxCapacity": 1}],
            "ResourceSharingConfiguration": {"Strategy": "LEND"},
            "PreemptionConfiguration": {"InSharePreemption": "DISABLED"}}},
        "Topic": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": {"Fn::Join": ["-", ["a", {"Ref": "Team"}]]}}}},
    "Outputs": {"Arn": {"Value": {"Fn::GetAtt": ["Share", "QuotaShareArn"]}, "Export": {"Name": "FuzzArn"}}},
}).encode()


def _rehearsal_request(rng: random.Random) -> Request:
    """A request of the deploy rehearsal (STS, SSM, S3, CloudFormation, Logs): a change set of a mutated
    template, the calls around it, or a hostile body (docs/rehearsal.md)."""
    from urllib.parse import urlencode

    service = rng.choice(["cloudformation"] * 4 + ["sts", "ssm", "s3", "logs"])
    signed = SIGNED.replace("/batch/", f"/{service}/")
    if service in ("ssm", "logs"):
        target = rng.choice(["AmazonSSM.GetParameter", "AmazonSSM.PutParameter", "Logs_20140328.FilterLogEvents",
                             "Logs_20140328.DescribeLogGroups", "AmazonSSM.Nope"])
        body = rng.choice([b'{"Name": "/cdk-bootstrap/hnb659fds/version"}', b'{"Name": 5}', b"[", b"{}",
                           b'{"logGroupName": "x", "Name": "/p", "Value": "v", "Overwrite": true}'])
        return Request(f"rehearsal {target}", "POST", "/", body,
                       {"Content-Type": JSON_11, "X-Amz-Target": target, "Authorization": signed})
    if service == "s3":
        method = rng.choice(["GET", "PUT", "HEAD", "DELETE", "POST"])
        path = rng.choice(["/cdk-hnb659fds-assets-123456789012-us-east-1/t.json", "/", "/nope/x",
                           "/cdk-hnb659fds-assets-123456789012-us-east-1?list-type=2&max-keys=" +
                           rng.choice(["1", "-1", "x", "99999999999999999999"]),
                           "/cdk-hnb659fds-assets-123456789012-us-east-1?location", "/%2e%2e/%00"])
        return Request(f"rehearsal s3 {method}", method, path, TEMPLATE if method == "PUT" else b"",
                       {"Authorization": signed})
    if service == "sts":
        form = {"Action": rng.choice(["GetCallerIdentity", "AssumeRole", "Nope"]), "Version": "2011-06-15",
                "RoleArn": "arn:aws:iam::123456789012:role/x", "RoleSessionName": rng.choice(["s", "", "x" * 70])}
    else:
        template = TEMPLATE if rng.random() < 0.3 else fuzz.mutate(TEMPLATE, rng)
        action = rng.choice(["CreateChangeSet"] * 3 + ["ExecuteChangeSet", "DescribeStacks", "DeleteStack",
                                                       "DescribeChangeSet", "GetTemplate", "DescribeStackEvents",
                                                       "DeleteChangeSet", "ListExports"])
        form = {"Action": action, "Version": "2010-05-15", "StackName": rng.choice(["Fuzz", "", "arn:aws:x"]),
                "ChangeSetName": rng.choice(["cs", "cs2"]),
                "ChangeSetType": rng.choice(["CREATE", "UPDATE", "BOTH"]),
                "TemplateBody": template.decode("utf-8", "replace"),
                "Parameters.member.1.ParameterKey": rng.choice(["Team", "Nope"]),
                "Parameters.member.1.ParameterValue": rng.choice(["ml", "", "x" * 5000])}
    body = urlencode(form).encode()
    if rng.random() < 0.05:
        body = rng.choice([b"\xff\xfe", b"Action=" + b"A" * 100_000, b"%%%", body[: len(body) // 2]])
    return Request(f"rehearsal {service} {form['Action']}", "POST", "/", body,
                   {"Content-Type": "application/x-www-form-urlencoded", "Authorization": signed})


def _control_request(rng: random.Random) -> Request:
    method, route = rng.choice(CONTROL)
    path = f"/_batch-quota/{route}"
    body = b""
    if route == "clock/advance":
        path += f"?seconds={rng.choice(SECONDS)}"
    elif route == "topology":
        seed = fuzz.TOPOLOGY_JSON if rng.random() < 0.5 else fuzz.TOPOLOGY_YAML
        body = seed if rng.random() < 0.3 else fuzz.mutate(seed, rng)
    content_type = "application/yaml" if route == "topology" and rng.random() < 0.5 else "application/json"
    return Request(f"control {route}", method, path, body, {"Content-Type": content_type})


def _guard_request(rng: random.Random) -> Request:
    """A request the guard must refuse: the rest of it is a valid request of some route."""
    base = rng.choice([_batch_request, _json_11_request, _control_request, _rehearsal_request])(rng)
    attack = rng.choice(["origin", "host", "unsigned", "form", "text", "none"])
    headers = dict(base.headers)
    if attack == "origin":
        headers["Origin"] = rng.choice(["http://evil.example", "null", "https://localhost.evil.example",
                                        "http://127.0.0.1.evil.example", "file://"])
    elif attack == "host":
        headers["Host"] = rng.choice(["attacker.example", "attacker.example:4599", "localhost.evil.example",
                                      "127.0.0.1.nip.example", "[::1", "a:b:c"])
    elif base.kind.startswith("control"):
        if base.method == "GET":
            headers["Origin"] = "http://evil.example"
        else:
            headers["Content-Type"] = {"form": "application/x-www-form-urlencoded", "text": "text/plain",
                                       "none": "", "unsigned": "multipart/form-data; boundary=x"}[attack]
    else:
        headers.pop("Authorization")
    return Request(f"guard {attack} / {base.kind}", base.method, base.path, base.body, headers, refused=True)


def requests(rng: random.Random, count: int) -> Iterator[Request]:
    makers = [_batch_request] * 4 + [_seed_request] * 6 + [_json_11_request] * 2 + [_control_request] * 2 + [
        _guard_request] * 2 + [_rehearsal_request] * 3
    for _ in range(count):
        yield rng.choice(makers)(rng)


class Server:
    """``batch-quota serve`` in its own process (the walkthrough's account, speed 0, events and state files in a
    temporary folder), for the campaign; ``log()`` is its stderr so far."""

    def __init__(self, *args: str) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="batch-quota-fuzz-")
        folder = Path(self._folder.name)
        self._log = (folder / "serve.log").open("w+")
        command = [str(Path(sys.executable).with_name("batch-quota")), "serve", "--walkthrough", "--port", "0",
                   "--speed", "0", "--events", str(folder / "events.jsonl"), "--state", str(folder / "state.sqlite"),
                   *args]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self._log, text=True)
        assert self.process.stdout is not None
        url = self.process.stdout.readline().strip()
        if not url:
            raise RuntimeError(f"batch-quota serve did not start: {self.log()}")
        self.host, port = url[len("http://"):].rsplit(":", 1)
        self.port = int(port)

    def log(self) -> str:
        self._log.flush()
        self._log.seek(0)
        return self._log.read()

    def stop(self) -> str:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        text = self.log()
        self._log.close()
        self._folder.cleanup()
        return text

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _exchange(server: Server, request: Request) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection(server.host, server.port, timeout=TIME_LIMIT)
    try:
        connection.putrequest(request.method, request.path, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", request.headers.get("Host", f"{server.host}:{server.port}"))
        for name, value in request.headers.items():
            if name != "Host":
                connection.putheader(name, value)
        connection.putheader("Content-Length", str(len(request.body)))
        connection.endheaders(request.body)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _state(server: Server) -> bytes:
    """What a refused request must not change: the served account's export (jobs, topology, clock) and the deploy
    rehearsal's stacks."""
    status, body = _exchange(server, Request("state", "GET", "/_batch-quota/export"))
    stacks_status, stacks = _exchange(server, Request("stacks", "GET", "/_batch-quota/stacks"))
    return body + stacks if status == stacks_status == 200 else b"unreadable"


def send(server: Server, request: Request) -> Answer:
    before = _state(server) if request.refused else b""
    began = time.perf_counter()
    try:
        status, body = _exchange(server, request)
    except (OSError, http.client.HTTPException) as error:
        return Answer(request, 0, time.perf_counter() - began, f"no answer: {type(error).__name__}: {error}")
    seconds = time.perf_counter() - began
    return Answer(request, status, seconds, judge(request, status, body, seconds, before, server))


def judge(request: Request, status: int, body: bytes, seconds: float, before: bytes = b"",
          server: Server | None = None) -> str | None:
    """What is wrong with an answer, or ``None``."""
    if status >= 500:
        return f"HTTP {status}: {body[:300]!r}"
    if seconds > TIME_LIMIT:
        return f"over {TIME_LIMIT} s"
    if request.method == "HEAD" and not body:
        pass  # a HEAD answer has no body
    elif request.kind.startswith("rehearsal") and not request.refused and (
            not body or body.lstrip().startswith(b"<")):
        pass  # the query protocol and S3 answer XML (or nothing: PUT, DELETE)
    else:
        try:
            json.loads(body)
        except ValueError:
            return f"not JSON (HTTP {status}): {body[:200]!r}"
    if request.refused:
        if status not in (401, 403, 431):  # 431: a head past the parser's bound, refused before the guard
            return f"the guard let it through: HTTP {status}"
        if server is not None and _state(server) != before:
            return "a refused request changed the state"
    return None


def oversized_heads() -> Iterator[Request]:
    """Heads past the parser's bound: a header, a request line, many headers (each must be a 431)."""
    yield Request("head: 200 KB header", "GET", "/_batch-quota/clock", headers={"X-Big": "a" * 200_000})
    yield Request("head: 200 KB path", "GET", "/v1/tags/" + "a" * 200_000, headers={"Authorization": SIGNED})
    yield Request("head: 3,000 headers", "GET", "/_batch-quota/clock",
                  headers={f"X-H{i}": "v" * 40 for i in range(3000)})


def send_head(server: Server, request: Request) -> Answer:
    began = time.perf_counter()
    head = f"{request.method} {request.path} HTTP/1.1\r\nHost: {server.host}:{server.port}\r\n" + "".join(
        f"{name}: {value}\r\n" for name, value in request.headers.items()) + "\r\n"
    answer = b""
    with socket.create_connection((server.host, server.port), timeout=TIME_LIMIT) as sock:
        with contextlib.suppress(OSError):  # closed part way: the answer is already there
            sock.sendall(head.encode())
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                answer += chunk
    seconds = time.perf_counter() - began
    problem = None if answer.startswith(b"HTTP/1.1 431 ") else f"not a 431: {answer[:100]!r}"
    return Answer(request, 431 if problem is None else 0, seconds, problem)


def server_problems(log: str) -> list[str]:
    """Tracebacks and internal errors the server logged (it logs a bug before answering 500)."""
    return [line for line in log.splitlines() if "Traceback" in line or "internal error" in line]
