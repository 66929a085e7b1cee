"""What ``simulate --report`` adds to a run, how large the page is, and how fast Chromium draws it.

Per workload size, in a fresh process each: the simulation alone (load, run, results), then the
same as ``simulate --report`` does it: the usage log, the costs (in instance-hours, or priced with
``--prices``: a rate per instance type, lending flows, chargeback), "why jobs waited" (``wait_causes``),
the topology's targets judged (one ``wait_p95`` and one ``min_utilisation`` per share), and
``write_report`` (aggregates, summary PNGs, the page). Prints the time the report adds, each part's
time, the page's size and, when Debian's ``chromium`` and ``chromedriver`` are installed
(``make system-deps``), the milliseconds from opening the page until it marks every chart drawn
(``data-rendered-ms``). Targets: at most 2 s added at 20,000 jobs and 15 s at 1,000,000; a page under
10 MB whose charts have rendered within 2 s of opening.

    python benchmarks/report_bench.py                    # heavy workload, 20k and 1M jobs
    python benchmarks/report_bench.py --sizes 20000      # a quick look
    python benchmarks/report_bench.py --sizes 1000000 --prices   # priced
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads

from policy_engine.foundation.model import Topology
from policy_engine.simulation import compiled
from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.core.jobs import JobSpec
from policy_engine.simulation.gcpause import gc_paused
from policy_engine.simulation.results.records import SimulationResult, build_result
from policy_engine.simulation.scenarios.workload import load_jobs
from policy_engine.simulation.settings import SimulationSettings


def _simulate(topology: Topology, specs: list[JobSpec], usage_log: bool) -> SimulationResult:
    """As ``simulate`` does: only the result outlives the engine (the report is written without it in memory)."""
    engine = Engine(topology, specs, settings=SimulationSettings(usage_log=usage_log))
    engine.run()
    return build_result(engine)


def _costs(result: SimulationResult, topology: Topology, prices: bool):  # -> CostReport
    """The run's costs as ``simulate --report`` builds them: in instance-hours, or priced at one made-up rate per
    instance type (``--prices``)."""
    from policy_engine.inputs.prices import Prices, used_types
    from policy_engine.simulation.results.costs import run_costs

    rates = Prices("USD", {t: 1.0 + n for n, t in enumerate(sorted(used_types(topology)))}) if prices else None
    return run_costs(result, topology, rates)


def _with_targets(topology: Topology) -> Topology:
    """The benchmark topology with targets to judge: a wait p95 and a utilisation floor per share."""
    from policy_engine.foundation.model import Target

    targets = tuple(target for queue in topology.job_queues for share in queue.shares
                    for target in (Target(share=f"{queue.name}/{share.name}", wait_p95=3600.0),
                                   Target(share=f"{queue.name}/{share.name}", min_utilisation=0.5)))
    return topology.model_copy(update={"targets": targets})


def _timed(row: dict, name: str, work):  # -> what ``work()`` returns
    """``work()``, its wall and CPU seconds added to ``row`` as ``NAME_s`` and ``NAME_cpu_s``."""
    begun, begun_cpu = time.perf_counter(), time.process_time()
    value = work()
    row[f"{name}_s"], row[f"{name}_cpu_s"] = time.perf_counter() - begun, time.process_time() - begun_cpu
    return value


def one(path: Path, report: Path | None, prices: bool = False) -> dict:
    topology = _with_targets(workloads.topology(path.stem.split("-")[0]))  # files are named SHAPE-JOBS.csv
    started, cpu = time.perf_counter(), time.process_time()
    with gc_paused():  # as ``batch-quota simulate`` runs it all: one pause of the cyclic collector
        result = _simulate(topology, load_jobs(path, topology), report is not None)
        row = {"simulate_s": time.perf_counter() - started}
        if report is not None:
            from policy_engine.reports.page.html_report import (
                write_report,  # imported here: part of what --report costs
            )
            from policy_engine.simulation.results.targets import evaluate_targets
            from policy_engine.simulation.results.wait_causes import attribute

            costs = _timed(row, "costs", lambda: _costs(result, topology, prices))
            waits = _timed(row, "causes", lambda: attribute(result, topology))
            targets = _timed(row, "targets", lambda: tuple(evaluate_targets(topology, result)))
            row["targets_missed"] = sum(1 for target in targets if not target.met)
            _timed(row, "report", lambda: write_report(result, topology, report, costs=costs, waits=waits,
                                                       targets=targets))
    row["wall_s"] = time.perf_counter() - started
    row["cpu_s"] = time.process_time() - cpu
    row["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row


def measure(path: Path, report: Path | None, prices: bool = False) -> dict:
    command = [sys.executable, __file__, "--one", str(path)] + (["--report-dir", str(report)] if report else [])
    command += ["--prices"] if prices else []
    out = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def render_ms(page: Path, runs: int = 3) -> list[int] | None:
    """Milliseconds from navigation start until the page set ``data-rendered`` (each run a fresh load)."""
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver_path):
        return None
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 f"--user-data-dir={profile}", "--window-size=1400,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    times = []
    try:
        for _ in range(runs):
            driver.get(page.as_uri())
            deadline = time.monotonic() + 60
            state = "false"
            while time.monotonic() < deadline:
                state = driver.execute_script("return document.documentElement.dataset.rendered")
                if state != "false":
                    break
                time.sleep(0.02)
            if state != "true":
                raise RuntimeError(f"the page did not render: data-rendered={state}")
            times.append(int(driver.execute_script("return document.documentElement.dataset.renderedMs")))
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="heavy", choices=sorted(workloads.SHAPES))
    parser.add_argument("--sizes", type=int, nargs="*", default=[20_000, 1_000_000])
    parser.add_argument("--prices", action="store_true", help="Also price the run (cost and chargeback tables).")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--report-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(Path(args.one), Path(args.report_dir) if args.report_dir else None, args.prices)))
        return
    print(f"simulator core: {'compiled (mypyc)' if compiled.runs_compiled else 'from source'}", flush=True)
    print(f"{args.shape} workload on {workloads.QUEUES} queues x {workloads.SHARES} shares, {workloads.TYPES} "
          f"instance types; load average {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as workdir:
        for size in args.sizes:
            path = workloads.workload_csv(args.shape, size, Path(workdir))
            report = Path(workdir) / f"report-{size}"
            plain = measure(path, None)
            with_report = measure(path, report, args.prices)
            page = report / "index.html"
            added = with_report["wall_s"] - plain["wall_s"]
            added_cpu = with_report["cpu_s"] - plain["cpu_s"]
            pngs = sum(p.stat().st_size for p in report.glob("*.png")) / 1e3
            print(f"{size:>9,} jobs (load average {os.getloadavg()[0]:.2f}): simulate {plain['wall_s']:6.2f} s "
                  f"(cpu {plain['cpu_s']:6.2f} s, peak "
                  f"{plain['peak_mb']:5.0f} MB); with --report {with_report['wall_s']:6.2f} s (cpu "
                  f"{with_report['cpu_s']:6.2f} s, write_report {with_report['report_s']:5.2f} s "
                  f"(cpu {with_report['report_cpu_s']:5.2f} s), peak "
                  f"{with_report['peak_mb']:5.0f} MB): adds {added:5.2f} s wall, {added_cpu:5.2f} s cpu; "
                  f"page {page.stat().st_size / 1e6:.2f} MB, PNGs {pngs:.0f} KB", flush=True)
            budget = 15 if size >= 1_000_000 else 2
            print(f"{'':>15} of which: the run with the usage log {with_report['simulate_s']:5.2f} s, costs"
                  f"{' (priced)' if args.prices else ' (instance-hours)'} {with_report['costs_s']:5.2f} s, "
                  f"why jobs waited {with_report['causes_s']:5.2f} s, targets "
                  f"{with_report['targets_s']:5.2f} s ({with_report['targets_missed']} missed), page "
                  f"{with_report['report_s']:5.2f} s; {'meets' if added <= budget else 'misses'} <= {budget} s added",
                  flush=True)
            rendered = render_ms(page)
            if rendered is not None:
                print(f"{'':>15} Chromium: rendered after {', '.join(map(str, rendered))} ms "
                      f"(best {min(rendered)} ms)", flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
