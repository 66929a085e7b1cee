"""Training plans' cost to the simulator: the same workload with half its jobs on plans, against none.

The steady benchmark workload (``workloads.steady``: 100 shares, 4 instance types), once as it is and once
with one training plan per instance type, each with 5 windows spanning the run (the environment's whole
capacity of the type, 2-hour gaps between windows), and every other job naming its type's plan. Each run
is the engine plus its results, in a fresh process (the fastest of ``--repeat`` by CPU time, which a loaded
machine disturbs less than the wall clock); the jobs are built in memory, so loading is not measured. Prints
both times, the ratios and what the plans did.

Target: at most 1.3x the time without plans at 1,000,000 jobs (the plan logic runs only for plan jobs, and
a topology without plans runs no plan code at all). The machine's load changes the figures: the script
prints ``uptime`` before and after.

    python benchmarks/plans_bench.py                      # 1,000,000 jobs
    python benchmarks/plans_bench.py --jobs 100000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads

from policy_engine.foundation.model import ReservedCapacity, Topology, TrainingPlan
from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.core.jobs import JobSpec
from policy_engine.simulation.gcpause import gc_paused
from policy_engine.simulation.inputs.generate import generate_jobs
from policy_engine.simulation.results.plan_account import account
from policy_engine.simulation.results.records import build_result

WINDOWS = 5
GAP = 2 * 3600.0


def with_plans(topology: Topology, jobs: list[JobSpec]) -> tuple[Topology, list[JobSpec]]:
    """One plan per instance type, 5 windows over the submissions' span; every other job on its type's plan."""
    span = max(job.submit_at for job in jobs) + 86400.0
    length = span / WINDOWS
    capacity: dict[str, int] = {}
    for environment in topology.service_environments:
        for instance_type, count in environment.capacity.items():
            capacity[instance_type] = capacity.get(instance_type, 0) + count
    plans = tuple(TrainingPlan(name=f"plan-{index}", instance_type=instance_type, reserved_capacities=tuple(
        ReservedCapacity(instances=count, start=window * length, end=(window + 1) * length - GAP)
        for window in range(WINDOWS))) for index, (instance_type, count) in enumerate(sorted(capacity.items())))
    names = {plan.instance_type: plan.name for plan in plans}
    planned = [job._replace(training_plan=names[job.instance_type]) if index % 2 else job
               for index, job in enumerate(jobs)]
    return topology.model_copy(update={"training_plans": plans}), planned


def one_run(jobs: int, plans: bool) -> dict:
    topology = workloads.topology("steady")
    specs = list(generate_jobs(topology, workloads.steady(jobs)))
    if plans:
        topology, specs = with_plans(topology, specs)
    with gc_paused():
        started, cpu = time.perf_counter(), time.process_time()
        engine = Engine(topology, specs)
        engine.run()
        result = build_result(engine)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    figures = {"seconds": seconds, "cpu": cpu, "jobs": len(specs), "simulated": result.time,
               "by_status": result.summary["by_status"]}
    if result.plans is not None:
        figures.update(plan_jobs=sum(1 for spec in specs if spec.training_plan),
                       paid_h=sum(p.paid for p in result.plans.plans) / 3600,
                       used_h=sum(p.used for p in result.plans.plans) / 3600,
                       cut=sum(w.cut_jobs for p in result.plans.plans for w in p.windows))
        # every reserved hour accounted for, after the run (what ``simulate`` adds for a topology with plans)
        with gc_paused():
            started, cpu = time.perf_counter(), time.process_time()
            account(result, topology)
            figures.update(account_seconds=time.perf_counter() - started, account_cpu=time.process_time() - cpu)
    return figures


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--child", choices=("plain", "plans"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_run(args.jobs, args.child == "plans")))
        return
    print(f"before: {uptime()}")
    best: dict[str, dict] = {}
    for _ in range(args.repeat):
        for kind in ("plain", "plans"):
            out = subprocess.run([sys.executable, __file__, "--jobs", str(args.jobs), "--child", kind],
                                 capture_output=True, text=True, check=True).stdout
            figures = json.loads(out)
            if kind not in best or figures["cpu"] < best[kind]["cpu"]:
                best[kind] = figures
    plain, planned = best["plain"], best["plans"]
    print(f"{args.jobs:,} jobs, fastest of {args.repeat}:")
    print(f"  without plans: {plain['cpu']:.1f} s CPU ({plain['seconds']:.1f} s wall)  {plain['by_status']}")
    print(f"  half on plans: {planned['cpu']:.1f} s CPU ({planned['seconds']:.1f} s wall)  {planned['by_status']}")
    print(f"  plan jobs {planned['plan_jobs']:,}; reserved {planned['paid_h']:,.0f} instance-hours, used "
          f"{planned['used_h']:,.0f}; {planned['cut']:,} attempts cut at a window's end")
    ratio = planned["cpu"] / plain["cpu"]
    print(f"  ratio {ratio:.2f}x CPU, {planned['seconds'] / plain['seconds']:.2f}x wall (target at most 1.3x): "
          f"{'met' if ratio <= 1.3 else 'NOT met'}")
    print(f"  the plan account after the run (idle causes, hazards, plan_hold_seconds; not in the ratio): "
          f"{planned['account_cpu']:.1f} s CPU ({planned['account_seconds']:.1f} s wall), "
          f"{planned['account_cpu'] / planned['cpu']:.2f}x the run's CPU")
    print(f"after: {uptime()}")


if __name__ == "__main__":
    main()
