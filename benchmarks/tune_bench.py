"""``tune --workload-samples 5`` with 100 candidates on a 10,000-job scenario, on the embedded LocalCluster.

    .venv/bin/python benchmarks/tune_bench.py                     # the target: under 5 minutes on 2 cores
    .venv/bin/python benchmarks/tune_bench.py --jobs 2000 --budget 20   # a quick look

The scenario is ``sweep_bench``'s (8 shares of 2 instances, about 40 days of submissions); the search
moves one instance either way between four pairs of shares (``transfer(A,B).capacity.TYPE=-1..1``,
81 candidates, plus two borrow limits: more than 100), so every candidate keeps the environment's
total. Each candidate is simulated on 5 day-block resamples of the workload (and the current topology
too): 505 simulations of 10,000 jobs. Prints the wall time of the command line (process start to exit)
with the load average before and after, and its CPU time (the cluster's processes included) with the
wall time idle cores would give: on a shared machine, wall time measures the neighbours too.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sweep_bench import write_scenario

from policy_engine.simulation.scenarios.workload import load_scenario

TARGET_SECONDS = 300


def vary(path: Path) -> list[str]:
    scenario = load_scenario(path)
    shares = [f"{q.name}/{s.name}" for q, s in scenario.topology.shares()]
    kind = next(iter(scenario.topology.shares()[0][1].capacity))
    axes = [f"transfer({shares[i]},{shares[i + 1]}).capacity.{kind}=-1..1" for i in range(0, 8, 2)]
    borrowers = [f"{q.name}/{s.name}" for q, s in scenario.topology.shares() if s.strategy == "LEND_AND_BORROW"]
    return [*axes, f"{borrowers[0]}.borrow_limit=0,100", f"{borrowers[1]}.borrow_limit=0,100"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = write_scenario(Path(folder), options.jobs)
        arguments = [a for axis in vary(path) for a in ("--vary", axis)]
        command = [sys.executable, "-c", "from policy_engine.cli.app import main; main()", "tune", str(path),
                   *arguments, "--budget", str(options.budget), "--workload-samples", str(options.samples),
                   "--workers", str(options.workers), "--quiet", "--format", "json"]
        before = os.getloadavg()[0]
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
        after_usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        after = os.getloadavg()[0]
    # the command's CPU, its cluster's processes included (reaped descendants): on idle cores the wall time
    # would be about this divided by the workers
    cpu = after_usage.ru_utime + after_usage.ru_stime - usage.ru_utime - usage.ru_stime
    if done.returncode not in (0, 1):
        sys.exit(f"tune failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}")
    data = json.loads(done.stdout)
    simulated = sum(1 for run in data["runs"] if run["status"] == "ok")
    answer = ("recommended " + json.dumps(data["recommended"]["values"]) if data["recommended"]
              else f"keep the current topology ({data['keep_reason']})" if data["keep_current"] else "nothing feasible")
    print(f"tune --workload-samples {options.samples}: {simulated} candidate(s) simulated x {options.samples} "
          f"samples of {options.jobs:,} jobs, {options.workers} workers (LocalCluster): wall {wall:.1f} s "
          f"(target < {TARGET_SECONDS} s at 100 candidates and 10,000 jobs); load {before:.2f} before, "
          f"{after:.2f} after; CPU {cpu:.1f} s (idle-core estimate {cpu / options.workers:.1f} s); {answer}; "
          f"better on {data['wins']} of {data['workload_samples']} samples")


if __name__ == "__main__":
    main()
