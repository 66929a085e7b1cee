"""``compare`` benchmark: two designs on the ``steady`` workload (``workloads.py``, 100 shares) against one run.

Times, as a user runs them (the command in a fresh process, loading included), ``batch-quota simulate`` of
the workload on design A and ``batch-quota compare`` of designs A and B on it (B: A with every borrower's
borrow limit at 100 %), the designs in parallel on the embedded Dask LocalCluster (one worker per design, on
2 cores). Target: ``compare`` within 2.2x one run. The machine may be shared: the load average (``uptime``)
is printed with every figure, and CPU time of the command and its children beside wall time.

    python benchmarks/compare_bench.py                 # 1,000,000 jobs
    python benchmarks/compare_bench.py --jobs 100000   # a quicker look
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads

from policy_engine.adapters.aws.topology_file import topology_text
from policy_engine.foundation.model import Topology

#: ``compare`` of two designs at most this many times one run's wall time.
TARGET_RATIO = 2.2


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], check=True, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        one, five, fifteen = os.getloadavg()
        return f"load average: {one:.2f}, {five:.2f}, {fifteen:.2f}"


def _timed(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (the process and its children, Dask workers included) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _design_b(topology: Topology) -> Topology:
    queues = tuple(queue.model_copy(update={"shares": tuple(
        share.model_copy(update={"borrow_limit": 100}) if share.borrows else share for share in queue.shares)})
        for queue in topology.job_queues)
    return topology.model_copy(update={"job_queues": queues})


def two_designs(workdir: Path, jobs: str) -> tuple[Path, Path, Path]:
    """In ``workdir``: the steady topology as A.yaml, it with every borrower's limit at 100 % as B.yaml, and a
    scenario of A over the job file ``jobs`` (in ``workdir``); their paths: scenario, A, B."""
    a, b = workdir / "A.yaml", workdir / "B.yaml"
    topology = workloads.topology("steady")
    a.write_text(topology_text(topology, a))
    b.write_text(topology_text(_design_b(topology), b))
    scenario = workdir / "scenario.yaml"
    scenario.write_text(f"topology: A.yaml\njobs: {jobs}\n")
    return scenario, a, b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    args = parser.parse_args()
    command = [sys.executable, "-c", "from policy_engine.cli.app import main; main()"]
    build = "pure Python" if os.environ.get("BATCH_QUOTA_PURE_PYTHON") else "compiled (if built)"
    print(f"compare of two designs vs one simulate, {args.jobs:,} jobs of the steady workload on "
          f"{workloads.QUEUES} queues x {workloads.SHARES} shares, {workloads.TYPES} types; simulator {build}; "
          f"{os.cpu_count()} cores; target: at most {TARGET_RATIO:g}x one run", flush=True)
    with tempfile.TemporaryDirectory() as name:
        workdir = Path(name)
        csv = workloads.workload_csv("steady", args.jobs, workdir)
        scenario, a, b = two_designs(workdir, csv.name)
        print(f"before: {_uptime()}", flush=True)
        one_wall, one_cpu = _timed([*command, "simulate", str(scenario), "--quiet"])
        print(f"simulate (one run):  wall {one_wall:7.1f} s  cpu {one_cpu:7.1f} s   {_uptime()}", flush=True)
        two_wall, two_cpu = _timed([*command, "compare", str(scenario), "--topology", str(a), "--topology", str(b)])
        ratio = two_wall / one_wall
        print(f"compare (two runs):  wall {two_wall:7.1f} s  cpu {two_cpu:7.1f} s   {_uptime()}", flush=True)
        print(f"compare / one run: {ratio:.2f}x wall ({'meets' if ratio <= TARGET_RATIO else 'misses'} the "
              f"{TARGET_RATIO:g}x target), {two_cpu / one_cpu:.2f}x cpu", flush=True)


if __name__ == "__main__":
    main()
