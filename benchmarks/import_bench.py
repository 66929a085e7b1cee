"""What ``batch-quota import`` costs at AWS's account limits (50 queues x 20 shares), with a stubbed client.

The account is what the project's constructs deploy for ``large_topology()`` (as the round-trip
test builds it), answered by botocore's Stubber (request and response validation on). Prints the
API calls per operation (bounded: 3 batched Describe calls + one ListQuotaShares page per queue +
one ListTagsForResource per share) and the tool's own time: reading the account through botocore
(serialisation, parsing, stub), building and validating the topology, and writing the YAML.
Target: under 5 s. Run: ``python benchmarks/import_bench.py`` (or ``make bench``).

``--history N`` (default 0: not run; ``make bench`` passes 50,000) also streams N stubbed finished
jobs to a CSV and prints the time per job and the peak traced memory at N/10 and N jobs (flat
memory means the two agree), both with one worker through the Stubber and with the command's
default concurrency (``--workers 8``) over HTTP against a loopback Batch endpoint on 127.0.0.1
(the Stubber serves one request at a time, so concurrent calls need a real endpoint).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the test fixtures build the stubbed account
for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                   "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL_BATCH": "http://127.0.0.1:9",
                   "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
                   "AWS_EC2_METADATA_DISABLED": "true"}.items():
    os.environ[key] = value  # never reach AWS, whatever the caller's configuration

from botocore.stub import Stubber  # noqa: E402

from policy_engine.adapters.aws.account import read_account  # noqa: E402
from policy_engine.adapters.aws.clients import Api  # noqa: E402
from policy_engine.adapters.aws.history import write_history  # noqa: E402
from policy_engine.adapters.aws.topology_file import topology_text  # noqa: E402
from policy_engine.inputs.examples import large_topology  # noqa: E402
from policy_engine.inputs.loading import topology_from_data  # noqa: E402
from tests.policy_engine.adapters.aws.fake_account import FakeAccount, batch_client  # noqa: E402
from tests.policy_engine.adapters.aws.lazy_jobs import LazyHistory  # noqa: E402


def _template(topology) -> dict:
    from aws_cdk import App
    from aws_cdk.assertions import Template

    from quota_constructs import TopologyStacks

    app = App(builtin_cloud_formation_validation=False)
    resources: dict = {}
    for stack in TopologyStacks(app, topology, stack_name="Bench").stacks:
        resources.update(Template.from_stack(stack).to_json()["Resources"])
    return {"Resources": resources}


def bench_import(repeats: int) -> None:
    topology = large_topology()
    queues, shares = len(topology.job_queues), sum(len(q.shares) for q in topology.job_queues)
    account = FakeAccount.from_template(_template(topology), stack_name="Bench")
    times, calls = [], None
    for _ in range(repeats):
        client = batch_client()
        stubber = Stubber(client)
        stubbed = account.stub_import(stubber)  # the Stubber validates each response here, before the clock
        with stubber:
            start = time.perf_counter()
            api = Api(client)
            read = read_account(api)
            imported = topology_from_data(read.data, "bench account")
            text = topology_text(imported, None)
            times.append(time.perf_counter() - start)
        assert not read.errors and sum(api.calls.values()) == stubbed and len(imported.job_queues) == queues
        calls = api.calls
    print(f"import of {queues} queues x {shares // queues} shares ({shares} shares, {len(text):,} bytes of YAML)")
    print(f"  API calls: {sum(calls.values())} = " + ", ".join(f"{op} {n}" for op, n in sorted(calls.items())))
    print(f"  tool time: best {min(times):.3f} s, median {statistics.median(times):.3f} s over {repeats} runs "
          "(target < 5 s)")


def bench_history(jobs: int) -> None:
    def run(count: int, traced: bool) -> tuple[float, int]:
        client = batch_client()
        stubber = Stubber(client)
        LazyHistory(client, stubber, count, 1_000_000)
        with stubber:
            return _timed_history(Api(client), 1, count, traced)

    elapsed, _ = run(jobs, traced=False)
    print(f"history of {jobs:,} stubbed jobs: {elapsed:.1f} s ({elapsed / jobs * 1000:.2f} ms per job, "
          "Stubber included)")
    _, small = run(jobs // 10, traced=True)
    _, large = run(jobs, traced=True)
    print(f"  peak traced memory: {small / 1e6:.2f} MB at {jobs // 10:,} jobs, {large / 1e6:.2f} MB at {jobs:,}")
    http_jobs = min(jobs, HTTP_JOBS)
    elapsed, small, large = bench_history_concurrent(http_jobs)
    print(f"history of {http_jobs:,} jobs over loopback HTTP, {DEFAULT_WORKERS} workers: {elapsed:.1f} s "
          f"({elapsed / http_jobs * 1000:.2f} ms per job); peak traced memory {small / 1e6:.2f} MB at "
          f"{http_jobs // 10:,} jobs, {large / 1e6:.2f} MB at {http_jobs:,}")


def _timed_history(api: Api, workers: int, count: int, traced: bool) -> tuple[float, int]:
    """Seconds ``write_history`` takes over all ``count`` jobs, and its peak traced memory (when ``traced``)."""
    with open(os.devnull, "w") as sink:
        if traced:
            tracemalloc.start()
        start = time.perf_counter()
        stats = write_history(api, "training", 0, sink, workers=workers)
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] if traced else 0
        tracemalloc.stop()
    assert stats.written == count
    return elapsed, peak


#: ``batch-quota history``'s default ``--workers``.
DEFAULT_WORKERS = 8
#: Jobs sent over loopback HTTP (a real server round trip per describe): enough to show the concurrent path's
#: memory is flat, few enough that ``make bench`` stays minutes, not half an hour.
HTTP_JOBS = 2_000


def bench_history_concurrent(jobs: int) -> tuple[float, int, int]:
    """The default concurrency path: botocore's HTTP stack and thread pool against a loopback endpoint."""
    from policy_engine.adapters.aws.clients import ClientOptions, make_client
    from tests.policy_engine.adapters.aws.loopback import LoopbackBatch

    def run(count: int, traced: bool) -> tuple[float, int]:
        history = LazyHistory.__new__(LazyHistory)  # only its job generator; no Stubber here
        history.jobs, history.start_ms, history.spacing_ms = count, 1_000_000, 60_000
        history.succeeded = count - count // 2

        def list_jobs(body: dict) -> dict:  # every job is in the window (since 0), newest first
            offset = int(body.get("nextToken") or 0)
            indices = range(count - 1 - offset, max(-1, count - 1 - offset - 100), -1)
            page = {"jobSummaryList": [history.job(i)[0] for i in indices]}
            if offset + 100 < count:
                page["nextToken"] = str(offset + 100)
            return page

        def describe(body: dict) -> dict:
            return history.job(int(body["jobId"].rsplit("-", 1)[1]))[1]

        with LoopbackBatch({"ListServiceJobs": list_jobs, "DescribeServiceJob": describe}) as server:
            api = Api(make_client(ClientOptions(endpoint_url=server.url, workers=DEFAULT_WORKERS)))
            return _timed_history(api, DEFAULT_WORKERS, count, traced)

    elapsed, _ = run(jobs, traced=False)
    _, small = run(jobs // 10, traced=True)
    _, large = run(jobs, traced=True)
    return elapsed, small, large


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--history", type=int, default=0, metavar="N",
                        help="also stream N jobs (default 0: skipped; make bench passes 50000)")
    args = parser.parse_args()
    bench_import(args.repeats)
    if args.history:
        bench_history(args.history)


if __name__ == "__main__":
    main()
