"""The simulator against the floor of a discrete-event simulation, on the same workload in the same run.

The floor: read the job CSV with the ``csv`` module and push and pop one submission and one
completion event per job through ``heapq``, with no scheduling at all. The simulator: load the
same CSV (``load_jobs``: parsing and validation), run the engine, build the results. Each step
runs in a fresh process (peak memory is that process's max RSS; below 100,000 jobs the fastest of 5
runs counts). Prints both times, the ratio,
and, with ``--backfill``, the simulator with backfill as a ratio of the simulator without.

Targets: heavy workload at most 5x the floor and under 800 MB at 1,000,000 jobs; steady
workload at most 4x, at 85 % and at 95 % load; ``--backfill`` at most 1.5x the time without, at 20,000
and 1,000,000 jobs.

    python benchmarks/floor_bench.py                                # heavy, steady and steady95, 20k and 1M
    python benchmarks/floor_bench.py --shapes heavy --sizes 20000   # a quick look
"""

from __future__ import annotations

import argparse
import csv
import heapq
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads

from policy_engine.simulation import compiled
from policy_engine.simulation.core.engine import Engine, SimulationSettings
from policy_engine.simulation.gcpause import gc_paused
from policy_engine.simulation.results.records import build_result
from policy_engine.simulation.scenarios.workload import load_jobs


def floor(path: Path) -> dict:
    """csv + heapq: one submission and one completion event per job, popped in time order."""
    started, cpu = time.perf_counter(), time.process_time()
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        at, took = header.index("submit_at"), header.index("duration")
        rows = [(float(row[at]), float(row[took])) for row in reader]
    events: list = []
    push, pop = heapq.heappush, heapq.heappop
    for seq, (submit, _) in enumerate(rows):
        push(events, (submit, 1, seq))
    done = 0
    while events:
        now, kind, seq = pop(events)
        if kind == 1:
            push(events, (now + rows[seq][1], 0, seq))
        else:
            done += 1
    assert done == len(rows)
    return {"wall_s": time.perf_counter() - started, "cpu_s": time.process_time() - cpu}


def simulator(path: Path, backfill: bool) -> dict:
    topology = workloads.topology(path.stem.split("-")[0])  # files are named SHAPE-JOBS.csv
    started, cpu = time.perf_counter(), time.process_time()
    with gc_paused():  # as ``batch-quota simulate`` runs them: one pause of the cyclic collector
        specs = load_jobs(path, topology)
        engine = Engine(topology, specs, settings=SimulationSettings(backfill=backfill))
        engine.run()
        result = build_result(engine)
    return {"wall_s": time.perf_counter() - started, "cpu_s": time.process_time() - cpu,
            "preemptions": result.summary["preemptions"], "simulated_days": result.time / 86400}


#: Targets: the simulator at most this many times the floor, per workload shape; backfill against without.
FLOOR_TARGETS = {"heavy": 5.0, "steady": 4.0, "steady95": 4.0}
BACKFILL_TARGET = 1.5
#: Peak memory of 1,000,000 heavy jobs (load, run, results), in MB.
MEMORY_TARGET_MB = 800


def verdict(value: float, target: float) -> str:
    return f"{'meets' if value <= target else 'MISSES'} <= {target:g}"


STEPS = {"floor": lambda path: floor(path), "simulator": lambda path: simulator(path, False),
         "backfill": lambda path: simulator(path, True)}


#: Below this many jobs a step takes a few hundredths of a second, where a scheduler tick shows:
#: each step runs this many times and the fastest run counts (as ``timeit`` does), floor and simulator alike.
SMALL, SMALL_REPEATS = 100_000, 5


def measure(step: str, path: Path, jobs: int) -> dict:
    runs = []
    for _ in range(SMALL_REPEATS if jobs < SMALL else 1):
        out = subprocess.run([sys.executable, __file__, "--step", step, "--path", str(path)], check=True,
                             capture_output=True, text=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return min(runs, key=lambda run: run["wall_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="*", default=["heavy", "steady", "steady95"],
                        choices=sorted(workloads.SHAPES))
    parser.add_argument("--sizes", type=int, nargs="*", default=[20_000, 1_000_000])
    parser.add_argument("--no-backfill", action="store_true", help="Skip the --backfill runs.")
    parser.add_argument("--step", choices=sorted(STEPS), help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        row = STEPS[args.step](Path(args.path))
        row["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(row))
        return
    print(f"simulator core: {'compiled (mypyc)' if compiled.runs_compiled else 'from source'}", flush=True)
    print(f"topology: {workloads.QUEUES} queues x {workloads.SHARES} shares, {workloads.TYPES} instance types; "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as workdir:
        for shape in args.shapes:
            for size in args.sizes:
                path = workloads.workload_csv(shape, size, Path(workdir))
                base = measure("floor", path, size)
                sim = measure("simulator", path, size)
                wall, cpu = sim["wall_s"] / base["wall_s"], sim["cpu_s"] / base["cpu_s"]
                target = FLOOR_TARGETS[shape]
                memory = (f", peak {verdict(sim['peak_mb'], MEMORY_TARGET_MB)} MB"
                          if shape == "heavy" and size >= 1_000_000 else "")
                print(f"{shape:>6} {size:>9,} jobs: floor {base['wall_s']:7.2f} s (cpu {base['cpu_s']:7.2f})  "
                      f"simulator {sim['wall_s']:7.2f} s (cpu {sim['cpu_s']:7.2f}, peak {sim['peak_mb']:6.0f} MB, "
                      f"{sim['preemptions']:,} preemptions, {sim['simulated_days']:.0f} days)  "
                      f"ratio {wall:.2f}x wall, {cpu:.2f}x cpu (wall {verdict(wall, target)}x, cpu "
                      f"{verdict(cpu, target)}x{memory}); load average {os.getloadavg()[0]:.2f}", flush=True)
                if not args.no_backfill:
                    fill = measure("backfill", path, size)
                    wall, cpu = fill["wall_s"] / sim["wall_s"], fill["cpu_s"] / sim["cpu_s"]
                    print(f"{'':>6} {'':>9}       --backfill {fill['wall_s']:7.2f} s (cpu {fill['cpu_s']:7.2f}, "
                          f"peak {fill['peak_mb']:6.0f} MB, {fill['preemptions']:,} preemptions)  "
                          f"ratio to without {wall:.2f}x wall, {cpu:.2f}x cpu (wall {verdict(wall, BACKFILL_TARGET)}x, "
                          f"cpu {verdict(cpu, BACKFILL_TARGET)}x); load average {os.getloadavg()[0]:.2f}", flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
