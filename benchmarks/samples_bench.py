"""``--samples`` benchmark: ``compare`` of two designs with ``--samples 5`` against ``--samples 1``.

Times, as a user runs them (the command in a fresh process, loading included), ``batch-quota compare`` of designs A
and B (``compare_bench``'s: B is A with every borrower's borrow limit at 100 %) on the ``steady`` workload
(``workloads.py``, 100 shares), once with ``--samples 1`` and once with ``--samples 5`` (the recorded jobs resampled
by whole days, every design on every sample: ten runs against two). Where they run is the command's own choice
(in-process for a small comparison, a local Dask cluster for a large one; docs/compare.md). Targets, on 2 cores:
``--samples 5`` within 3x ``--samples 1`` at 10,000 jobs, within 4x at 1,000,000. It prints figures and exits 0 (a
loaded machine is not a failure): CPU time of the command and its children (Dask workers included) beside wall
time, and the load average (``uptime``) with every figure.

The samples must differ: the resampler draws whole days, and at 10,000 jobs the steady workload spans under a day
(every resample would be that day again). So the workload is ``steady`` stretched to span at least ``MIN_DAYS``
days: its arrival rate lowered and its mean run time raised by the same factor, which keeps the offered load (85 %)
and the contention; at 1,000,000 jobs it spans 80 days as it is. Each command runs ``--repeat`` times (default 3)
and the median is the figure.

    python benchmarks/samples_bench.py                  # 10,000 jobs over 7 days, median of 3
    python benchmarks/samples_bench.py --jobs 1000000 --repeat 1   # the long one
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads
from compare_bench import _timed, _uptime, two_designs

from policy_engine.simulation.inputs.generate import GenerateOptions, generate_jobs, write_jobs

#: ``--samples 5`` at most this many times ``--samples 1``: 3x up to 10,000 jobs, 4x above.
SAMPLES = 5
#: The fewest days the workload spans, so that resamples by whole days differ.
MIN_DAYS = 7.0


def stretched(jobs: int) -> GenerateOptions:
    """``steady`` spanning at least ``MIN_DAYS`` days at the same offered load: the arrival rate lowered and the mean
    run time raised by one factor."""
    profile = workloads.steady(jobs)
    days = jobs / profile.arrival_rate / 24
    factor = min(1.0, days / MIN_DAYS)
    return replace(profile, arrival_rate=profile.arrival_rate * factor, duration_mean=profile.duration_mean / factor)


def _median_of(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(wall for wall, _ in runs), statistics.median(cpu for _, cpu in runs)


def target(jobs: int) -> float:
    return 3.0 if jobs <= 10_000 else 4.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command; the median is the figure")
    args = parser.parse_args()
    profile = stretched(args.jobs)
    command = [sys.executable, "-c", "from policy_engine.cli.app import main; main()"]
    build = "pure Python" if os.environ.get("BATCH_QUOTA_PURE_PYTHON") else "compiled (if built)"
    print(f"compare of two designs, --samples {SAMPLES} vs --samples 1, {args.jobs:,} jobs of the steady workload "
          f"on {workloads.QUEUES} queues x {workloads.SHARES} shares, {workloads.TYPES} types, spanning "
          f"{args.jobs / profile.arrival_rate / 24:.1f} days (mean run {profile.duration_mean / 3600:.1f} h); "
          f"simulator {build}; {os.cpu_count()} cores; median of {args.repeat}; target: at most "
          f"{target(args.jobs):g}x", flush=True)
    with tempfile.TemporaryDirectory() as name:
        workdir = Path(name)
        csv = workdir / "steady.csv"
        write_jobs(csv, generate_jobs(workloads.topology("steady"), profile))
        scenario, a, b = two_designs(workdir, csv.name)
        compare = [*command, "compare", str(scenario), "--topology", str(a), "--topology", str(b),
                   "--format", "json"]
        print(f"before: {_uptime()}", flush=True)
        ones, manys = [], []
        for _ in range(args.repeat):  # alternated, so a change in the machine's load falls on both
            ones.append(_timed([*compare, "--samples", "1"]))
            print(f"--samples 1:  wall {ones[-1][0]:7.1f} s  cpu {ones[-1][1]:7.1f} s   {_uptime()}", flush=True)
            manys.append(_timed([*compare, "--samples", str(SAMPLES)]))
            print(f"--samples {SAMPLES}:  wall {manys[-1][0]:7.1f} s  cpu {manys[-1][1]:7.1f} s   {_uptime()}",
                  flush=True)
        (one_wall, one_cpu), (many_wall, many_cpu) = _median_of(ones), _median_of(manys)
        print(f"medians: --samples 1 wall {one_wall:.1f} s cpu {one_cpu:.1f} s; --samples {SAMPLES} wall "
              f"{many_wall:.1f} s cpu {many_cpu:.1f} s", flush=True)
    ratio, goal = many_wall / one_wall, target(args.jobs)
    print(f"wall ratio {ratio:.2f}x (target {goal:g}x: {'met' if ratio <= goal else 'MISSED'}); cpu ratio "
          f"{many_cpu / one_cpu:.2f}x", flush=True)


if __name__ == "__main__":
    main()
