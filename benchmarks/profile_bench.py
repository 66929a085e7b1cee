"""Workload-profile benchmark: ``generate --workload-profile`` and ``fit`` at up to 1,000,000 jobs.

An eight-team company on two instance types (``tests/policy_engine/simulation/profiles/conftest.py``) with a
profile mixing every law, cycles and bursts, scaled until the month holds the number of jobs asked
for. Each step runs as the command a user types, in a fresh process, so the figures include start-up,
reading and writing; peak memory is the process's max RSS. Targets: generate 1,000,000 jobs under
5 s, fit a 1,000,000-job history under 15 s and 1 GB. CPU time is printed beside wall time, with the
load average, because a shared machine inflates wall time.

    python benchmarks/profile_bench.py                 # 100k and 1M
    python benchmarks/profile_bench.py --sizes 20000   # a quick look
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.policy_engine.simulation.profiles.conftest import COMPANY  # noqa: E402
from tests.policy_engine.simulation.profiles.test_fitting import SOURCE  # noqa: E402

GENERATE_TARGET, FIT_TARGET, FIT_MEMORY = 5.0, 15.0, 1024.0
DAYS = 30
#: Jobs a day of ``SOURCE`` at scale 1 (120 + 40 + 60 + 50 + 0.5).
BASE_PER_DAY = 270.5


def timed(args: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of one command in a fresh process.

    The figures are that process's own (``wait4``): ``RUSAGE_CHILDREN`` would report the largest RSS of
    every child so far, so fit would be charged generate's peak.
    """
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        child = subprocess.Popen(args, stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            output.seek(0)
            raise SystemExit(f"{' '.join(args)} failed: {output.read().decode(errors='replace')}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    sizes = parser.parse_args().sizes
    command = [sys.executable, "-c", "from policy_engine.cli.app import main; main()"]
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "company.yaml").write_text(COMPANY, encoding="utf-8")
        print(f"{'jobs':>10} {'step':<9} {'wall s':>8} {'cpu s':>8} {'peak MB':>8} {'target':>10}  load")
        for size in sizes:
            scale = size / (BASE_PER_DAY * DAYS)
            profile = SOURCE.replace("shares:\n", "shares:\n", 1)
            text = profile
            for rate in ("120", "40", "60", "50"):
                text = text.replace(f"jobs_per_day: {rate}\n", f"jobs_per_day: {float(rate) * scale:.3f}\n", 1)
            (folder / "source.yaml").write_text(text, encoding="utf-8")
            jobs = folder / f"jobs-{size}.csv"
            wall, cpu, peak = timed([*command, "generate", str(folder / "company.yaml"), "--workload-profile",
                                     str(folder / "source.yaml"), "--days", str(DAYS), "-o", str(jobs)])
            rows = sum(1 for _ in jobs.open(encoding="utf-8")) - 1
            ok = "ok" if size < 1_000_000 or wall <= GENERATE_TARGET else "MISSED"
            print(f"{rows:>10,} {'generate':<9} {wall:>8.2f} {cpu:>8.2f} {peak:>8.0f} "
                  f"{'<' + str(GENERATE_TARGET) + ' s ' + ok:>10}  {os.getloadavg()[0]:.1f}")
            wall, cpu, peak = timed([*command, "fit", str(jobs), "--topology", str(folder / "company.yaml"),
                                     "-o", str(folder / "fitted.yaml")])
            ok = "ok" if size < 1_000_000 or (wall <= FIT_TARGET and peak <= FIT_MEMORY) else "MISSED"
            print(f"{rows:>10,} {'fit':<9} {wall:>8.2f} {cpu:>8.2f} {peak:>8.0f} "
                  f"{'<' + str(FIT_TARGET) + ' s ' + ok:>10}  {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
