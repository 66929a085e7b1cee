"""``batch-quota top``'s refresh against ``batch-quota serve``: 20 shares, 10,000 jobs, the server in its own process.

One refresh is what the live view does every ``--interval``: its reads (1 GetJobQueueSnapshot,
ListQuotaShares when its minute is up, 1 RUNNABLE page per share with waiting jobs, 1
DescribeServiceJob per head) through boto3, the preemption count from the events file
(``--events``), and drawing the screen. Figures: median and max wall time of 10 refreshes
after a first one (which also reads the share list and the whole events file), with and
without the events file, and the calls per refresh. Target: median < 0.5 s.

    python benchmarks/top_bench.py                 # 20 shares, 10,000 jobs
    python benchmarks/top_bench.py --jobs 2000     # a quick look
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from policy_engine.adapters.aws.clients import Api, ClientOptions, make_client  # noqa: E402
from policy_engine.adapters.aws.queue_figures import PreemptionLog, QueueReader  # noqa: E402
from policy_engine.reports.top import screen as top_view  # noqa: E402

INSTANCE = "ml.g5.xlarge"
TARGET_SECONDS = 0.5


def topology_yaml(shares: int, per_share: int) -> str:
    lines = ["service_environments:", f"  - {{name: gpu, capacity: {{{INSTANCE}: {shares * per_share}}}}}",
             "job_queues:", "  - name: training", "    service_environment: gpu", "    shares:"]
    for index in range(shares):
        strategy = "LEND" if index % 4 == 0 else "LEND_AND_BORROW, borrow_limit: 100"
        lines.append(f"      - {{name: S{index:02d}, capacity: {{{INSTANCE}: {per_share}}}, strategy: {strategy}}}")
    return "\n".join(lines) + "\n"


def submit_all(url: str, shares: int, jobs: int) -> None:
    """``jobs`` 1-instance jobs spread over every share, on one keep-alive connection."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    headers = {"content-type": "application/json", "authorization": "AWS4-HMAC-SHA256 Credential=x/20260101/"
               "us-east-1/batch/aws4_request, SignedHeaders=host, Signature=0"}
    for index in range(jobs):
        share = f"S{(index * 7 + index // shares) % shares:02d}"
        payload = {"TrainingJobName": f"job-{index}", "ResourceConfig": {"InstanceType": INSTANCE, "InstanceCount": 1},
                   "StoppingCondition": {"MaxRuntimeSeconds": 3600 + index % 600}}
        body = {"jobName": f"job-{index}", "jobQueue": "training", "serviceJobType": "SAGEMAKER_TRAINING",
                "serviceRequestPayload": json.dumps(payload), "quotaShareName": share,
                "schedulingPriority": index % 10}
        connection.request("POST", "/v1/submitservicejob", json.dumps(body), headers)
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            raise SystemExit(f"SubmitServiceJob answered {response.status}")
    connection.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def refreshes(url: str, events: str | None, count: int, server: int
              ) -> tuple[float, list[float], list[tuple[float, float]], dict[str, int]]:
    """The first refresh's time, the next ``count`` refreshes' wall times and CPU seconds (this process and the
    server's: what an idle machine would spend), and the calls of the last one."""
    api = Api(make_client(ClientOptions(endpoint_url=url, region="us-east-1")))
    reader = QueueReader(api, "training")
    log = PreemptionLog(events) if events else None

    def one() -> tuple[float, dict[str, int]]:
        started = time.perf_counter()
        figures = reader.read((lambda now: log.counts("training", now)) if log else None)
        console = top_view_console()
        console.print(top_view.screen(figures, top_view.SORTS[0], "", []))
        return time.perf_counter() - started, figures.calls

    first, _ = one()
    times, cpu = [], []
    calls: dict[str, int] = {}
    for _ in range(count):
        client, served = time.process_time(), cpu_seconds(server)
        elapsed, calls = one()
        cpu.append((time.process_time() - client, cpu_seconds(server) - served))
        times.append(elapsed)
    return first, times, cpu, calls


def top_view_console():
    from rich.console import Console

    return Console(file=io.StringIO(), width=200, force_terminal=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shares", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--refreshes", type=int, default=10)
    args = parser.parse_args()
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    with tempfile.TemporaryDirectory() as tmp:
        topology = Path(tmp, "topology.yaml")
        topology.write_text(topology_yaml(args.shares, 8))
        events = str(Path(tmp, "events.jsonl"))
        command = str(Path(sys.executable).with_name("batch-quota"))
        server = subprocess.Popen([command, "serve", str(topology), "--port", "0", "--speed", "0",
                                   "--events", events], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip()
            started = time.perf_counter()
            submit_all(url, args.shares, args.jobs)
            print(f"submitted {args.jobs:,} jobs over {args.shares} shares in {time.perf_counter() - started:.1f} s "
                  f"(events file {os.path.getsize(events) / 1e6:.1f} MB)")
            for label, path in (("without --events", None), ("with --events", events)):
                first, times, cpu, calls = refreshes(url, path, args.refreshes, server.pid)
                median = statistics.median(times)
                print(f"top refresh {label}: wall median {median * 1000:.0f} ms, max {max(times) * 1000:.0f} ms of "
                      f"{len(times)} (first, reading the share list{' and the whole file' if path else ''}: "
                      f"{first * 1000:.0f} ms); target median < {TARGET_SECONDS * 1000:.0f} ms: "
                      f"{'met' if median < TARGET_SECONDS else 'MISSED'}")
                client = statistics.median(c for c, _ in cpu)
                served = statistics.median(s for _, s in cpu)
                total = statistics.median(c + s for c, s in cpu)
                print(f"  CPU per refresh, medians: client {client * 1000:.0f} ms + server {served * 1000:.0f} ms = "
                      f"{total * 1000:.0f} ms (about an idle machine's wall time; target < "
                      f"{TARGET_SECONDS * 1000:.0f} ms: {'met' if total < TARGET_SECONDS else 'MISSED'})")
                print(f"  calls per refresh: {', '.join(f'{op} {n}' for op, n in sorted(calls.items()))}")
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
          f"on {os.cpu_count()} CPUs (a shared machine inflates wall times)")


if __name__ == "__main__":
    main()
