"""What printing ``simulate``'s text tables to a file costs: rich's layout and ``plain_tables``' side by side.

The tables of the text report (``batch-quota simulate S --quiet`` written to a file or a pipe) for the ``heavy``
workload of ``workloads.py`` (100 shares x 4 instance types): the shares, the instance types and "why jobs waited"
(whose size follows the shares that waited, not the job count). Each table is built once from the run and printed
``--repeats`` times through the console the report prints with (``terminal.for_stream``, 200 columns, every
table at its full width), once with rich laying it out (``plain_tables`` off) and once through
``reports.kit.plain_tables``; the fastest run of each by CPU (user + system of this process) with its wall time,
the load average beside them, and whether both printed the same bytes (they must).

Target: "why jobs waited" printed with at least 3x less CPU than rich's layout (issue 38: the causes add at most
2 s to a million-job ``simulate``).

    python benchmarks/table_render_bench.py                              # heavy, 100,000 jobs
    python benchmarks/table_render_bench.py --sizes 1000000 --repeats 3  # the million-job report's tables
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads

#: "why jobs waited" laid out here against rich: at least this many times less CPU.
TARGET_RATIO = 3.0


def _load() -> str:
    return f"load average {os.getloadavg()[0]:.2f}"


def tables(size: int, shape: str, workdir: Path) -> dict[str, object]:
    """The text report's tables for a run of ``size`` jobs, as ``batch-quota simulate`` builds them."""
    from dataclasses import replace

    from policy_engine.reports.kit.subjects import SimulateOutput
    from policy_engine.reports.simulate.text import shares_table, types_table
    from policy_engine.reports.simulate.view import build
    from policy_engine.reports.tables import why_waited
    from policy_engine.simulation import simulate
    from policy_engine.simulation.gcpause import gc_paused
    from policy_engine.simulation.results.wait_causes import attribute
    from policy_engine.simulation.scenarios.workload import load_jobs
    from policy_engine.simulation.settings import SimulationSettings

    topology = workloads.topology(shape)
    with gc_paused():  # as ``batch-quota simulate`` runs it
        jobs = load_jobs(workloads.workload_csv(shape, size, workdir), topology)
        result = simulate(topology, jobs, (), replace(SimulationSettings(), usage_log=True))
    waits = attribute(result, topology)
    view = build(SimulateOutput(result, f"{shape}-{size}.yaml", waits=waits, topology=topology))
    out: dict[str, object] = {"shares": shares_table(view.run), "instance types": types_table(view.run)}
    causes = why_waited.rich_table(waits)
    if causes is not None:
        out["why jobs waited"] = causes
    return out


def printed(table: object, plain: bool) -> Callable[[], str]:
    """Printing ``table`` to a file as the text report does, through ``plain_tables`` or through rich."""
    from policy_engine.reports.kit import terminal

    def run() -> str:
        stream = io.StringIO()
        console = terminal.for_stream(stream, file_width=200)  # as ``reports/simulate/text.py`` writes
        console.plain_tables = plain  # type: ignore[attr-defined]
        console.print(table)
        return stream.getvalue()

    return run


def best(run: Callable[[], str], repeats: int) -> tuple[float, float, float, str]:
    """The fastest of ``repeats`` runs by CPU: (cpu, wall, slowest cpu, output)."""
    cpus, walls, output = [], [], ""
    for _ in range(repeats):
        began, began_cpu = time.perf_counter(), time.process_time()
        output = run()
        cpus.append(time.process_time() - began_cpu)
        walls.append(time.perf_counter() - began)
    fastest = cpus.index(min(cpus))
    return cpus[fastest], walls[fastest], max(cpus), output


def measure(size: int, shape: str, repeats: int, workdir: Path) -> None:
    began = time.process_time()
    built = tables(size, shape, workdir)
    print(f"{shape} workload, {size:,} jobs: run, attribution and tables built in {time.process_time() - began:.1f} s "
          f"cpu ({_load()})", flush=True)
    verdicts = []
    for name, table in built.items():
        rich_cpu, rich_wall, rich_worst, by_rich = best(printed(table, plain=False), repeats)
        ours_cpu, ours_wall, ours_worst, ours = best(printed(table, plain=True), repeats)
        same = "identical" if ours == by_rich else "DIFFERENT"
        ratio = rich_cpu / ours_cpu if ours_cpu else float("inf")
        print(f"  {name:<16} {by_rich.count(chr(10)):>5} lines  rich cpu {rich_cpu * 1000:7.1f} ms "
              f"(wall {rich_wall * 1000:7.1f}, worst cpu {rich_worst * 1000:7.1f})  plain_tables cpu "
              f"{ours_cpu * 1000:6.1f} ms (wall {ours_wall * 1000:6.1f}, worst cpu {ours_worst * 1000:6.1f})  "
              f"{ratio:5.1f}x less cpu  {same}  {_load()}", flush=True)
        if name == "why jobs waited":
            verdicts.append(f"why jobs waited: {ratio:.1f}x less cpu "
                            f"({'meets' if ratio >= TARGET_RATIO else 'MISSES'} >= {TARGET_RATIO:g}x)")
        if ours != by_rich:
            verdicts.append(f"{name}: plain_tables printed different bytes from rich")
    print("  " + "; ".join(verdicts or ["no job waited: no causes table"]), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="heavy", choices=sorted(workloads.SHAPES))
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"topology: {workloads.QUEUES} queues x {workloads.SHARES} shares, {workloads.TYPES} instance types; "
          f"{os.cpu_count()} cores; {_load()}", flush=True)
    with tempfile.TemporaryDirectory() as workdir:
        for size in args.sizes:
            measure(size, args.shape, args.repeats, Path(workdir))
    print(f"{_load()} at the end")


if __name__ == "__main__":
    main()
