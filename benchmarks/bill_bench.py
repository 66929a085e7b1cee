"""What the bill adds after a run: the billable pass over every job's attempts, and pricing it with the capacity
flows (``run_costs``, what ``simulate --prices`` does), against the simulation itself.

    python benchmarks/bill_bench.py                         # 20,000 and 1,000,000 jobs, heavy-tailed
    python benchmarks/bill_bench.py --sizes 200000          # one size

Target: the billable pass costs well under the simulation (it is one pass over the attempts, no per-event work);
wall times are printed with CPU time and the load average, since the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads

from policy_engine.inputs.prices import Prices, used_types
from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.gcpause import gc_paused
from policy_engine.simulation.results.billable import Period, billable
from policy_engine.simulation.results.costs import run_costs
from policy_engine.simulation.results.records import build_result
from policy_engine.simulation.scenarios.workload import load_jobs
from policy_engine.simulation.settings import SimulationSettings


def _timed(work):  # -> (value, wall s, cpu s)
    begun, cpu = time.perf_counter(), time.process_time()
    value = work()
    return value, time.perf_counter() - begun, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="heavy", choices=sorted(workloads.SHAPES))
    parser.add_argument("--sizes", type=int, nargs="*", default=[20_000, 1_000_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes:
            print(measure(args.shape, size, Path(folder)), flush=True)


def measure(shape: str, size: int, folder: Path) -> str:
    """One size's figures, as a line."""
    path = workloads.workload_csv(shape, size, folder)
    topology = workloads.topology(shape)
    prices = Prices("USD", {t: 1.0 + n for n, t in enumerate(sorted(used_types(topology)))})
    with gc_paused():
        engine = Engine(topology, load_jobs(path, topology), settings=SimulationSettings())
        _, run_s, run_cpu = _timed(engine.run)
        result = build_result(engine)
        ledger, bill_s, bill_cpu = _timed(lambda: billable(result))
        _, half_s, half_cpu = _timed(lambda: billable(result, Period(0.0, result.time / 2)))
        _, priced_s, priced_cpu = _timed(lambda: run_costs(result, topology, prices))
    return (f"{size:>9,} jobs ({shape}): simulate {run_s:6.2f} s (cpu {run_cpu:6.2f}); billable pass {bill_s:5.2f} s "
            f"(cpu {bill_cpu:5.2f}), over half the run {half_s:5.2f} s (cpu {half_cpu:5.2f}); priced with the "
            f"capacity tables {priced_s:5.2f} s (cpu {priced_cpu:5.2f}); {len(ledger.shares)} ledger rows; load "
            f"average {os.getloadavg()[0]:.2f}")

if __name__ == "__main__":
    main()
