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
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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


def longest(text: str) -> int:
    return max((len(line.rstrip()) for line in text.splitlines()), default=0)


def in_pipe(args: list[str]) -> str:
    return subprocess.run([CLI, *args], capture_output=True, text=True, check=False).stdout


def in_tmux(args: list[str], width: int, folder: Path) -> str:
    """The command's output as a terminal of ``width`` columns shows it (tmux's pane, joined lines unwrapped)."""
    socket = str(folder / "tmux.sock")
    done = folder / "done"
    done.unlink(missing_ok=True)
    line = f"{shlex.join([CLI, *args])}; touch {shlex.quote(str(done))}"
    subprocess.run(["tmux", "-S", socket, "new-session", "-d", "-x", str(width), "-y", "50", "-e", "NO_COLOR=1",
                    "bash", "--norc", "--noprofile"], check=True)
    try:
        subprocess.run(["tmux", "-S", socket, "set-option", "-g", "history-limit", "100000"], check=True)
        subprocess.run(["tmux", "-S", socket, "send-keys", "clear; " + line, "Enter"], check=True)
        deadline = time.monotonic() + 600
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        return subprocess.run(["tmux", "-S", socket, "capture-pane", "-p", "-J", "-S", "-", "-E", "-"],
                              capture_output=True, text=True, check=True).stdout
    finally:
        subprocess.run(["tmux", "-S", socket, "kill-server"], check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--widths", default="80,120,200")
    parser.add_argument("--commands", default="")
    options = parser.parse_args()
    widths = [int(w) for w in options.widths.split(",")]
    if shutil.which("tmux") is None:
        sys.exit("tmux is not installed (make system-deps installs it)")
    os.environ.pop("COLUMNS", None)
    with tempfile.TemporaryDirectory(prefix="readability-") as name:
        folder = Path(name)
        chosen = commands(folder)
        if options.commands:
            chosen = {k: v for k, v in chosen.items() if k in options.commands.split(",")}
        print(f"{'command':<10} {'pipe':>6} " + " ".join(f"{f'tmux {w}':>16}" for w in widths))
        for name_, args in chosen.items():
            cells = []
            for width in widths:
                text = in_tmux(args, width, folder)
                cells.append(f"{longest(text):>6}{' (over!)' if longest(text) > width else '        '}")
            print(f"{name_:<10} {longest(in_pipe(args)):>6} " + " ".join(f"{c:>16}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
