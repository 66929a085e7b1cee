"""``--samples`` benchmark: ``compare`` of two designs with ``--samples 5`` against ``--samples 1``.

Times, as a user runs them (the command in a fresh process, loading included), ``batch-quota compare`` of designs A
and B (``compare_bench``'s: B is A with every borrower's borrow limit at 100 %) on the ``steady`` workload
(``workloads.py``, 100 shares), once with ``--samples 1`` and once with ``--samples 5`` (the recorded jobs resampled
by whole days, every design on every sample: ten runs against two). Where they run is the command's own choice
(in-process for a small comparison, a local Dask cluster for a large one; docs/compare.md). Targets, on 2 cores:
``--samples 5`` within 3x ``--samples 1`` at 10,000 jobs, within 4x at 1,000,000. It prints figures and exits 0 (a
loaded machine is not a failure): CPU time of the command and its children (Dask workers included) beside wall
time, and the load average (``uptime``) with every figure.

At 10,000 jobs the steady workload spans less than a day, so every resample is that day again: the runs cost what
different days would, the figures are simply equal.

    python benchmarks/samples_bench.py                  # 10,000 jobs
    python benchmarks/samples_bench.py --jobs 1000000   # the long one
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads
from compare_bench import _design_b, _timed, _uptime

from policy_engine.adapters.aws.topology_file import topology_text

#: ``--samples 5`` at most this many times ``--samples 1``: 3x up to 10,000 jobs, 4x above.
SAMPLES = 5


def target(jobs: int) -> float:
    return 3.0 if jobs <= 10_000 else 4.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    args = parser.parse_args()
    command = [sys.executable, "-c", "from policy_engine.cli.app import main; main()"]
    build = "pure Python" if os.environ.get("BATCH_QUOTA_PURE_PYTHON") else "compiled (if built)"
    print(f"compare of two designs, --samples {SAMPLES} vs --samples 1, {args.jobs:,} jobs of the steady workload "
          f"on {workloads.QUEUES} queues x {workloads.SHARES} shares, {workloads.TYPES} types; simulator {build}; "
          f"{os.cpu_count()} cores; target: at most {target(args.jobs):g}x", flush=True)
    with tempfile.TemporaryDirectory() as name:
        workdir = Path(name)
        csv = workloads.workload_csv("steady", args.jobs, workdir)
        a, b = workdir / "A.yaml", workdir / "B.yaml"
        topology = workloads.topology("steady")
        a.write_text(topology_text(topology, a))
        b.write_text(topology_text(_design_b(topology), b))
        scenario = workdir / "scenario.yaml"
        scenario.write_text(f"topology: A.yaml\njobs: {csv.name}\n")
        compare = [*command, "compare", str(scenario), "--topology", str(a), "--topology", str(b),
                   "--format", "json"]
        print(f"before: {_uptime()}", flush=True)
        one_wall, one_cpu = _timed([*compare, "--samples", "1"])
        print(f"--samples 1:  wall {one_wall:7.1f} s  cpu {one_cpu:7.1f} s   {_uptime()}", flush=True)
        many_wall, many_cpu = _timed([*compare, "--samples", str(SAMPLES)])
        print(f"--samples {SAMPLES}:  wall {many_wall:7.1f} s  cpu {many_cpu:7.1f} s   {_uptime()}", flush=True)
    ratio, goal = many_wall / one_wall, target(args.jobs)
    print(f"wall ratio {ratio:.2f}x (target {goal:g}x: {'met' if ratio <= goal else 'MISSED'}); cpu ratio "
          f"{many_cpu / one_cpu:.2f}x", flush=True)


if __name__ == "__main__":
    main()
