"""Throttling and retries over HTTP against a loopback Batch endpoint: no page is lost, limits are named."""

from __future__ import annotations

import csv
import io

import pytest
from botocore.retries import standard

from policy_engine.adapters.aws.clients import Api, AwsError, ClientOptions, make_client
from policy_engine.adapters.aws.history import write_history
from tests.policy_engine.adapters.aws.fake_account import arn, service_job
from tests.policy_engine.adapters.aws.loopback import LoopbackBatch


@pytest.fixture(autouse=True)
def short_backoff(monkeypatch):
    """botocore's retry decisions stay real; only its sleep between attempts is shortened."""
    delays = []
    monkeypatch.setattr(standard.ExponentialBackoff, "delay_amount", lambda self, context: delays.append(1) or 0.01)
    return delays


def _queue(index: int) -> dict:
    name = f"q{index:02d}"
    return {"jobQueueName": name, "jobQueueArn": arn("job-queue", name), "state": "ENABLED", "priority": 1,
            "computeEnvironmentOrder": [], "jobQueueType": "ECS", "status": "VALID"}


def _paged_queues(body: dict) -> dict:
    start = int(body.get("nextToken") or 0)
    page = {"jobQueues": [_queue(i) for i in range(start, min(start + 10, 25))]}
    if start + 10 < 25:
        page["nextToken"] = str(start + 10)
    return page


@pytest.mark.parametrize("mode", ["standard", "adaptive"])
def test_a_throttled_page_is_retried_not_lost(mode, short_backoff):
    with LoopbackBatch({"DescribeJobQueues": _paged_queues}) as server:
        server.throttle("DescribeJobQueues", 2, when=lambda body: body.get("nextToken") == "10")
        api = Api(make_client(ClientOptions(endpoint_url=server.url, retry_mode=mode, max_attempts=4)))
        names = [q["jobQueueName"] for page in api.pages("DescribeJobQueues", "every job queue")
                 for q in page["jobQueues"]]
    assert names == [f"q{i:02d}" for i in range(25)]
    assert api.calls["DescribeJobQueues"] == 3  # pages asked for
    assert server.requests["DescribeJobQueues"] == 5 and server.throttled["DescribeJobQueues"] == 2
    assert len(short_backoff) == 2


def test_throttling_past_max_attempts_is_one_line_naming_the_call():
    with LoopbackBatch({"DescribeJobQueues": _paged_queues}) as server:
        server.throttle("DescribeJobQueues", 10)
        api = Api(make_client(ClientOptions(endpoint_url=server.url, retry_mode="standard", max_attempts=3)))
        with pytest.raises(AwsError) as error:
            list(api.pages("DescribeJobQueues", "every job queue"))
    assert server.requests["DescribeJobQueues"] == 3
    assert error.value.line == ("DescribeJobQueues (every job queue): throttled after 3 attempt(s) "
                                "(TooManyRequestsException): Too Many Requests; raise --max-attempts")


def test_history_with_concurrent_describes_keeps_order_through_throttling():
    jobs = [service_job(f"job{i:03d}", "QS1", "SUCCEEDED", created_ms=1_000 + i, started_ms=2_000 + i,
                        stopped_ms=10_000 + i, job_id=f"00000000-0000-0000-0000-{i:012d}") for i in range(120)]
    by_id = {summary["jobId"]: described for summary, described in jobs}

    def list_jobs(body: dict) -> dict:
        assert body["filters"][0]["name"] == "AFTER_CREATED_AT"  # the window, applied by AWS
        start = int(body.get("nextToken") or 0)
        page = {"jobSummaryList": [summary for summary, _ in jobs[start:start + 100]]}
        if start + 100 < len(jobs):
            page["nextToken"] = str(start + 100)
        return page

    with LoopbackBatch({"ListServiceJobs": list_jobs,
                        "DescribeServiceJob": lambda body: by_id[body["jobId"]]}) as server:
        once: set[str] = set()

        def first_time_for_some(body: dict) -> bool:  # jobs ending in 3 or 7 are throttled once each
            if body["jobId"].endswith(("3", "7")) and body["jobId"] not in once:
                once.add(body["jobId"])
                return True
            return False

        server.throttle("DescribeServiceJob", 24, when=first_time_for_some)
        server.throttle("ListServiceJobs", 1, when=lambda body: body.get("nextToken") == "100")
        api = Api(make_client(ClientOptions(endpoint_url=server.url, retry_mode="standard", max_attempts=3,
                                            workers=6)))
        out = io.StringIO()
        stats = write_history(api, "training", 0, out, workers=6)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert stats.written == 120
    # the listing's order, reversed (AWS lists newest first, the workload is oldest first): this fake lists job000
    # first, so the rows end with it
    assert [row["name"][:6] for row in rows] == [f"job{i:03d}" for i in reversed(range(120))]
    assert server.throttled["DescribeServiceJob"] == 24 and server.requests["DescribeServiceJob"] == 144
    assert api.calls["DescribeServiceJob"] == 120 and api.calls["ListServiceJobs"] == 2


def test_no_region_and_an_unknown_profile_are_one_line(monkeypatch):
    monkeypatch.delenv("AWS_REGION")
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    with pytest.raises(AwsError) as error:
        make_client(ClientOptions())
    assert error.value.line == ("configuration (batch client): no region: pass --region, set AWS_DEFAULT_REGION "
                                "or a profile's region")
    with pytest.raises(AwsError) as error:
        make_client(ClientOptions(profile="nobody"))
    assert error.value.line == ("configuration (profile 'nobody'): no such profile in the AWS config or "
                                "credentials file")


def test_no_credentials_is_one_line(monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with LoopbackBatch({"DescribeJobQueues": _paged_queues}) as server:
        api = Api(make_client(ClientOptions(endpoint_url=server.url)))
        with pytest.raises(AwsError) as error:
            api.call("DescribeJobQueues", "every job queue")
    assert server.requests["DescribeJobQueues"] == 0
    assert error.value.line == ("DescribeJobQueues (every job queue): no credentials: configure a profile "
                                "(--profile), environment variables or an instance role")


def test_the_import_command_over_http_with_throttled_tags(monkeypatch, tmp_path):
    """The real client factory and CLI, sent by AWS_ENDPOINT_URL_BATCH to the loopback endpoint."""
    from click.testing import CliRunner

    from policy_engine.cli.app import main
    from policy_engine.inputs.examples import example_topology
    from policy_engine.inputs.loading import load_topology
    from tests.policy_engine.adapters.aws.fake_account import FakeAccount, http_handlers, topology_template

    account = FakeAccount.from_template(topology_template(example_topology()), stack_name="Http")
    out = tmp_path / "account.yaml"
    with LoopbackBatch(http_handlers(account)) as server:
        server.throttle("ListTagsForResource", 2)
        monkeypatch.setenv("AWS_ENDPOINT_URL_BATCH", server.url)
        result = CliRunner().invoke(main, ["import", "-o", str(out), "--retry-mode", "standard",
                                           "--no-training-plans"])  # a Batch-only loopback
    assert result.exit_code == 0, result.output
    assert "in 7 API call(s)" in result.stderr
    assert server.requests["ListTagsForResource"] == 5 and server.throttled["ListTagsForResource"] == 2
    imported = load_topology(out)
    assert [s.name for s in imported.job_queues[0].shares] == ["QS1", "QS2", "QS3"]
    assert imported.job_queues[0].shares[0].system_tags["aws:cloudformation:stack-name"] == "Http"


@pytest.mark.parametrize("mode", ["standard", "adaptive"])
def test_an_endpoint_that_refuses_the_connection_is_one_line_after_one_attempt(mode, short_backoff):
    """Connection refused is not throttling: no backoff, no second attempt (botocore would spend about 13 s)."""
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    client = make_client(ClientOptions(endpoint_url=url, retry_mode=mode, max_attempts=10))
    attempts = []
    client.meta.events.register("before-send", lambda **kwargs: attempts.append(1))
    with pytest.raises(AwsError) as error:
        Api(client).call("DescribeJobQueues", "every job queue")
    assert len(attempts) == 1 and short_backoff == []
    assert error.value.line == (f'DescribeJobQueues (every job queue): Could not connect to the endpoint URL: '
                                f'"{url}/v1/describejobqueues"')
    assert client.meta.config.connect_timeout == 5  # an endpoint that never answers: an error after 5 s
