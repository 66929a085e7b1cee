"""How fast ``batch-quota check`` is at AWS's account limits (50 queues x 20 shares x 5 instance types).

Every share carries a guarantee (min_capacity, burst_capacity, never_preempted where it holds), so
the benchmark pays for every proof, max-flows included.

Prints: check time for the Python ``large_topology()``, load+check time from a YAML file of the
same topology, the whole command line on that file, and peak memory. Target: under 2 s.
Run: ``python benchmarks/check_bench.py`` (or ``make bench``).
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import yaml

from policy_engine.analysis.checks import check_topology
from policy_engine.inputs.examples import large_topology
from policy_engine.inputs.loading import load_topology
from policy_engine.simulation import compiled

REPEATS = 5


def _timed(function, repeats: int = REPEATS) -> str:
    """Best and median wall time, and best CPU time of this process (steadier when the machine is shared)."""
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        function()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return f"wall best {min(walls):.3f} s, median {statistics.median(walls):.3f} s; cpu best {min(cpus):.3f} s"


def main() -> None:
    print(f"simulator core: {'compiled (mypyc)' if compiled.runs_compiled else 'from source'}", flush=True)
    topology = large_topology(guarantees=True)
    shares = sum(len(q.shares) for q in topology.job_queues)
    print(f"topology: {len(topology.job_queues)} queues, {shares} shares, "
          f"{len(topology.service_environments[0].capacity)} instance types, {len(topology.guarantees)} guarantees")

    report = check_topology(topology)
    print(f"findings: {len(report.errors)} errors, {len(report.warnings)} warnings, {len(report.summaries)} summaries")

    print(f"check_topology(large_topology(guarantees=True)): {_timed(lambda: check_topology(topology))}")

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "large.yaml"
        path.write_text(yaml.safe_dump(topology.model_dump(mode="json", exclude_defaults=True), sort_keys=False))
        size_kib = path.stat().st_size / 1024
        print(f"load_topology(large.yaml, {size_kib:.0f} KiB):      {_timed(lambda: load_topology(path))}")
        print(f"load + check from YAML:                  {_timed(lambda: check_topology(load_topology(path)))}")
        command = [sys.executable, "-c", "from policy_engine.cli.app import main; main()", "check", "--format", "json",
                   str(path)]
        exit_code = subprocess.run(command, capture_output=True, check=False).returncode
        print(f"command line exit code:                  {exit_code}")
        start = time.perf_counter()
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        for _ in range(3):
            subprocess.run(command, capture_output=True, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime) / 3
        wall = (time.perf_counter() - start) / 3
        print(f"command line, start to exit (mean of 3): wall {wall:.3f} s; cpu {cpu:.3f} s")

    tracemalloc.start()
    check_topology(topology)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"peak memory allocated by one check:      {peak / 2**20:.1f} MiB (tracemalloc)")
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"peak resident set of this process:       {rss_mib:.0f} MiB")


if __name__ == "__main__":
    main()
