"""Simulator benchmark: 100 shares (5 queues x 20), 4 instance types, up to 1,000,000 jobs.

Prints, per workload size, the time to load the CSV workload, to simulate, and to
build the results, the peak memory (max RSS of a fresh process per size), and the
ratio of time to n log n (it should not grow from 100k to 1M). The target from
issue 4: 1M jobs in under 60 s and under 2 GB on 2 cores. The simulator is single-threaded;
CPU time is printed next to wall time because a shared machine inflates the latter.

    python benchmarks/simulate_bench.py                # 100k, 300k, 1M
    python benchmarks/simulate_bench.py --sizes 20000  # a quick look
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from policy_engine.examples import large_topology
from policy_engine.simulation.engine import Engine
from policy_engine.simulation.generate import WorkloadProfile, generate_jobs, write_jobs
from policy_engine.simulation.results import build_result
from policy_engine.simulation.workload import load_jobs

QUEUES, SHARES, TYPES = 5, 20, 4


def topology():
    return large_topology(queues=QUEUES, shares_per_queue=SHARES, instance_types=TYPES)


def profile(jobs: int) -> WorkloadProfile:
    """About 85 % of the cluster's nominal throughput: stationary queues, with borrowing and preemption."""
    capacity = QUEUES * TYPES * 2 * SHARES  # instances
    mean_size, duration = 1.3, 3600.0
    rate = 0.85 * capacity / (mean_size * duration) * 3600
    return WorkloadProfile(jobs=jobs, arrival_rate=rate, sizes={1: 0.7, 2: 0.3}, duration_mean=duration,
                           priorities={1: 0.6, 5: 0.3, 9: 0.1}, seed=7)


def run_one(jobs: int, workdir: Path) -> dict:
    """One size in this process: write the CSV, then time load, simulate and results."""
    topo = topology()
    path = workdir / f"jobs-{jobs}.csv"
    if not path.exists():
        write_jobs(path, generate_jobs(topo, profile(jobs)))
    started, cpu_started = time.perf_counter(), time.process_time()
    specs = load_jobs(path, topo)
    loaded = time.perf_counter()
    engine = Engine(topo, specs)
    engine.run()
    simulated = time.perf_counter()
    result = build_result(engine)
    built, cpu = time.perf_counter(), time.process_time() - cpu_started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "jobs": jobs,
        "load_s": round(loaded - started, 2),
        "simulate_s": round(simulated - loaded, 2),
        "results_s": round(built - simulated, 2),
        "total_s": round(built - started, 2),
        "cpu_s": round(cpu, 2),
        "peak_mb": round(peak_mb),
        "preemptions": result.summary["preemptions"],
        "utilisation": result.summary["cluster_utilisation"],
        "succeeded": result.summary["by_status"].get("SUCCEEDED", 0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, Path(args.workdir))))
        return
    print(f"topology: {QUEUES} queues x {SHARES} shares, {TYPES} instance types")
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for size in args.sizes:
            out = subprocess.run([sys.executable, __file__, "--one", str(size), "--workdir", workdir],
                                 check=True, capture_output=True, text=True)
            row = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(row)
            per = row["total_s"] / (size * math.log(size)) * 1e6
            print(f"{size:>9,} jobs: load {row['load_s']:6.2f} s  simulate {row['simulate_s']:6.2f} s  "
                  f"results {row['results_s']:5.2f} s  total {row['total_s']:6.2f} s (cpu {row['cpu_s']:6.2f} s)  "
                  f"peak {row['peak_mb']:5} MB  "
                  f"total/(n ln n) {per:.3f} us  preemptions {row['preemptions']:,}  "
                  f"utilisation {row['utilisation']:.3f}", flush=True)
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        nlogn = (last["jobs"] * math.log(last["jobs"])) / (first["jobs"] * math.log(first["jobs"]))
        print(f"x{last['jobs'] / first['jobs']:.0f} jobs: wall time x{last['total_s'] / first['total_s']:.2f}, "
              f"CPU time x{last['cpu_s'] / first['cpu_s']:.2f} (n log n would be x{nlogn:.2f})")


if __name__ == "__main__":
    main()
