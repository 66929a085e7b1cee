"""Sweep benchmark: parallel throughput against sequential, CPU per run, scheduling overhead, a 1,000-run sweep.

    .venv/bin/python benchmarks/sweep_bench.py              # throughput, CPU per run and overhead (1-2 min idle)
    .venv/bin/python benchmarks/sweep_bench.py --big 1000   # plus 1,000 runs of the 10,000-job scenario

Every figure is printed with the 1-minute load average at that moment. Targets (2 cores):
  * THROUGHPUT: the LocalCluster (one worker process per core) at least 1.8x the sequential rate
    (in-process, ``--workers 1``) on a 10,000-job scenario. Sequential and parallel runs are interleaved
    over ``--rounds`` and the best of each is compared; a bare ``ProcessPoolExecutor`` on the same runs
    at the same moment shows what the machine allows. Wall-time ratios need idle cores: with other
    work running (load average above the core count) they measure the neighbours, not the sweep.
  * CPU PER RUN (load-independent): the cluster's CPU per run (workers, plus the scheduler, nannies and
    client in this process) against the sequential CPU per run. ``ceiling`` = cores x sequential CPU /
    cluster CPU: the ratio the cluster reaches on idle cores from CPU alone. A bare process pool's CPU per
    run separates Dask's share from what simulations running side by side cost each other.
  * OVERHEAD: for a small scenario (4 jobs), wall time per run on the cluster minus compute per run
    divided by the workers (target: under 50 ms per run).
  * BIG (``--big N``): N runs of the 10,000-job scenario through the cluster (target: 1,000 in under 10 min).
  * MEMORY: each worker's peak next to one simulation's (the workload is scattered once, not per task).
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from policy_engine.simulation.inputs.generate import GenerateOptions, ShareMix, generate_jobs, write_jobs
from policy_engine.simulation.scenarios.workload import Scenario, load_scenario
from policy_engine.sweep.executor import DaskExecutor, Executor, InProcess
from policy_engine.sweep.grammar import Axis, parse_vary
from policy_engine.sweep.grid import Candidate, expand
from policy_engine.sweep.runner import SweepInput, run_sweep, run_task

ROOT = Path(__file__).resolve().parents[1]


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def write_scenario(directory: Path, jobs: int) -> Path:
    import yaml

    from policy_engine.inputs.examples import large_topology

    topology = large_topology(queues=1, shares_per_queue=8, instance_types=1)
    profile = GenerateOptions(jobs=jobs, arrival_rate=0.8 * 16 / 1.3, sizes={1: 0.7, 2: 0.3}, duration_mean=3600.0,
                              priorities={1: 0.6, 5: 0.3, 9: 0.1}, seed=7, share_mix=ShareMix.UNIFORM)
    write_jobs(directory / "jobs.csv", generate_jobs(topology, profile))
    (directory / "topology.yaml").write_text(yaml.safe_dump(topology.model_dump(mode="json", exclude_none=True)))
    path = directory / "scenario.yaml"
    path.write_text("topology: topology.yaml\njobs: jobs.csv\nsettings: {startup_delay: 30}\n")
    return path


def candidates(scenario: Scenario, runs: int) -> tuple[list[Axis], list[Candidate]]:
    """``runs`` distinct candidates of a grid over two shares' borrow limits and the arrival rate (similar costs)."""
    shares = [f"{q.name}/{s.name}" for q, s in scenario.topology.shares() if s.strategy == "LEND_AND_BORROW"][:2]
    vary = [f"{shares[0]}.borrow_limit=0..200:5", f"{shares[1]}.borrow_limit=0,50,100,-1",
            "workload.scale=0.9..1.1:0.02"]
    axes = parse_vary(vary, scenario.topology)
    grid = list(expand(axes))
    assert len(grid) >= runs, f"the grid has {len(grid)} candidates, fewer than {runs}"
    return axes, grid[:runs]


_CONTROL: tuple[SweepInput, list[Candidate]] | None = None


def _control_init(path: str, runs: int) -> None:
    """A plain process pool's worker: the same scenario and candidates, loaded once per process."""
    global _CONTROL
    scenario = load_scenario(path)
    axes, grid = candidates(scenario, runs)
    _CONTROL = (SweepInput(scenario, tuple(axes)), grid)


def _control_task(index: int) -> float:
    """One run in a pool process; its CPU seconds."""
    assert _CONTROL is not None
    shared, grid = _CONTROL
    started = time.process_time()
    run_task(shared, grid[index])
    return time.process_time() - started


def control_ratio(path: Path, runs: int, workers: int, sequential: float) -> tuple[float, float]:
    """The same runs on a bare ``ProcessPoolExecutor``: the parallelism the machine offers right now, and the
    CPU seconds per run when ``workers`` simulations run side by side (they share caches and memory bandwidth)."""
    with ProcessPoolExecutor(workers, initializer=_control_init, initargs=(str(path), runs)) as pool:
        list(pool.map(_control_task, range(workers)))
        started = time.perf_counter()
        cpu = sum(pool.map(_control_task, range(runs)))
        return sequential / (time.perf_counter() - started), cpu / runs


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def workers_cpu(cluster: DaskExecutor) -> float:
    """CPU seconds the cluster's worker processes have used so far."""
    return float(sum(cluster.client.run(_cpu_seconds).values()))


def timed(executor: Executor, scenario: Scenario, axes: Sequence[Axis],
          chosen: Sequence[Candidate]) -> tuple[float, float, float, list[dict[str, Any]]]:
    """(wall seconds, CPU seconds of this process, CPU seconds of the cluster's workers, records)."""
    workers_before = workers_cpu(executor) if isinstance(executor, DaskExecutor) else 0.0
    cpu, started = time.process_time(), time.perf_counter()
    records = run_sweep(scenario, axes, chosen, executor)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    workers = workers_cpu(executor) - workers_before if isinstance(executor, DaskExecutor) else 0.0
    return wall, cpu, workers, records


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=40, help="runs of the large scenario per throughput figure")
    parser.add_argument("--small-runs", type=int, default=400)
    parser.add_argument("--big", type=int, default=0, help="also time this many runs of the large scenario")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved sequential/parallel measurements")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    print(f"machine: {cores} cores; LocalCluster of {args.workers} worker processes; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min). Wall-time ratios need a load below "
          f"{cores}; CPU per run does not.")
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
        print(f"scenario: {args.jobs:,} generated jobs on 8 shares; {args.runs} runs per measurement, "
              f"{args.rounds} interleaved rounds")
        with DaskExecutor(workers=args.workers) as cluster:
            timed(cluster, small, small_axes, small_grid[:20])  # warm the workers' imports
            rounds: list[tuple[float, float, float, float, float, float]] = []
            for round_number in range(1, args.rounds + 1):  # interleaved, so a burst of load hits both alike
                sequential, sequential_cpu, _, reference = timed(InProcess(), scenario, axes, chosen)
                parallel, client_cpu, worker_cpu, records = timed(cluster, scenario, axes, chosen)
                assert records == reference, "the cluster's results differ from the sequential ones"
                control, pool_cpu = control_ratio(scenario_path, args.runs, args.workers, sequential)
                rounds.append((sequential, parallel, sequential_cpu, worker_cpu, client_cpu, pool_cpu))
                per_run = 1000 / args.runs
                print(f"  round {round_number}: sequential {args.runs / sequential:.2f} runs/s "
                      f"({sequential_cpu * per_run:.0f} ms CPU/run); LocalCluster {args.runs / parallel:.2f} runs/s "
                      f"({worker_cpu * per_run:.0f} ms CPU/run on workers + {client_cpu * per_run:.0f} ms in the "
                      f"scheduler, nannies and client): {sequential / parallel:.2f}x; bare process pool "
                      f"{control:.2f}x ({pool_cpu * 1000:.0f} ms CPU/run); {load()}")
            best_sequential = min(r[0] for r in rounds)
            best_parallel = min(r[1] for r in rounds)
            print(f"THROUGHPUT (best of {args.rounds}): sequential {args.runs / best_sequential:.2f} runs/s, "
                  f"LocalCluster {args.runs / best_parallel:.2f} runs/s: {best_sequential / best_parallel:.2f}x "
                  f"(target >= 1.8x); {load()}")
            sequential_cpu = min(r[2] for r in rounds) / args.runs
            cluster_cpu = min(r[3] + r[4] for r in rounds) / args.runs
            worker_share = min(r[3] for r in rounds) / args.runs
            side_by_side = min(r[5] for r in rounds)
            print(f"CPU PER RUN (least of {args.rounds}): sequential {sequential_cpu * 1000:.0f} ms; LocalCluster "
                  f"{cluster_cpu * 1000:.0f} ms ({worker_share * 1000:.0f} ms in the worker processes): "
                  f"{(cluster_cpu / sequential_cpu - 1):+.0%}; ceiling on {min(cores, args.workers)} idle cores "
                  f"{min(cores, args.workers) * sequential_cpu / cluster_cpu:.2f}x; {load()}")
            print(f"  of which Dask: {(cluster_cpu / side_by_side - 1):+.0%} against a bare process pool's "
                  f"{side_by_side * 1000:.0f} ms per run with {args.workers} simulations side by side (the rest is "
                  "what concurrent simulations cost each other on this machine)")
            small_sequential, _, _, _ = timed(InProcess(), small, small_axes, small_grid)
            small_parallel, _, _, _ = timed(cluster, small, small_axes, small_grid)
            compute = small_sequential / len(small_grid)
            wall_per_run = small_parallel / len(small_grid)
            overhead = wall_per_run - compute / args.workers
            print(f"OVERHEAD: small scenario, {len(small_grid)} runs: {compute * 1000:.1f} ms per run in-process, "
                  f"{wall_per_run * 1000:.1f} ms wall per run on the cluster: {overhead * 1000:.1f} ms per run "
                  f"(target < 50 ms); {load()}")
            if args.big:
                big, _, _, _ = timed(cluster, scenario, axes, grid[: args.big])
                print(f"BIG: {args.big:,} runs of {args.jobs:,} jobs on the LocalCluster: {big:.0f} s = "
                      f"{big / 60:.1f} min (target < 10 min for 1,000); {args.big / big:.2f} runs/s; {load()}")
            peaks = cluster.client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
            print(f"MEMORY: peak per worker {', '.join(f'{mb:.0f} MB' for mb in peaks.values())}; one simulation "
                  f"in this process added {one_simulation_mb:.0f} MB to its peak")
    print(f"load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
