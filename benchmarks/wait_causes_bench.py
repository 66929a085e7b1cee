"""What "why jobs waited" costs: the floor and ``batch-quota simulate`` with and without the causes, side by side.

Per workload size (the ``heavy`` workload of ``workloads.py`` by default), each in a fresh process, ``--repeats``
times (the machine may be shared: every figure is printed with its CPU time, and the load average with each row):

- the floor (``floor_bench.floor``: csv plus one heap push and pop per event, no scheduling);
- ``batch-quota simulate S --quiet`` as a user types it, text summary and ``--format json``, with the causes (the
  default) and with ``--no-wait-causes``: wall, CPU (user + system) and peak RSS of that process alone (``wait4``);
- in process, the run without and with the usage log (what the log costs the run), then the attribution alone
  (``wait_causes.attribute``), their CPU times.

Targets at 1,000,000 jobs: the causes add at most 2 s and 150 MB to ``simulate`` (text, with against without);
``simulate --format json`` with the causes at most 4.5x the floor and under 1.0 GB (stretch: 3.5x and 800 MB);
the attribution at most 1.5 s CPU. Each row prints the fastest run by CPU (its peak beside it) and the spread.

    python benchmarks/wait_causes_bench.py                              # heavy, 1,000,000 jobs, 2 repeats
    python benchmarks/wait_causes_bench.py --sizes 100000 --repeats 1   # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads

from policy_engine.adapters.aws.topology_file import topology_text

HERE = Path(__file__).resolve().parent
#: The causes' cost at 1,000,000 jobs (text summary, with against ``--no-wait-causes``): seconds and MB.
ADDED_SECONDS, ADDED_MB = 2.0, 150.0
#: ``simulate --format json`` with the causes against the floor, and its peak (MB); then the stretch targets.
JSON_RATIO, JSON_MB = 4.5, 1000.0
STRETCH_RATIO, STRETCH_MB = 3.5, 800.0
#: The attribution alone, CPU seconds at 1,000,000 jobs.
ATTRIBUTION_CPU = 1.5
FULL = 1_000_000

#: The CLI runs: label, extra arguments.
RUNS = (("text, causes", []), ("text, --no-wait-causes", ["--no-wait-causes"]),
        ("json, causes", ["--format", "json"]), ("json, --no-wait-causes", ["--no-wait-causes", "--format", "json"]))


def _load() -> str:
    return f"load average {os.getloadavg()[0]:.2f}"


def timed(args: list[str]) -> dict:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MB) of one command, that process's own (``wait4``)."""
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            errors.seek(0)
            raise SystemExit(f"{' '.join(args)} failed: {errors.read().decode(errors='replace')}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024}


def attribution(path: Path) -> dict:
    """In this process: a run with the usage log, then ``attribute`` on its result (its CPU time alone)."""
    from policy_engine.simulation.core.engine import Engine
    from policy_engine.simulation.gcpause import gc_paused
    from policy_engine.simulation.results.records import build_result
    from policy_engine.simulation.results.wait_causes import attribute
    from policy_engine.simulation.scenarios.workload import load_jobs
    from policy_engine.simulation.settings import SimulationSettings

    topology = workloads.topology(path.stem.split("-")[0])  # files are named SHAPE-JOBS.csv
    with gc_paused():  # as ``batch-quota simulate`` runs it
        specs = load_jobs(path, topology)
        runs = {}
        for usage_log in (False, True):  # the run alone, then with the usage log the attribution reads
            engine = Engine(topology, specs, settings=SimulationSettings(usage_log=usage_log))
            begun_cpu = time.process_time()
            engine.run()
            runs[usage_log] = time.process_time() - begun_cpu
            result = build_result(engine)
            del engine
        begun, begun_cpu = time.perf_counter(), time.process_time()
        waits = attribute(result, topology)
        return {"wall_s": time.perf_counter() - begun, "cpu_s": time.process_time() - begun_cpu,
                "wait_hours": sum(s.wait_seconds for s in waits.shares) / 3600,
                "usage_changes": len(result.usage or ()), "run_cpu_s": runs[False], "logged_run_cpu_s": runs[True]}


def _best(rows: list[dict]) -> dict:
    """The fastest run by CPU, with the spread of CPU and wall over all runs."""
    best = dict(min(rows, key=lambda row: row["cpu_s"]))
    best["cpu_spread"] = (min(r["cpu_s"] for r in rows), max(r["cpu_s"] for r in rows))
    best["wall_spread"] = (min(r["wall_s"] for r in rows), max(r["wall_s"] for r in rows))
    best["peak_spread"] = (min(r["peak_mb"] for r in rows), max(r["peak_mb"] for r in rows)) if "peak_mb" in best \
        else None
    return best


def _row(label: str, figures: dict) -> str:
    low, high = figures["cpu_spread"]
    wall_low, wall_high = figures["wall_spread"]
    peak = figures.get("peak_mb")
    return (f"  {label:<32} wall {figures['wall_s']:6.2f} s ({wall_low:.2f}-{wall_high:.2f})  "
            f"cpu {figures['cpu_s']:6.2f} s ({low:.2f}-{high:.2f})" + (f"  peak {peak:6.0f} MB" if peak is not None
                                                                       else ""))


def verdict(value: float, target: float) -> str:
    return f"{'meets' if value <= target else 'MISSES'} <= {target:g}"


def measure(size: int, workdir: Path, repeats: int, shape: str) -> None:
    csv = workloads.workload_csv(shape, size, workdir)
    topology = workdir / f"{shape}-topology.yaml"
    if not topology.exists():
        topology.write_text(topology_text(workloads.topology(shape), topology))
    scenario = workdir / f"{shape}-{size}.yaml"
    scenario.write_text(f"topology: {topology.name}\njobs: {csv.name}\n")
    command = [sys.executable, "-c", "from policy_engine.cli import main; main()", "simulate", str(scenario), "--quiet"]
    floor = [sys.executable, str(HERE / "floor_bench.py"), "--step", "floor", "--path", str(csv)]
    alone = [sys.executable, __file__, "--attribution", str(csv)]
    print(f"{shape} workload, {size:,} jobs ({_load()}):", flush=True)
    rows: dict[str, list[dict]] = {"floor": [], "attribution": [], **{label: [] for label, _ in RUNS}}
    for _ in range(repeats):  # interleaved, so that a burst of load on the machine spreads over every kind of run
        out = subprocess.run(floor, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        rows["floor"].append(json.loads(out))
        for label, extra in RUNS:
            rows[label].append(timed(command + extra))
        out = subprocess.run(alone, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        rows["attribution"].append(json.loads(out))
    best = {label: _best(runs) for label, runs in rows.items()}
    base = best["floor"]
    print(_row("floor (csv + heapq)", base), flush=True)
    for label, _ in RUNS:
        figures = best[label]
        print(_row(f"simulate {label}", figures) + f"  {figures['wall_s'] / base['wall_s']:.2f}x wall, "
              f"{figures['cpu_s'] / base['cpu_s']:.2f}x cpu of the floor", flush=True)
    alone_best = best["attribution"]
    print(_row("attribution alone", alone_best) + f"  ({alone_best['usage_changes']:,} usage changes, "
          f"{alone_best['wait_hours']:,.0f} wait-hours); the usage log adds "
          f"{alone_best['logged_run_cpu_s'] - alone_best['run_cpu_s']:+.2f} s cpu to the run "
          f"({alone_best['run_cpu_s']:.2f} s without)", flush=True)
    text, plain = best["text, causes"], best["text, --no-wait-causes"]
    added_wall, added_cpu = text["wall_s"] - plain["wall_s"], text["cpu_s"] - plain["cpu_s"]
    added_mb = text["peak_mb"] - plain["peak_mb"]
    json_run = best["json, causes"]
    ratio_wall, ratio_cpu = json_run["wall_s"] / base["wall_s"], json_run["cpu_s"] / base["cpu_s"]
    scope = "" if size == FULL else f" (targets are for {FULL:,} jobs)"
    print(f"  the causes add {added_wall:+.2f} s wall, {added_cpu:+.2f} s cpu ({verdict(added_cpu, ADDED_SECONDS)} s), "
          f"{added_mb:+.0f} MB ({verdict(added_mb, ADDED_MB)} MB){scope}", flush=True)
    print(f"  json with causes: {ratio_wall:.2f}x wall, {ratio_cpu:.2f}x cpu of the floor "
          f"({verdict(ratio_cpu, JSON_RATIO)}x cpu, {verdict(ratio_wall, JSON_RATIO)}x wall; "
          f"stretch {verdict(ratio_cpu, STRETCH_RATIO)}x cpu), peak "
          f"{json_run['peak_mb']:.0f} MB ({verdict(json_run['peak_mb'], JSON_MB)} MB; stretch "
          f"{verdict(json_run['peak_mb'], STRETCH_MB)} MB){scope}", flush=True)
    print(f"  attribution {alone_best['cpu_s']:.2f} s cpu ({verdict(alone_best['cpu_s'], ATTRIBUTION_CPU)} s){scope}; "
          f"{_load()}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="heavy", choices=sorted(workloads.SHAPES))
    parser.add_argument("--sizes", type=int, nargs="*", default=[FULL])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--attribution", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.attribution:
        print(json.dumps(attribution(Path(args.attribution))))
        return
    build = "pure Python" if os.environ.get("BATCH_QUOTA_PURE_PYTHON") else "compiled (if built)"
    print(f"topology: {workloads.QUEUES} queues x {workloads.SHARES} shares, {workloads.TYPES} instance types; "
          f"simulator {build}; {os.cpu_count()} cores; {_load()}", flush=True)
    with tempfile.TemporaryDirectory() as workdir:
        for size in args.sizes:
            measure(size, Path(workdir), args.repeats, args.shape)
    print(f"{_load()} at the end")


if __name__ == "__main__":
    main()
