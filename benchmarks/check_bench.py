"""How fast ``batch-quota check`` is at AWS's account limits (50 queues x 20 shares x 5 instance types).

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

from policy_engine.checks import check_topology
from policy_engine.examples import large_topology
from policy_engine.loading import load_topology

REPEATS = 5


def _timed(function, repeats: int = REPEATS) -> tuple[float, float]:
    """(best, median) wall time in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def main() -> None:
    topology = large_topology()
    shares = sum(len(q.shares) for q in topology.job_queues)
    print(f"topology: {len(topology.job_queues)} queues, {shares} shares, "
          f"{len(topology.service_environments[0].capacity)} instance types")

    report = check_topology(topology)
    print(f"findings: {len(report.errors)} errors, {len(report.warnings)} warnings, {len(report.summaries)} summaries")

    best, median = _timed(lambda: check_topology(topology))
    print(f"check_topology(large_topology()):        best {best:.3f} s, median {median:.3f} s")

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "large.yaml"
        path.write_text(yaml.safe_dump(topology.model_dump(mode="json", exclude_defaults=True), sort_keys=False))
        size_kib = path.stat().st_size / 1024
        best, median = _timed(lambda: load_topology(path))
        print(f"load_topology(large.yaml, {size_kib:.0f} KiB):      best {best:.3f} s, median {median:.3f} s")
        best, median = _timed(lambda: check_topology(load_topology(path)))
        print(f"load + check from YAML:                  best {best:.3f} s, median {median:.3f} s")
        command = [sys.executable, "-c", "from policy_engine.cli import main; main()", "check", "--format", "json",
                   str(path)]
        exit_code = subprocess.run(command, capture_output=True, check=False).returncode
        best, median = _timed(lambda: subprocess.run(command, capture_output=True, check=False), repeats=3)
        print(f"command line exit code:                  {exit_code}")
        print(f"command line (process start to exit):    best {best:.3f} s, median {median:.3f} s")

    tracemalloc.start()
    check_topology(topology)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"peak memory allocated by one check:      {peak / 2**20:.1f} MiB (tracemalloc)")
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"peak resident set of this process:       {rss_mib:.0f} MiB")


if __name__ == "__main__":
    main()
