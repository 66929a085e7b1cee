"""The deploy rehearsal's figures (docs/rehearsal.md): ``cdk deploy`` of the default app to ``serve`` against
``cdk synth`` of the same app (target: a first deploy within 2x synth's wall time, medians of 3, bootstrap
untimed: the served account reads as bootstrapped), a 20-share, 3-instance-type topology, and ``cdk diff``
(its read-only change set included).

Every command is the pinned CDK CLI (``node_modules/.bin/cdk``) run as a user runs it, with only environment
variables pointing it at the endpoint (``AWS_ENDPOINT_URL``, dummy credentials, a region); the endpoint runs
in its own process (``batch-quota serve --port 0 --speed 0``) and is reset before each first deploy. Wall
time, the CPU time (user+sys) of the CLI and the processes it waited for (the app; a jsii kernel that is not
waited for is missed), the endpoint's own CPU per deploy, and the load average are printed.

    python benchmarks/rehearse_bench.py            # medians of 3
    python benchmarks/rehearse_bench.py --runs 1
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = ROOT / "node_modules" / ".bin" / "cdk"
TYPES = ("ml.g5.xlarge", "ml.g5.12xlarge", "ml.p4d.24xlarge")


def big_topology(path: Path) -> Path:
    """One environment with 3 instance types, one queue of 20 shares (each on every type)."""
    shares = [{"name": f"team-{i:02d}", "capacity": dict.fromkeys(TYPES, 2),
               "strategy": ("LEND_AND_BORROW", "LEND", "RESERVE")[i % 3]} | (
        {"borrow_limit": 100} if i % 3 == 0 else {}) for i in range(20)]
    topology = {"service_environments": [{"name": "gpu", "capacity": dict.fromkeys(TYPES, 40)}],
                "job_queues": [{"name": "training", "service_environment": "gpu", "shares": shares}]}
    path.write_text(json.dumps(topology))
    return path


def environment(url: str | None) -> dict[str, str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1",
           "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20,22,24", "CDK_DISABLE_VERSION_CHECK": "1"}
    if url:
        env["AWS_ENDPOINT_URL"] = url
    return env


def server_cpu(pid: int) -> float:
    """CPU seconds (user+sys) the endpoint's process has used so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


SERVER_CPU: list[float] = []


def timed(args: list[str], url: str | None, pid: int = 0) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and the children it waited for) of one CDK CLI run; the
    endpoint's CPU for the run is appended to ``SERVER_CPU``."""
    served = server_cpu(pid) if pid else 0.0
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    result = subprocess.run([str(CLI), *args], cwd=ROOT, env=environment(url), capture_output=True, text=True,
                            timeout=600)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit(f"cdk {' '.join(args)} failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    if pid:
        SERVER_CPU.append(server_cpu(pid) - served)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def reset(url: str) -> None:
    request = urllib.request.Request(f"{url}/_batch-quota/reset", data=b"", method="POST",
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=30).read()


def median(samples: list[tuple[float, float]]) -> str:
    wall = statistics.median(s[0] for s in samples)
    cpu = statistics.median(s[1] for s in samples)
    return f"{wall:6.2f} s wall, {cpu:6.2f} s CPU (median of {len(samples)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    server = subprocess.Popen([str(Path(sys.executable).parent / "batch-quota"), "serve", "--port", "0",
                               "--speed", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = next(line.strip() for line in server.stdout if line.startswith("http"))  # type: ignore[union-attr]
        print(f"load average before: {os.getloadavg()[0]:.1f}; endpoint {url}")
        with tempfile.TemporaryDirectory() as scratch:
            work = Path(scratch)
            big = ["-c", f"topology={big_topology(work / 'big.json')}"]
            rows: list[tuple[str, list[tuple[float, float]]]] = []
            for name, context in (("default app", []), ("20 shares, 3 types", big)):
                synth = [timed(["synth", "-q", "-o", str(work / f"s{i}"), *context], None) for i in range(runs)]
                deploys = []
                SERVER_CPU.clear()
                for i in range(runs):
                    reset(url)
                    deploys.append(timed(["deploy", "--require-approval", "never", "-o", str(work / f"d{i}"),
                                          *context], url, server.pid))
                rows.append((f"{name}: the endpoint's CPU per first deploy", [(statistics.median(SERVER_CPU), -1.0)]))
                diffs = [timed(["diff", "-o", str(work / f"f{i}"), *context], url) for i in range(runs)]
                presynth = [timed(["diff", "--app", str(work / "d0")], url) for _ in range(runs)] \
                    if not context else []
                rows += [(f"{name}: cdk synth", synth), (f"{name}: cdk deploy (first, synth included)", deploys),
                         (f"{name}: cdk diff (change set, synth included)", diffs)]
                if presynth:
                    rows.append((f"{name}: cdk diff --app cdk.out (change set only)", presynth))
                ratio = statistics.median(d[0] for d in deploys) / statistics.median(s[0] for s in synth)
                rows.append((f"{name}: deploy / synth wall", [(ratio, 0.0)]))
            for label, samples in rows:
                if samples[0][1] == -1.0:
                    print(f"{label:58s} {samples[0][0]:6.2f} s CPU (median)")
                elif label.endswith("wall"):
                    print(f"{label:58s} {samples[0][0]:.2f}x (target <= 2x)")
                else:
                    print(f"{label:58s} {median(samples)}")
        print(f"load average after: {os.getloadavg()[0]:.1f} (2 cores shared with other work)")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
