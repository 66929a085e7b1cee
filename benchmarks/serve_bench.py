"""``batch-quota serve`` under load: raw HTTP on loopback, the server in its own process.

The load generator writes pre-built HTTP/1.1 requests on keep-alive connections (asyncio
streams, no boto3: a boto3 client's own CPU would dominate on 2 cores) and times each
response. Five measurements, each bounded in count and time:

1. throughput: SubmitServiceJob as fast as it is answered, with the scheduler running
   (speed 60, jobs of 30-120 simulated seconds finishing and starting all the time), in memory
   and with ``--state`` (SQLite);
2. latency at a steady 100 SubmitServiceJob/s (open loop: requests are sent on schedule,
   whether or not earlier ones were answered), p50/p99/max;
3. ListServiceJobs pages over 100,000 jobs of one queue (clock stopped, so they all wait):
   first pages, pages deep in the list (following nextToken), a quota-share filter and a
   JOB_NAME prefix scan.
4. mixed: 200 requests/s for 60 s of submits, describes, lists, priority updates, terminations,
   snapshots and tag reads (open loop): the server's own handling time per request (its
   ``x-batch-quota-handling-us`` header) beside the client's latency, per operation.
5. restart: ``--restart-calls`` (100,000) calls recorded with ``--state`` (submits, one clock
   advance in ten), then the time a restart takes until the server answers (target < 5 s), after
   SIGKILL (the calls since the last checkpoint are replayed) and after a clean stop; best and median
   of three, with the server's CPU time.

Targets: >= 500 submits/s, p99 < 20 ms at 100/s, < 50 ms per ListServiceJobs page, mixed 200/s:
server handling p99 < 20 ms and no error, restart after 100,000 calls < 5 s.
The machine's load average is printed with the figures (a shared machine inflates them).

    python benchmarks/serve_bench.py                      # the full run
    python benchmarks/serve_bench.py --quick              # a small look (2,000 jobs to list)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

INSTANCE = "ml.g5.xlarge"
SHARES = 5
AUTH = ("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/batch/aws4_request, "
        "SignedHeaders=host;x-amz-date, Signature=" + "0" * 64)


def topology_yaml(shares: int, per_share: int) -> str:
    lines = ["service_environments:", f"  - {{name: gpu, capacity: {{{INSTANCE}: {shares * per_share}}}}}",
             "job_queues:", "  - name: training", "    service_environment: gpu", "    shares:"]
    for index in range(shares):
        lines.append(f"      - {{name: S{index}, capacity: {{{INSTANCE}: {per_share}}}, strategy: LEND_AND_BORROW, "
                     "borrow_limit: 100, in_share_preemption: true}")
    return "\n".join(lines) + "\n"


def request(path: str, body: dict, host: str) -> bytes:
    data = json.dumps(body).encode()
    head = (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"X-Amz-Date: 20260101T000000Z\r\nAuthorization: {AUTH}\r\nContent-Length: {len(data)}\r\n\r\n")
    return head.encode() + data


def submit_body(rng: random.Random, index: int, duration: float | None) -> dict:
    payload = {"TrainingJobName": f"job-{index}", "ResourceConfig": {"InstanceType": INSTANCE, "InstanceCount": 1}}
    body = {"jobName": f"job-{index}", "jobQueue": "training", "serviceJobType": "SAGEMAKER_TRAINING",
            "serviceRequestPayload": json.dumps(payload), "quotaShareName": f"S{rng.randrange(SHARES)}",
            "schedulingPriority": rng.randrange(10)}
    if duration is not None:
        body["tags"] = {"batch-quota:duration": str(duration)}
    return body


class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer
        #: the server's own handling time of the last answer (seconds; its ``x-batch-quota-handling-us``)
        self.handled = 0.0

    async def call(self, data: bytes) -> tuple[int, bytes]:
        self.writer.write(data)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        for line in head.split(b"\r\n"):
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
            elif line[:26].lower() == b"x-batch-quota-handling-us:":
                self.handled = int(line[26:]) / 1e6
        body = await self.reader.readexactly(length)
        return status, body


async def connect(host: str, port: int) -> Connection:
    reader, writer = await asyncio.open_connection(host, port)
    return Connection(reader, writer)


async def fill(connections: list[Connection], count: int, limit_s: float, build: Callable[[int], bytes]) -> int:
    """Sends ``build(0)``, ``build(1)``, ... on every connection at once, each when its last is answered (every
    answer a 200), until ``count`` are sent or ``limit_s`` seconds have passed; returns how many were sent."""
    sent = 0
    start = time.perf_counter()

    async def load(connection: Connection) -> None:
        nonlocal sent
        while sent < count and time.perf_counter() - start < limit_s:
            index = sent
            sent += 1
            status, body = await connection.call(build(index))
            assert status == 200, body

    await asyncio.gather(*(load(c) for c in connections))
    return sent


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


async def throughput(host: str, port: int, total: int, concurrency: int, limit_s: float) -> int:
    rng = random.Random(1)
    bodies = [request("/v1/submitservicejob", submit_body(rng, i, rng.uniform(30, 120)), f"{host}:{port}")
              for i in range(total)]
    connections = [await connect(host, port) for _ in range(concurrency)]
    latencies: list[float] = []
    errors = 0
    next_index = 0
    deadline = time.perf_counter() + limit_s

    async def worker(connection: Connection) -> None:
        nonlocal next_index, errors
        while next_index < total and time.perf_counter() < deadline:
            data = bodies[next_index]
            next_index += 1
            start = time.perf_counter()
            status, _ = await connection.call(data)
            latencies.append(time.perf_counter() - start)
            errors += status != 200

    start = time.perf_counter()
    await asyncio.gather(*(worker(c) for c in connections))
    elapsed = time.perf_counter() - start
    for connection in connections:
        connection.writer.close()
    print(f"throughput: {len(latencies):,} SubmitServiceJob in {elapsed:.2f} s over {concurrency} connections = "
          f"{len(latencies) / elapsed:,.0f} req/s; latency p50 {ms(percentile(latencies, 0.5))}, "
          f"p99 {ms(percentile(latencies, 0.99))}; {errors} error(s)")
    return len(latencies)


async def steady(host: str, port: int, rate: float, seconds: float) -> None:
    rng = random.Random(2)
    count = int(rate * seconds)
    bodies = [request("/v1/submitservicejob", submit_body(rng, 10_000_000 + i, rng.uniform(30, 120)),
                      f"{host}:{port}") for i in range(count)]
    pool = [await connect(host, port) for _ in range(8)]
    free = asyncio.Queue()
    for connection in pool:
        free.put_nowait(connection)
    latencies: list[float] = []
    worst: list[tuple[float, int]] = []
    errors = 0

    async def one(data: bytes, due: float) -> None:
        nonlocal errors
        connection = await free.get()
        status, _ = await connection.call(data)
        latencies.append(time.perf_counter() - due)  # from when it was due: queueing counts
        worst.append((latencies[-1], round((due - start) * 100)))
        errors += status != 200
        free.put_nowait(connection)

    start = time.perf_counter()
    tasks = []
    for index, data in enumerate(bodies):
        due = start + index / rate
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(data, due)))
    await asyncio.gather(*tasks)
    for connection in pool:
        connection.writer.close()
    print(f"steady {rate:g} req/s for {seconds:g} s: {len(latencies):,} SubmitServiceJob; latency "
          f"p50 {ms(percentile(latencies, 0.5))}, p99 {ms(percentile(latencies, 0.99))}, "
          f"max {ms(max(latencies))}; {errors} error(s)")
    if os.environ.get("SERVE_BENCH_DEBUG"):
        print("  slowest (ms, request number):", [(round(w * 1000), n) for w, n in sorted(worst)[-12:]])


#: The mixed load: operation -> share of the requests.
MIX = {"SubmitServiceJob": 0.35, "DescribeServiceJob": 0.25, "ListServiceJobs": 0.15, "UpdateServiceJob": 0.1,
       "GetJobQueueSnapshot": 0.05, "TerminateServiceJob": 0.05, "ListTagsForResource": 0.05}
_PATHS = {"SubmitServiceJob": "/v1/submitservicejob", "DescribeServiceJob": "/v1/describeservicejob",
          "ListServiceJobs": "/v1/listservicejobs", "UpdateServiceJob": "/v1/updateservicejob",
          "GetJobQueueSnapshot": "/v1/getjobqueuesnapshot", "TerminateServiceJob": "/v1/terminateservicejob"}


async def mixed(host: str, port: int, rate: float, seconds: float) -> None:
    """``rate`` requests/s of ``MIX`` for ``seconds`` (open loop): server handling time and client latency."""
    rng = random.Random(4)
    target = f"{host}:{port}"
    pool = [await connect(host, port) for _ in range(16)]
    free: asyncio.Queue[Connection] = asyncio.Queue()
    for connection in pool:
        free.put_nowait(connection)
    jobs: list[str] = []
    # a few jobs first, so that the first describes and updates have someone to name
    for index in range(20):
        _, body = await pool[0].call(request(_PATHS["SubmitServiceJob"],
                                             submit_body(rng, 20_000_000 + index, 14_400), target))
        jobs.append(json.loads(body)["jobId"])
    #: jobs neither terminated nor finished (2 to 4 simulated hours: 2 to 4 real minutes at speed 60, so none
    #: finishes within the run; the newest 100 are named): priority updates and terminations of them are valid
    unfinished = list(jobs)
    handled: dict[str, list[float]] = {name: [] for name in MIX}
    latency: dict[str, list[float]] = {name: [] for name in MIX}
    errors: dict[str, int] = dict.fromkeys(MIX, 0)
    names, weights = list(MIX), list(MIX.values())

    def build(name: str, index: int) -> bytes:
        job = jobs[rng.randrange(len(jobs))]
        if name in ("UpdateServiceJob", "TerminateServiceJob"):
            job = unfinished[-1 - rng.randrange(min(100, len(unfinished)))]
            if name == "TerminateServiceJob":
                unfinished.remove(job)
        if name == "SubmitServiceJob":
            return request(_PATHS[name], submit_body(rng, 30_000_000 + index, rng.uniform(7200, 14_400)), target)
        if name == "ListTagsForResource":
            arn = f"arn%3Aaws%3Abatch%3Aus-east-1%3A123456789012%3Aservice-job%2F{job}"
            return (f"GET /v1/tags/{arn} HTTP/1.1\r\nHost: {target}\r\nX-Amz-Date: 20260101T000000Z\r\n"
                    f"Authorization: {AUTH}\r\nContent-Length: 0\r\n\r\n").encode()
        body: dict = {
            "DescribeServiceJob": {"jobId": job},
            "ListServiceJobs": {"jobQueue": "training", "jobStatus": rng.choice(["RUNNABLE", "RUNNING", "SUCCEEDED"]),
                                "maxResults": 100},
            "UpdateServiceJob": {"jobId": job, "schedulingPriority": rng.randrange(10)},
            "GetJobQueueSnapshot": {"jobQueue": "training"},
            "TerminateServiceJob": {"jobId": job, "reason": "bench"},
        }[name]
        return request(_PATHS[name], body, target)

    async def one(name: str, data: bytes, due: float) -> None:
        connection = await free.get()
        status, body = await connection.call(data)
        latency[name].append(time.perf_counter() - due)  # from when it was due: queueing counts
        handled[name].append(connection.handled)
        free.put_nowait(connection)
        if status != 200:
            errors[name] += 1
        elif name == "SubmitServiceJob":
            jobs.append(json.loads(body)["jobId"])
            unfinished.append(jobs[-1])

    start = time.perf_counter()
    tasks = []
    for index in range(int(rate * seconds)):
        due = start + index / rate
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        name = rng.choices(names, weights)[0]
        tasks.append(asyncio.create_task(one(name, build(name, index), due)))
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - start
    for connection in pool:
        connection.writer.close()
    every_handled = [t for times in handled.values() for t in times]
    every_latency = [t for times in latency.values() for t in times]
    print(f"mixed {rate:g} req/s for {seconds:g} s: {len(every_handled):,} requests in {elapsed:.1f} s, "
          f"{sum(errors.values())} error(s); server handling p50 {ms(percentile(every_handled, 0.5))}, "
          f"p99 {ms(percentile(every_handled, 0.99))}, max {ms(max(every_handled))} (target p99 < 20 ms); "
          f"client latency p50 {ms(percentile(every_latency, 0.5))}, p99 {ms(percentile(every_latency, 0.99))}")
    for name in names:
        if handled[name]:
            print(f"  {name:22} {len(handled[name]):6,}  handling p50 {ms(percentile(handled[name], 0.5))}, "
                  f"p99 {ms(percentile(handled[name], 0.99))}; client p99 {ms(percentile(latency[name], 0.99))}; "
                  f"{errors[name]} error(s)")


async def listing(host: str, port: int, jobs: int, limit_s: float) -> None:
    rng = random.Random(3)
    target = f"{host}:{port}"
    connections = [await connect(host, port) for _ in range(8)]
    start = time.perf_counter()
    loaded = await fill(connections, jobs, limit_s,
                        lambda index: request("/v1/submitservicejob", submit_body(rng, index, None), target))
    elapsed = time.perf_counter() - start
    print(f"loaded {loaded:,} jobs for listing in {elapsed:.1f} s ({loaded / elapsed:,.0f} req/s, clock stopped)")
    connection = connections[0]

    async def pages(body: dict, count: int) -> list[float]:
        times, token = [], None
        for _ in range(count):
            page = dict(body, **({"nextToken": token} if token else {}))
            began = time.perf_counter()
            status, data = await connection.call(request("/v1/listservicejobs", page, target))
            times.append(time.perf_counter() - began)
            assert status == 200, data
            parsed = json.loads(data)
            token = parsed.get("nextToken")
            if not token:
                break
        return times

    cases = {
        "RUNNABLE, 100 per page, first 200 pages (20,000 jobs deep)": (
            {"jobQueue": "training", "jobStatus": "RUNNABLE", "maxResults": 100}, 200),
        "QUOTA_SHARE_NAME=S0 + RUNNABLE, 100 per page, 50 pages": (
            {"jobQueue": "training", "jobStatus": "RUNNABLE",
             "filters": [{"name": "QUOTA_SHARE_NAME", "values": ["S0"]}]}, 50),
        "JOB_NAME=job-99* (a prefix: 1,111 names in the name index), 10 pages": (
            {"jobQueue": "training", "filters": [{"name": "JOB_NAME", "values": ["job-99*"]}]}, 10),
    }
    for title, (body, count) in cases.items():
        times = await pages(body, count)
        print(f"ListServiceJobs over {loaded:,} jobs, {title}: {len(times)} page(s), per page "
              f"p50 {ms(percentile(times, 0.5))}, p99 {ms(percentile(times, 0.99))}, max {ms(max(times))}")
    times = []
    for _ in range(5):
        began = time.perf_counter()
        status, data = await connection.call(request("/v1/getjobqueuesnapshot", {"jobQueue": "training"}, target))
        times.append(time.perf_counter() - began)
        assert status == 200, data
    print(f"GetJobQueueSnapshot over {loaded:,} waiting jobs: p50 {ms(percentile(times, 0.5))}, max {ms(max(times))}")
    for connection in connections:
        connection.writer.close()


async def record(host: str, port: int, calls: int, limit_s: float) -> int:
    """``calls`` recorded calls (SubmitServiceJob, one clock advance in ten), as fast as they are answered."""
    rng = random.Random(5)
    target = f"{host}:{port}"
    connections = [await connect(host, port) for _ in range(8)]

    def build(index: int) -> bytes:
        if index % 10 == 9:
            return (f"POST /_batch-quota/clock/advance?seconds=5 HTTP/1.1\r\nHost: {target}\r\n"
                    "Content-Type: application/json\r\nContent-Length: 0\r\n\r\n").encode()
        return request("/v1/submitservicejob", submit_body(rng, index, rng.uniform(30, 120)), target)

    sent = await fill(connections, calls, limit_s, build)
    for connection in connections:
        connection.writer.close()
    return sent


def restart_time(topology: Path, state: Path, calls: int, limit_s: float, repeats: int = 3) -> None:
    """Record ``calls`` calls with ``--state``, then time restarts until the server answers: after SIGKILL (the
    calls since the last checkpoint are replayed: the worst case) and after a clean stop (which checkpoints)."""
    process, host, port = start_server(topology, 0, state)
    try:
        began = time.perf_counter()
        done = asyncio.run(record(host, port, calls, limit_s))
        print(f"restart: recorded {done:,} calls with --state in {time.perf_counter() - began:.1f} s")
    finally:
        process.kill()  # as a crash: no checkpoint at shutdown
        process.wait(timeout=20)
    for how in ("SIGKILL", "a clean stop"):
        walls, cpus, said = [], [], ""
        for _ in range(repeats):
            began = time.perf_counter()
            process, _, _ = start_server(topology, 0, state)
            walls.append(time.perf_counter() - began)
            cpus.append(cpu_seconds(process.pid))
            said = process.said
            if how == "SIGKILL":
                process.kill()
                process.wait(timeout=20)
            else:
                stop(process)
        print(f"  restart after {how}, {done:,} recorded calls ({said}): ready in best {min(walls):.2f} s, median "
              f"{statistics.median(walls):.2f} s of {repeats} ({statistics.median(cpus):.2f} s of CPU, median; "
              f"target < 5 s at 100,000 calls); load average {os.getloadavg()[0]:.2f}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux ``/proc``), to separate the server's cost from the machine's load."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_server(topology: Path, speed: float, state: Path | None = None,
                 extra: tuple[str, ...] = ()) -> tuple[subprocess.Popen, str, int]:
    command = [str(Path(sys.executable).with_name("batch-quota")), "serve", str(topology), "--port", "0",
               "--speed", str(speed), *(["--state", str(state)] if state else []), *extra]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stderr.readline()
    while line and not line.startswith("batch-quota serve: http"):
        line = process.stderr.readline()
    # how the state came back ("restored from the checkpoint at call N, M call(s) replayed, ..."), if it did
    process.said = line.split("; ", 1)[1].rstrip(")\n") if "; " in line else ""  # type: ignore[attr-defined]
    threading.Thread(target=process.stderr.read, daemon=True).start()  # a full pipe would block the server
    url = process.stdout.readline().strip()
    host, port = url.removeprefix("http://").rsplit(":", 1)
    # the URL is printed once the socket listens, before uvicorn serves: measure only a ready server
    with urllib.request.urlopen(f"{url}/_batch-quota/clock", timeout=60) as response:
        response.read()
    return process, host, int(port)


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    process.wait(timeout=20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000, help="SubmitServiceJob requests for the throughput run")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--steady-seconds", type=float, default=10.0)
    parser.add_argument("--list-jobs", type=int, default=100_000)
    parser.add_argument("--limit", type=float, default=300.0, help="time bound of each load phase (seconds)")
    parser.add_argument("--quick", action="store_true", help="2,000 jobs, 3 s steady, 2,000 jobs to list")
    parser.add_argument("--mixed-seconds", type=float, default=60.0)
    parser.add_argument("--restart-calls", type=int, default=100_000, help="calls recorded before the restart")
    parser.add_argument("--phases", default="throughput,steady,mixed,state,restart,list",
                        help="comma-separated subset of: throughput, steady, mixed, state, restart, list")
    args = parser.parse_args()
    if args.quick:
        args.jobs, args.steady_seconds, args.list_jobs, args.mixed_seconds = 2_000, 3.0, 2_000, 5.0
        args.restart_calls = 2_000
    print(f"cpus {os.cpu_count()}, load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        busy = Path(tmp) / "busy.yaml"
        busy.write_text(topology_yaml(SHARES, 40))  # 200 instances: jobs start and finish all the time
        phases = set(args.phases.split(","))
        process, host, port = start_server(busy, 60)
        try:
            if "throughput" in phases:
                before = cpu_seconds(process.pid)
                done = asyncio.run(throughput(host, port, args.jobs, args.concurrency, args.limit))
                used = cpu_seconds(process.pid) - before
                print(f"  server CPU during the throughput run: {used:.2f} s = {used / done * 1e6:,.0f} us per "
                      f"request (one core's worth: {done / used:,.0f} req/s)")
            if "steady" in phases:
                before = cpu_seconds(process.pid)
                asyncio.run(steady(host, port, 100, args.steady_seconds))
                used = cpu_seconds(process.pid) - before
                print(f"  server CPU during the steady run: {used:.2f} s "
                      f"({used / (100 * args.steady_seconds) * 1e6:,.0f} us per request)")
            if "mixed" in phases:
                before = cpu_seconds(process.pid)
                asyncio.run(mixed(host, port, 200, args.mixed_seconds))
                used = cpu_seconds(process.pid) - before
                print(f"  server CPU during the mixed run: {used:.2f} s "
                      f"({used / (200 * args.mixed_seconds) * 1e6:,.0f} us per request); load average "
                      f"{os.getloadavg()[0]:.2f}")
        finally:
            stop(process)
        if "state" in phases:
            process, host, port = start_server(busy, 60, Path(tmp) / "state.db")
            try:
                print("with --state (every SubmitServiceJob appended to SQLite):")
                asyncio.run(throughput(host, port, args.jobs // 2, args.concurrency, args.limit))
            finally:
                stop(process)
        if "restart" in phases:
            restart_time(busy, Path(tmp) / "restart.db", args.restart_calls, args.limit)
        if "list" in phases:
            small = Path(tmp) / "small.yaml"
            small.write_text(topology_yaml(SHARES, 1))  # the clock stopped and 5 instances: every job waits
            process, host, port = start_server(small, 0)
            try:
                asyncio.run(listing(host, port, args.list_jobs, args.limit))
            finally:
                stop(process)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
