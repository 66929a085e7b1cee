"""The request guard: a web page cannot drive the endpoint (cross-origin, DNS rebinding, form posts), every
route is behind it, and the project's own clients pass it (docs/endpoint.md, "A local tool is not a door")."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import boto3
import pytest
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import ClientError

from policy_engine.adapters.endpoint import cloudtrail
from policy_engine.adapters.endpoint.base.protocol import Router
from policy_engine.adapters.endpoint.guard import GuardPolicy, RequestHead, host_of, is_loopback
from policy_engine.adapters.endpoint.rehearsal.cloud import SERVICES as REHEARSED
from policy_engine.adapters.endpoint.server import start_in_thread
from policy_engine.adapters.endpoint.service import Options, Service
from policy_engine.inputs.examples import example_topology
from tests.policy_engine.adapters.endpoint.conftest import SIGNED, client, payload, submit

SUBMIT = json.dumps({"jobName": "x", "jobQueue": "training", "serviceJobType": "SAGEMAKER_TRAINING",
                     "quotaShareName": "QS1", "serviceRequestPayload": payload()}).encode()
OTHER_TOPOLOGY = json.dumps({"service_environments": [{"name": "other", "capacity": {"ml.g5.xlarge": 1}}],
                             "job_queues": [{"name": "elsewhere", "service_environment": "other", "shares": [
                                 {"name": "Z", "capacity": {"ml.g5.xlarge": 1}, "strategy": "LEND"}]}]}).encode()


@pytest.fixture
def served():
    with start_in_thread(Service(Options(speed=0), example_topology())) as running:
        yield running


def _send(url: str, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None,
          host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    """One request over HTTP with exactly these headers (``host``: the Host header; None: the URL's)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        if host != "":
            connection.putheader("Host", host if host is not None else parts.netloc)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def _jobs(endpoint) -> list[str]:
    return [job["jobName"] for job in client(endpoint).list_service_jobs(jobQueue="training")["jobSummaryList"]]


def _queues(endpoint) -> list[str]:
    return [q["jobQueueName"] for q in client(endpoint).describe_job_queues()["jobQueues"]]


# --- what a web page can send ---------------------------------------------------------------------------------

ATTACKS = {
    # a page on evil.example posts "simple" requests (no preflight) to http://127.0.0.1:4599
    "cross-origin text/plain reset": ("POST", "/_batch-quota/reset", b"{}",
                                      {"Origin": "http://evil.example", "Content-Type": "text/plain"}, None),
    "cross-origin text/plain topology": ("POST", "/_batch-quota/topology", OTHER_TOPOLOGY,
                                         {"Origin": "http://evil.example", "Content-Type": "text/plain"}, None),
    "cross-origin clock advance": ("POST", "/_batch-quota/clock/advance?seconds=100000", b"",
                                   {"Origin": "https://evil.example", "Content-Type": "application/json"}, None),
    "cross-origin submit (REST-JSON ignores the type)": ("POST", "/v1/submitservicejob", SUBMIT,
                                                         {"Origin": "http://evil.example",
                                                          "Content-Type": "text/plain", **SIGNED}, None),
    "sandboxed page (Origin null)": ("POST", "/_batch-quota/reset", b"{}",
                                     {"Origin": "null", "Content-Type": "application/json"}, None),
    # a form on any page (its Origin may be stripped by a privacy extension): the form encoding is refused
    "form-encoded reset": ("POST", "/_batch-quota/reset", b"a=b",
                           {"Content-Type": "application/x-www-form-urlencoded"}, None),
    "form-encoded topology": ("POST", "/_batch-quota/topology", b"service_environments=x",
                              {"Content-Type": "application/x-www-form-urlencoded"}, None),
    "multipart topology": ("POST", "/_batch-quota/topology", OTHER_TOPOLOGY,
                           {"Content-Type": "multipart/form-data; boundary=x"}, None),
    "text/plain reset without Origin": ("POST", "/_batch-quota/reset", b"{}", {"Content-Type": "text/plain"}, None),
    "reset without a content type": ("POST", "/_batch-quota/reset", b"", {}, None),
    # DNS rebinding: attacker.example now resolves to 127.0.0.1, so the page is same-origin with its own name
    "rebinding: read the export": ("GET", "/_batch-quota/export", b"", {}, "attacker.example"),
    "rebinding: read the export, with a port": ("GET", "/_batch-quota/export", b"", {}, "attacker.example:4599"),
    "rebinding: reset": ("POST", "/_batch-quota/reset", b"{}", {"Content-Type": "application/json"},
                         "attacker.example"),
    "rebinding: list jobs": ("POST", "/v1/listservicejobs", b'{"jobQueue": "training"}', dict(SIGNED),
                             "attacker.example"),
    "rebinding: a name ending in localhost's letters": ("GET", "/_batch-quota/export", b"", {},
                                                        "evil-localhost"),
    "no Host header": ("GET", "/_batch-quota/export", b"", {}, ""),
    # an AWS API call without an Authorization header (a browser sends none cross-origin without a preflight)
    "unsigned submit": ("POST", "/v1/submitservicejob", SUBMIT, {"Content-Type": "application/json"}, None),
    "unsigned tag call": ("GET", "/v1/tags/arn%3Aaws%3Abatch%3Aus-east-1%3A123456789012%3Ajob-queue%2Ftraining",
                          b"", {}, None),
    "unsigned LookupEvents": ("POST", "/", b"{}", {"X-Amz-Target": cloudtrail.TARGET_PREFIX + "LookupEvents",
                                                   "Content-Type": "application/x-amz-json-1.1"}, None),
    "unsigned ListTrainingPlans": ("POST", "/", b"{}", {"X-Amz-Target": "SageMaker.ListTrainingPlans",
                                                        "Content-Type": "application/x-amz-json-1.1"}, None),
    "empty Authorization": ("POST", "/v1/submitservicejob", SUBMIT, {"Authorization": " "}, None),
}


@pytest.mark.parametrize("case", list(ATTACKS))
def test_a_web_pages_request_is_refused_403_and_changes_nothing(served, case):
    batch = client(served)
    submit(batch, "kept", "QS1")
    before = served.clock()
    method, path, body, headers, host = ATTACKS[case]
    status, answer_headers, answer = _send(served.url, method, path, body, headers, host)
    assert status == 403, (status, answer[:300])
    error = json.loads(answer)
    assert set(error) == {"__type", "message"}
    assert error["__type"] in ("AccessDeniedException", "MissingAuthenticationTokenException")
    assert answer_headers["x-amzn-errortype"] == error["__type"]
    # nothing happened: the job, the topology and the clock are as they were
    assert _jobs(served) == ["kept"]
    assert _queues(served) == ["training"]
    assert served.clock() == before


def test_a_refusal_reads_as_an_aws_error_in_boto3_and_in_the_json_11_services(served):
    unsigned = boto3.client("batch", endpoint_url=served.url, region_name="us-east-1",
                            config=Config(signature_version=UNSIGNED))
    with pytest.raises(ClientError) as caught:
        unsigned.describe_job_queues()
    assert caught.value.response["Error"]["Code"] == "MissingAuthenticationTokenException"
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    status, headers, answer = _send(served.url, "POST", "/", b"{}", {
        "X-Amz-Target": "SageMaker.ListTrainingPlans", "Content-Type": "application/x-amz-json-1.1"})
    assert (status, headers["content-type"]) == (403, "application/x-amz-json-1.1")
    assert json.loads(answer)["__type"] == "MissingAuthenticationTokenException"


# --- every route is behind it ---------------------------------------------------------------------------------

def _every_route() -> list[tuple[str, str, dict[str, str]]]:
    """(method, path, extra headers) of every route the endpoint has, and of routes it does not have yet."""
    routes = []
    router = Router()
    for (method, path), _ in router.literal.items():
        routes.append((method, path, {}))
    for route in router.patterns:
        path = route.pattern.pattern.replace("(?P<resourceArn>[^/]+)", "arn%3Ax").replace("$", "")
        routes.append((route.method, path.replace("\\", ""), {}))
    routes += [(method, f"/_batch-quota/{name}", {}) for method, name in (
        ("GET", "clock"), ("POST", "clock/advance?seconds=1"), ("POST", "reset"), ("POST", "topology"),
        ("GET", "export"), ("GET", "findings"), ("GET", "events"), ("GET", "stacks"), ("GET", "no-such-route"))]
    routes += [("POST", "/", {"X-Amz-Target": target}) for target in (
        cloudtrail.TARGET_PREFIX + "LookupEvents", "SageMaker.ListTrainingPlans", "SageMaker.CreateTrainingJob",
        "AmazonSSM.GetParameter")]
    # the deploy rehearsal's services, by the credential scope of a signed request (rehearsal.cloud.SERVICES)
    for service in sorted(REHEARSED):
        scoped = {"Authorization": SIGNED["Authorization"].replace("/batch/", f"/{service}/")}
        routes += [("POST", "/", scoped), ("GET", "/cdk-assets/template.json", scoped), ("PUT", "/bucket/key", scoped)]
    # a route added later is guarded without a change here
    routes += [("POST", "/", {}), ("GET", "/cdk-assets/template.json", {}), ("PUT", "/bucket/key", {})]
    return routes


@pytest.mark.parametrize(("method", "path", "headers"), _every_route())
def test_every_route_refuses_a_cross_origin_or_rebinding_request(served, method, path, headers):
    json_type = {"Content-Type": "application/json", **SIGNED}
    status, _, _ = _send(served.url, method, path, b"{}", {**json_type, **headers, "Origin": "http://evil.example"})
    assert status == 403
    status, _, _ = _send(served.url, method, path, b"{}", {**json_type, **headers}, host="attacker.example")
    assert status == 403
    if not path.startswith("/_batch-quota/"):  # AWS API routes, known or not, need an Authorization header
        unsigned = {k: v for k, v in headers.items() if k != "Authorization"}
        status, _, answer = _send(served.url, method, path, b"{}", {**unsigned, "Content-Type": "application/json"})
        assert status == 403 and json.loads(answer)["__type"] == "MissingAuthenticationTokenException"


# --- what it lets through ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("origin", ["http://localhost:3000", "http://127.0.0.1:8888", "https://[::1]:9000",
                                    "http://app.localhost"])
def test_a_page_served_from_this_machine_may_call_it(served, origin):
    status, _, _ = _send(served.url, "POST", "/_batch-quota/clock/advance?seconds=1", b"",
                         {"Origin": origin, "Content-Type": "application/json"})
    assert status == 200


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST:4599", "127.0.0.1", "127.0.0.2:80", "[::1]:4599",
                                  "app.localhost", "localhost."])
def test_loopback_names_and_the_bound_address_are_answered(served, host):
    status, _, _ = _send(served.url, "GET", "/_batch-quota/clock", host=host)
    assert status == 200


def test_control_api_content_types_that_need_a_preflight_pass(served):
    for content_type in ("application/json", "application/json; charset=utf-8", "Application/JSON"):
        status, _, _ = _send(served.url, "POST", "/_batch-quota/clock/advance?seconds=1", b"",
                             {"Content-Type": content_type})
        assert status == 200, content_type
    yaml = b"service_environments: []\njob_queues: []\n"
    status, _, answer = _send(served.url, "POST", "/_batch-quota/topology", yaml, {"Content-Type": "application/yaml"})
    assert status == 200, answer
    # reads need no content type (they carry no body; a cross-origin page cannot read the answer)
    assert _send(served.url, "GET", "/_batch-quota/export")[0] == 200


def test_allow_host_adds_a_name_and_nothing_else():
    with start_in_thread(Service(Options(speed=0)), allowed_hosts=("batch.internal", "10.1.2.3")) as running:
        assert _send(running.url, "GET", "/_batch-quota/clock", host="batch.internal:4599")[0] == 200
        assert _send(running.url, "GET", "/_batch-quota/clock", host="BATCH.INTERNAL.")[0] == 200
        assert _send(running.url, "GET", "/_batch-quota/clock", host="10.1.2.3")[0] == 200
        assert _send(running.url, "GET", "/_batch-quota/clock", host="other.internal")[0] == 403
        assert _send(running.url, "GET", "/_batch-quota/clock", host="10.1.2.4")[0] == 403


@pytest.mark.parametrize(("bound", "given", "allowed", "host", "answered"), [
    ("127.0.0.1", "127.0.0.1", (), "192.168.1.5", False),  # a loopback bind: only loopback names and its address
    ("127.0.0.1", "localhost", (), "localhost", True),
    ("192.168.1.5", "192.168.1.5", (), "192.168.1.5:4599", True),  # a LAN bind: its address
    ("192.168.1.5", "192.168.1.5", (), "192.168.1.6", False),
    ("192.168.1.5", "192.168.1.5", (), "batch.example", False),
    ("192.168.1.5", "192.168.1.5", ("batch.example",), "batch.example", True),
    ("192.168.1.5", "batch.example", (), "batch.example", True),  # --host NAME: that name
    ("0.0.0.0", "0.0.0.0", (), "10.9.8.7", True),  # a wildcard bind: any address literal (never a rebinding)
    ("0.0.0.0", "0.0.0.0", (), "[fe80::1]:4599", True),
    ("0.0.0.0", "0.0.0.0", (), "attacker.example", False),  # but names only with --allow-host
    ("::", "::", ("batch.example",), "batch.example", True),
    ("::", "::", (), "127.0.0.1", True),  # this machine's own clients
])
def test_which_hosts_a_bind_answers(bound, given, allowed, host, answered):
    policy = GuardPolicy.of(bound, given, allowed)
    head = RequestHead("GET", "/_batch-quota/clock", ((b"host", host.encode()),))
    assert (policy.refusal(head) is None) is answered


@pytest.mark.parametrize(("value", "host"), [
    ("localhost:4599", "localhost"), ("[::1]:80", "[::1]"), ("[::1]", "[::1]"), ("Example.COM", "example.com"),
    ("a:b", None), ("[::1", None), ("[::1]x", None), (":80", None), ("", None)])
def test_host_headers_are_parsed_or_refused(value, host):
    assert host_of(value) == host


def test_loopback_is_the_loopback_interface_and_localhost_names():
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.255.0.1", "::1", "[::1]", "localhost", "a.b.localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "10.0.0.1", "localhost.example", "notlocalhost", "::"))


# --- the token ------------------------------------------------------------------------------------------------

def test_a_token_makes_the_control_api_require_it_and_the_aws_api_is_unchanged():
    with start_in_thread(Service(Options(speed=0), example_topology()), token="s3cret-token") as running:
        json_type = {"Content-Type": "application/json"}
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-token"},
                        {"Authorization": "Basic s3cret-token"}):
            status, answer_headers, answer = _send(running.url, "POST", "/_batch-quota/reset", b"",
                                                   {**json_type, **headers})
            assert status == 401, headers
            assert answer_headers["www-authenticate"].startswith("Bearer")
            assert json.loads(answer)["__type"] == "UnauthorizedException"
            assert _send(running.url, "GET", "/_batch-quota/export", headers=headers)[0] == 401
        status, _, _ = _send(running.url, "POST", "/_batch-quota/clock/advance?seconds=5", b"",
                             {**json_type, "Authorization": "Bearer s3cret-token"})
        assert status == 200
        # the test helper sends it; boto3's calls need no token (they carry SigV4)
        assert running.advance(5) == 10
        submit(client(running), "a", "QS1")
        running.reset()
        assert _jobs(running) == []


# --- reset ----------------------------------------------------------------------------------------------------

def test_reset_restores_the_start_up_topology_not_one_posted_since(served):
    served.load_topology(json.loads(OTHER_TOPOLOGY))
    assert _queues(served) == ["elsewhere"]
    submit(client(served), "on-other", "Z", queue="elsewhere")
    served.reset()
    assert _queues(served) == ["training"]
    assert _jobs(served) == [] and served.clock() == 0


def test_reset_of_a_resumed_state_restores_the_topology_it_was_served_with(tmp_path):
    from policy_engine.adapters.endpoint.store import Store

    state = tmp_path / "state.sqlite"
    with start_in_thread(Service(Options(speed=0), example_topology(), Store(str(state)))) as first:
        first.load_topology(json.loads(OTHER_TOPOLOGY))
    with start_in_thread(Service(Options(speed=0), None, Store(str(state)))) as resumed:
        assert _queues(resumed) == ["elsewhere"]  # the state resumed as it was
        resumed.reset()  # no TOPOLOGY this run: the topology that state started from
        assert _queues(resumed) == ["elsewhere"]
    with start_in_thread(Service(Options(speed=0), example_topology(), Store(str(state)))) as given:
        given.reset()  # TOPOLOGY given this run: that one
        assert _queues(given) == ["training"]


# --- the command line -----------------------------------------------------------------------------------------

def _serve(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([str(Path(sys.executable).with_name("batch-quota")), "serve", "--port", "0",
                                "--speed", "0", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, **(env or {})})
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def _stop(process: subprocess.Popen[str]) -> str:
    process.terminate()
    _, stderr = process.communicate(timeout=30)
    return stderr


def test_serve_on_every_interface_warns_and_takes_its_token_from_the_environment():
    process, url = _serve("--host", "0.0.0.0", env={"BATCH_QUOTA_SERVE_TOKEN": "from-env"})
    try:
        port = urlsplit(url).port
        local = f"http://127.0.0.1:{port}"
        assert _send(local, "GET", "/_batch-quota/clock")[0] == 401
        assert _send(local, "GET", "/_batch-quota/clock", headers={"Authorization": "Bearer from-env"})[0] == 200
        assert _send(local, "GET", "/_batch-quota/clock", headers={"Authorization": "Bearer from-env"},
                     host="attacker.example")[0] == 403
    finally:
        stderr = _stop(process)
    assert "warning: listening on 0.0.0.0, not a loopback address: every client that can reach it can drive " \
           "the account" in stderr


def test_serve_on_loopback_does_not_warn():
    process, url = _serve()
    try:
        assert _send(url, "GET", "/_batch-quota/clock")[0] == 200
    finally:
        stderr = _stop(process)
    assert "warning" not in stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--allow-host", "a b"], "--allow-host 'a b': expected a host name"),
    (["--allow-host", "evil.example:80"], "--allow-host 'evil.example:80'"),
    (["--allow-host", ""], "--allow-host ''"),
    (["--token", "two words"], "--token (or BATCH_QUOTA_SERVE_TOKEN): expected 1-4096 visible ASCII"),
    (["--token", ""], "--token (or BATCH_QUOTA_SERVE_TOKEN)"),
])
def test_serve_refuses_hosts_and_tokens_a_header_cannot_carry(args, message):
    from click.testing import CliRunner

    from policy_engine.cli import main

    result = CliRunner().invoke(main, ["serve", "--port", "0", *args])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: " + message), result.output
