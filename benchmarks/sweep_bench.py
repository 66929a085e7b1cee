"""Sweep benchmark: parallel throughput against sequential, scheduling overhead, and a 1,000-run sweep.

Prints, for a 10,000-job scenario (8 shares, generated workload):
  * the sequential rate (in-process, ``--workers 1``) and the rate on an embedded LocalCluster with one
    worker process per core, and their ratio (target: at least 1.8x on 2 cores), next to the ratio a
    bare ``ProcessPoolExecutor`` gets on the same runs at the same moment (what the machine allows);
  * the scheduling overhead per run for a small scenario (the walkthrough's 4 jobs): wall time per run on
    the cluster minus the compute time per run divided by the workers (target: under 50 ms);
  * with ``--big N``: the wall time of N runs of the 10,000-job scenario (target: 1,000 in under 10 min);
  * each worker's peak memory next to the memory of one simulation in this process (the workload is
    scattered once, not copied per task).
The load average is printed with the figures: on a shared machine wall-time ratios are noisy, and
with Linux's autogroup scheduling (``/proc/sys/kernel/sched_autogroup_enabled``) a session's
processes share one slice of a busy CPU, so the speed-up only shows when the cores are not
already saturated by other sessions. Sequential and parallel runs are interleaved over
``--rounds`` and the best of each is compared.

    python benchmarks/sweep_bench.py                 # throughput and overhead (about a minute)
    python benchmarks/sweep_bench.py --big 1000      # plus the 1,000-run sweep
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from policy_engine.simulation.generate import WorkloadProfile, generate_jobs, write_jobs
from policy_engine.simulation.workload import load_scenario
from policy_engine.sweep.executor import DaskExecutor, InProcess
from policy_engine.sweep.grammar import parse_vary
from policy_engine.sweep.grid import expand
from policy_engine.sweep.runner import SweepInput, run_sweep, run_task

ROOT = Path(__file__).resolve().parents[1]


def write_scenario(directory: Path, jobs: int) -> Path:
    import yaml

    from policy_engine.examples import large_topology

    topology = large_topology(queues=1, shares_per_queue=8, instance_types=1)
    profile = WorkloadProfile(jobs=jobs, arrival_rate=0.8 * 16 / 1.3, sizes={1: 0.7, 2: 0.3}, duration_mean=3600.0,
                              priorities={1: 0.6, 5: 0.3, 9: 0.1}, seed=7)
    write_jobs(directory / "jobs.csv", generate_jobs(topology, profile))
    (directory / "topology.yaml").write_text(yaml.safe_dump(topology.model_dump(mode="json", exclude_none=True)))
    path = directory / "scenario.yaml"
    path.write_text("topology: topology.yaml\njobs: jobs.csv\nsettings: {startup_delay: 30}\n")
    return path


def candidates(scenario, runs: int):
    """``runs`` distinct candidates of a grid over two shares' borrow limits and the arrival rate (similar costs)."""
    shares = [f"{q.name}/{s.name}" for q, s in scenario.topology.shares() if s.strategy == "LEND_AND_BORROW"][:2]
    vary = [f"{shares[0]}.borrow_limit=0..200:5", f"{shares[1]}.borrow_limit=0,50,100,-1",
            "workload.scale=0.9..1.1:0.02"]
    axes = parse_vary(vary, scenario.topology)
    grid = list(expand(axes))
    assert len(grid) >= runs, f"the grid has {len(grid)} candidates, fewer than {runs}"
    return axes, grid[:runs]


_CONTROL: tuple | None = None


def _control_init(path: str, runs: int) -> None:
    """A plain process pool's worker: the same scenario and candidates, loaded once per process."""
    global _CONTROL
    scenario = load_scenario(path)
    axes, grid = candidates(scenario, runs)
    _CONTROL = (SweepInput(scenario, tuple(axes)), grid)


def _control_task(index: int) -> int:
    shared, grid = _CONTROL
    return run_task(shared, grid[index])["index"]


def control_ratio(path: Path, runs: int, workers: int, sequential: float) -> float:
    """The same runs on a bare ``ProcessPoolExecutor``: the parallelism the machine offers right now."""
    with ProcessPoolExecutor(workers, initializer=_control_init, initargs=(str(path), runs)) as pool:
        list(pool.map(_control_task, range(workers)))
        started = time.perf_counter()
        list(pool.map(_control_task, range(runs)))
        return sequential / (time.perf_counter() - started)


def timed(executor, scenario, axes, chosen) -> tuple[float, list[dict]]:
    started = time.perf_counter()
    records = run_sweep(scenario, axes, chosen, executor)
    return time.perf_counter() - started, records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=40, help="runs of the large scenario per throughput figure")
    parser.add_argument("--small-runs", type=int, default=400)
    parser.add_argument("--big", type=int, default=0, help="also time this many runs of the large scenario")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved sequential/parallel measurements")
    args = parser.parse_args()
    print(f"cores {os.cpu_count()}, workers {args.workers}, load average at start "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as work:
        scenario_path = write_scenario(Path(work), args.jobs)
        scenario = load_scenario(scenario_path)
        axes, grid = candidates(scenario, max(args.runs, args.big))
        chosen = grid[: args.runs]
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        timed(InProcess(), scenario, axes, chosen[:1])
        one_simulation_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        small = load_scenario(ROOT / "scenarios" / "walkthrough.yaml")
        small_axes = parse_vary(["training/QS1.borrow_limit=0..399", "settings.backfill=false,true"],
                                small.topology)
        small_grid = list(expand(small_axes))[: args.small_runs]
        with DaskExecutor(workers=args.workers) as cluster:
            timed(cluster, small, small_axes, small_grid[:20])  # warm the workers' imports
            sequential_times, parallel_times = [], []
            for round_number in range(1, args.rounds + 1):  # interleaved, so a burst of load hits both alike
                cpu = time.process_time()
                sequential, reference = timed(InProcess(), scenario, axes, chosen)
                cpu = time.process_time() - cpu
                parallel, records = timed(cluster, scenario, axes, chosen)
                assert records == reference, "the cluster's results differ from the sequential ones"
                sequential_times.append(sequential)
                parallel_times.append(parallel)
                control = control_ratio(scenario_path, args.runs, args.workers, sequential)
                print(f"round {round_number}: {args.runs} runs of {args.jobs:,} jobs: sequential {sequential:.1f} s "
                      f"({args.runs / sequential:.2f} runs/s, {cpu / args.runs * 1000:.0f} ms CPU per run), "
                      f"LocalCluster {parallel:.1f} s ({args.runs / parallel:.2f} runs/s): "
                      f"{sequential / parallel:.2f}x; a bare process pool: {control:.2f}x; "
                      f"load {os.getloadavg()[0]:.2f}")
            best_sequential, best_parallel = min(sequential_times), min(parallel_times)
            print(f"throughput (best of {args.rounds}): sequential {args.runs / best_sequential:.2f} runs/s, "
                  f"LocalCluster with {args.workers} workers {args.runs / best_parallel:.2f} runs/s: "
                  f"{best_sequential / best_parallel:.2f}x (target >= 1.8x)")
            small_sequential, _ = timed(InProcess(), small, small_axes, small_grid)
            small_parallel, _ = timed(cluster, small, small_axes, small_grid)
            compute = small_sequential / len(small_grid)
            per_run = small_parallel / len(small_grid)
            overhead = per_run - compute / args.workers
            print(f"small scenario: {len(small_grid)} runs, {compute * 1000:.1f} ms per run in-process, "
                  f"{per_run * 1000:.1f} ms wall per run on the cluster: overhead {overhead * 1000:.1f} ms per run "
                  "(target < 50 ms)")
            if args.big:
                big, _ = timed(cluster, scenario, axes, grid[: args.big])
                print(f"{args.big:,} runs of {args.jobs:,} jobs: {big:.0f} s = {big / 60:.1f} min "
                      f"(target < 10 min for 1,000); {args.big / big:.2f} runs/s")
            peaks = cluster.client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
            print(f"peak memory per worker: {', '.join(f'{mb:.0f} MB' for mb in peaks.values())}; one simulation "
                  f"in this process added {one_simulation_mb:.0f} MB to its peak")
    print(f"load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
