"""Simulator benchmark: the ``steady`` workload (``workloads.py``) on 100 shares, up to 1,000,000 jobs.

``steady`` offers Poisson arrivals at 85 % of the cluster's nominal throughput (exponential
durations, 1- and 2-instance jobs); the cluster utilisation actually measured is printed per run.
Prints, per workload size, the time to load the CSV workload, to simulate, and to build the
results, the peak memory (max RSS of a fresh process per size), the ratio of time to n log n
(it should not grow from 100k to 1M), and the time against the floor of the same workload
measured in the same run (``floor_bench.floor``: csv plus one heap push and pop per event).
Target: at most 4x the floor. The simulator is single-threaded; CPU time is printed next to wall
time, and the load average with each figure, because a shared machine inflates wall time.

    python benchmarks/simulate_bench.py                # 100k, 300k, 1M
    python benchmarks/simulate_bench.py --sizes 20000  # a quick look
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads
from floor_bench import floor

from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.gcpause import gc_paused
from policy_engine.simulation.results.records import build_result
from policy_engine.simulation.scenarios.workload import load_jobs

#: The simulator's time (load, run, results) at most this many times the floor's.
TARGET_RATIO = 4.0


def run_one(jobs: int, workdir: Path) -> dict:
    """One size in this process: write the CSV, then time load, simulate and results."""
    topo = workloads.topology("steady")
    path = workloads.workload_csv("steady", jobs, workdir)
    started, cpu_started = time.perf_counter(), time.process_time()
    with gc_paused():  # as ``batch-quota simulate`` runs them: one pause of the cyclic collector
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
    parser.add_argument("--floor", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, Path(args.workdir))))
        return
    if args.floor:
        print(json.dumps(floor(workloads.workload_csv("steady", args.floor, Path(args.workdir)))))
        return
    print(f"topology: {workloads.QUEUES} queues x {workloads.SHARES} shares, {workloads.TYPES} instance types; "
          f"workload: steady, offered at 85 % of capacity; target: at most {TARGET_RATIO:g}x the floor")
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for size in args.sizes:
            out = subprocess.run([sys.executable, __file__, "--one", str(size), "--workdir", workdir],
                                 check=True, capture_output=True, text=True)
            row = json.loads(out.stdout.strip().splitlines()[-1])
            out = subprocess.run([sys.executable, __file__, "--floor", str(size), "--workdir", workdir],
                                 check=True, capture_output=True, text=True)
            base = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(row)
            per = row["total_s"] / (size * math.log(size)) * 1e6
            ratio, cpu_ratio = row["total_s"] / base["wall_s"], row["cpu_s"] / base["cpu_s"]
            verdict = (f"wall {'meets' if ratio <= TARGET_RATIO else 'misses'}, "
                       f"cpu {'meets' if cpu_ratio <= TARGET_RATIO else 'misses'}")
            print(f"{size:>9,} jobs: load {row['load_s']:6.2f} s  simulate {row['simulate_s']:6.2f} s  "
                  f"results {row['results_s']:5.2f} s  total {row['total_s']:6.2f} s (cpu {row['cpu_s']:6.2f} s)  "
                  f"peak {row['peak_mb']:5} MB  "
                  f"total/(n ln n) {per:.3f} us  preemptions {row['preemptions']:,}  "
                  f"utilisation {row['utilisation']:.3f}", flush=True)
            print(f"{'':>16}floor {base['wall_s']:6.2f} s (cpu {base['cpu_s']:6.2f} s): {ratio:.2f}x wall, "
                  f"{cpu_ratio:.2f}x cpu ({verdict} the {TARGET_RATIO:g}x target); "
                  f"load average {os.getloadavg()[0]:.2f}", flush=True)
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        nlogn = (last["jobs"] * math.log(last["jobs"])) / (first["jobs"] * math.log(first["jobs"]))
        print(f"x{last['jobs'] / first['jobs']:.0f} jobs: wall time x{last['total_s'] / first['total_s']:.2f}, "
              f"CPU time x{last['cpu_s'] / first['cpu_s']:.2f} (n log n would be x{nlogn:.2f})")


if __name__ == "__main__":
    main()
