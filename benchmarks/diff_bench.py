"""How fast ``batch-quota diff`` is on two topologies at AWS's account limits (50 queues x 20 shares).

HEAD lowers every share's first instance type from 2 to 1 (and the environments with it), so every
share changes, 1,000 hazards are found and the min_capacity guarantees of the large example are
lost: the heaviest report a 1,000-share change can give.

Prints: one ``check`` and one ``diff`` of such topologies, end to end on the command line (process
start to exit, YAML files), their ratio (target: at most 2.5), and the time to render the markdown
of the change (target: under 1 s) and its size. Run: ``python benchmarks/diff_bench.py``.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from policy_engine.changes import compare
from policy_engine.inputs.examples import large_topology
from policy_engine.reports.diff import markdown as diff_markdown
from policy_engine.reports.diff import text as diff_text

REPEATS = 5


def lowered(topology):
    """Every share's first instance type 2 -> 1, and each environment's capacity of that type with it."""
    queues = []
    for queue in topology.job_queues:
        shares = []
        for share in queue.shares:
            first = next(iter(share.capacity))
            shares.append(share.model_copy(update={"capacity": {**share.capacity, first: 1}}))
        queues.append(queue.model_copy(update={"shares": tuple(shares)}))
    environments = []
    for environment in topology.service_environments:
        first = next(iter(environment.capacity))
        environments.append(environment.model_copy(update={"capacity": {**environment.capacity,
                                                                         first: environment.capacity[first] // 2}}))
    return topology.model_copy(update={"job_queues": tuple(queues), "service_environments": tuple(environments)})


def _command(*args: str) -> tuple[float, float, float, int]:
    """Best and median wall seconds and best CPU seconds of the command line over ``REPEATS`` runs (a shared
    machine inflates wall time; the best run is the steadiest figure), and its exit code."""
    command = [sys.executable, "-c", "from policy_engine.cli.app import main; main()", *args]
    walls, cpus = [], []
    code = 0
    for _ in range(REPEATS):
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        code = subprocess.run(command, capture_output=True, check=False).returncode
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime)
    return min(walls), statistics.median(walls), min(cpus), code


def _dump(topology, path: Path) -> None:
    path.write_text(yaml.safe_dump(topology.model_dump(mode="json", exclude_defaults=True), sort_keys=False))


def main() -> None:
    base = large_topology(guarantees=True)
    head = lowered(base)
    print(f"topologies: {len(base.job_queues)} queues, {sum(len(q.shares) for q in base.job_queues)} shares, "
          f"{len(base.guarantees)} guarantees")
    with tempfile.TemporaryDirectory() as folder:
        base_file, head_file = Path(folder) / "base.yaml", Path(folder) / "head.yaml"
        _dump(base, base_file)
        _dump(head, head_file)
        check_wall, check_median, check_cpu, check_code = _command("check", "--format", "json", str(head_file))
        print(f"check, command line (best of {REPEATS}):                  wall {check_wall:.3f} s (median "
              f"{check_median:.3f}); cpu {check_cpu:.3f} s (exit {check_code})")
        for output in ("json", "markdown"):
            wall, median, cpu, code = _command("diff", str(base_file), str(head_file), "--format", output)
            print(f"diff --format {output:<8} command line (best of {REPEATS}): wall {wall:.3f} s "
                  f"(median {median:.3f}); cpu {cpu:.3f} s (exit {code}); ratio to one check: "
                  f"wall {wall / check_wall:.2f}, cpu {cpu / check_cpu:.2f} (target <= 2.5)")
    start = time.perf_counter()
    report = compare(base, head)
    print(f"compare(base, head) in process:                {time.perf_counter() - start:.3f} s "
          f"({len(report.changed_shares)} shares changed, {len(report.affected_shares)} affected, "
          f"{len(report.hazards)} hazards, "
          f"{len(report.lost_guarantees)} guarantees lost)")
    times = []
    for _ in range(5):
        start = time.perf_counter()
        markdown = diff_markdown.render(report)
        times.append(time.perf_counter() - start)
    print(f"markdown render of the 1,000-share change:     best {min(times):.3f} s, median "
          f"{statistics.median(times):.3f} s (target < 1 s); {len(markdown):,} characters "
          f"(limit {diff_markdown.GITHUB_COMMENT_LIMIT:,})")
    start = time.perf_counter()
    text = diff_text.render(report)
    print(f"text render:                                   {time.perf_counter() - start:.3f} s; "
          f"{len(text):,} characters")


if __name__ == "__main__":
    main()
