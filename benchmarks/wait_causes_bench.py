"""What "why jobs waited" costs: the usage log ``simulate`` now always keeps, and the attribution after the run.

Per workload size, in a fresh process each: load, run and results without the usage log, the same
with it (what ``simulate`` does since it attributes waits), then ``wait_causes.attribute`` on that
result. Prints the wall and CPU times with the load average. Targets: the usage log adds at most 10 %
to the run (``floor_bench.py`` measures the engine without it and does not change), and the attribution
takes at most 15 s at 1,000,000 jobs.

    python benchmarks/wait_causes_bench.py                   # heavy workload, 20k and 1M jobs
    python benchmarks/wait_causes_bench.py --sizes 20000     # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads

from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.gcpause import gc_paused
from policy_engine.simulation.results.records import build_result
from policy_engine.simulation.results.wait_causes import attribute
from policy_engine.simulation.scenarios.workload import load_jobs
from policy_engine.simulation.settings import SimulationSettings


def one(path: Path, usage_log: bool) -> dict:
    topology = workloads.topology(path.stem.split("-")[0])  # files are named SHAPE-JOBS.csv
    started, cpu = time.perf_counter(), time.process_time()
    with gc_paused():
        engine = Engine(topology, load_jobs(path, topology), settings=SimulationSettings(usage_log=usage_log))
        engine.run()
        result = build_result(engine)
        row = {"run_s": time.perf_counter() - started, "run_cpu_s": time.process_time() - cpu}
        if usage_log:
            begun, begun_cpu = time.perf_counter(), time.process_time()
            waits = attribute(result, topology)
            row["attribute_s"] = time.perf_counter() - begun
            row["attribute_cpu_s"] = time.process_time() - begun_cpu
            row["waited_s"] = sum(s.wait_seconds for s in waits.shares)
    return row


def measure(path: Path, usage_log: bool, repeats: int) -> dict:
    """The fastest of ``repeats`` fresh processes (the machine's load shows in wall times)."""
    rows = []
    for _ in range(repeats):
        command = [sys.executable, __file__, "--one", str(path)] + (["--usage-log"] if usage_log else [])
        out = subprocess.run(command, check=True, capture_output=True, text=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return min(rows, key=lambda row: row["run_cpu_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="heavy", choices=sorted(workloads.SHAPES))
    parser.add_argument("--sizes", type=int, nargs="*", default=[20_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--usage-log", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(Path(args.one), args.usage_log)))
        return
    print(f"{args.shape} workload on {workloads.QUEUES} queues x {workloads.SHARES} shares, {workloads.TYPES} "
          f"instance types; load average {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as workdir:
        for size in args.sizes:
            path = workloads.workload_csv(args.shape, size, Path(workdir))
            plain = measure(path, False, args.repeats)
            logged = measure(path, True, args.repeats)
            ratio = logged["run_cpu_s"] / plain["run_cpu_s"]
            per_job = logged["attribute_cpu_s"] / size * 1e6
            verdict = (f"{'meets' if logged['attribute_s'] <= 15 else 'misses'} <= 15 s" if size == 1_000_000
                       else f"{per_job * 1e6 / 1e6:.0f} us cpu per job, about {per_job:.0f} s cpu at 1M")
            print(f"{size:>9,} jobs (load average {os.getloadavg()[0]:.2f}): run {plain['run_s']:6.2f} s "
                  f"(cpu {plain['run_cpu_s']:6.2f}); with the usage log {logged['run_s']:6.2f} s "
                  f"(cpu {logged['run_cpu_s']:6.2f}, {ratio:.2f}x cpu, {'meets' if ratio <= 1.10 else 'misses'} "
                  f"<= 1.10x); attribution {logged['attribute_s']:6.2f} s (cpu {logged['attribute_cpu_s']:6.2f}, "
                  f"{verdict}) over "
                  f"{logged['waited_s'] / 3600:,.0f} wait-hours", flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
