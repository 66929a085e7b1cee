"""How wide the text reports are (issue 35 §6): each command's longest line in a pipe and in a real terminal.

    python benchmarks/readability_bench.py                      # the wide case, pipe and tmux at 80/120/200 columns
    python benchmarks/readability_bench.py --widths 100 --commands compare,diff

Each command runs on the wide case (``tests/data/wide``: nine teams over three instance types, a training plan)
once into a pipe and once per width inside a detached tmux session of that many columns; the script prints the
longest line of each, and whether any line is wider than the terminal (a table folded or cut by the terminal
instead of fitted). Figures only: no target is timed.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import tmux  # noqa: E402

WIDE = ROOT / "tests" / "data" / "wide"
CLI = str(Path(sys.executable).with_name("batch-quota"))


def commands(folder: Path) -> dict[str, list[str]]:
    """The command lines measured, on the wide case (``folder`` takes what a command writes)."""
    week, a, b = str(WIDE / "week.yaml"), str(WIDE / "a.yaml"), str(WIDE / "b.yaml")
    vary = ["--vary", "training/vision.capacity.ml.p4d.24xlarge=2,6", "--vary", "training/ads.strategy=RESERVE,LEND"]
    return {
        "simulate": ["simulate", week],
        "compare": ["compare", week, "--topology", a, "--topology", b, "--workers", "1"],
        "diff": ["diff", a, b, "--scenario", week, "--at", "0"],
        "sweep": ["sweep", week, *vary, "--workers", "1", "--out", str(folder / "sweep")],
        "tune": ["tune", week, *vary, "--workers", "1", "--minimize", "max(wait_p95)", "--budget", "4"],
        "explain": ["explain", "training/vision", "--scenario", week],
        "check": ["check", a],
    }


def in_pipe(args: list[str]) -> str:
    return subprocess.run([CLI, *args], capture_output=True, text=True, check=False).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--widths", default="80,120,200")
    parser.add_argument("--commands", default="")
    options = parser.parse_args()
    widths = [int(w) for w in options.widths.split(",")]
    if shutil.which("tmux") is None:
        sys.exit("tmux is not installed (make system-deps installs it)")
    chosen = [name for name in commands(Path()) if not options.commands or name in options.commands.split(",")]
    print(f"{'command':<10} {'pipe':>6} " + " ".join(f"{f'tmux {w}':>16}" for w in widths))
    for command in chosen:
        cells = []
        for width in widths:
            with tempfile.TemporaryDirectory(prefix="readability-") as name:  # a fresh --out folder each run
                _, screen = tmux.run([CLI, *commands(Path(name))[command]], width, env={"NO_COLOR": "1"}, cwd=ROOT)
            longest = tmux.longest_line(screen)
            cells.append(f"{longest:>6}{' (over!)' if longest > width else '        '}")
        with tempfile.TemporaryDirectory(prefix="readability-") as name:
            piped = tmux.longest_line(in_pipe(commands(Path(name))[command]))
        print(f"{command:<10} {piped:>6} " + " ".join(f"{c:>16}" for c in cells), flush=True)

if __name__ == "__main__":
    main()
