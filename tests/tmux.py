"""A command run in a real terminal of a chosen width: a detached tmux session on a server of its own.

For the tests (and ``benchmarks/readability_bench.py``) that check what a person sees: the whole output,
as the terminal holds it, with the lines the terminal itself wrapped joined back (``capture-pane -J``), so a
line wider than the terminal shows as one long line instead of being hidden by the wrap.
"""

from __future__ import annotations

import itertools
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

TMUX = shutil.which("tmux")

#: Skips on a developer machine without tmux; CI installs it, so there it fails instead.
needs_tmux = pytest.mark.skipif(TMUX is None and not os.environ.get("CI"),
                                reason="tmux not installed (make system-deps installs it)")

_SESSIONS = itertools.count()


def run(command: Sequence[str], width: int, *, env: Mapping[str, str] | None = None, cwd: Path | None = None,
        height: int = 50, timeout: float = 300.0) -> tuple[int, str]:
    """``command``'s exit code and its output as a ``width``-column terminal shows it (stdout and stderr).
    ``COLUMNS`` and ``LINES`` are unset in the terminal, so the program reads the terminal's own size."""
    assert TMUX, "CI must have tmux (make system-deps installs it)"
    with tempfile.TemporaryDirectory(prefix="tmux-run-") as name:
        folder = Path(name)
        config = folder / "tmux.conf"
        config.write_text("set -g history-limit 200000\nset -g remain-on-exit off\n", encoding="utf-8")
        status = folder / "status"
        socket = f"batch-quota-{os.getpid()}-{next(_SESSIONS)}"
        exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in (env or {}).items())
        line = (f"cd {shlex.quote(str(cwd or Path.cwd()))} && env -u COLUMNS -u LINES {exports} "
                f"{shlex.join(command)}; echo $? > {shlex.quote(str(status))}; sleep {int(timeout) + 60}")
        tmux = [TMUX, "-L", socket, "-f", str(config)]
        subprocess.run([*tmux, "new-session", "-d", "-s", "run", "-x", str(width), "-y", str(height), line],
                       check=True)
        try:
            deadline = time.monotonic() + timeout
            while not status.exists() or not status.read_text(encoding="utf-8").strip():
                if time.monotonic() > deadline:
                    raise AssertionError(f"{shlex.join(command)} did not finish in {timeout:.0f} s")
                time.sleep(0.1)
            screen = subprocess.run([*tmux, "capture-pane", "-p", "-J", "-S", "-", "-E", "-", "-t", "run"],
                                    capture_output=True, text=True, check=True).stdout
            return int(status.read_text(encoding="utf-8")), screen
        finally:
            subprocess.run([*tmux, "kill-server"], capture_output=True, check=False)


def longest_line(screen: str) -> int:
    """The longest line of a captured screen, trailing blanks not counted (tmux pads nothing, rich may)."""
    return max((len(line.rstrip()) for line in screen.splitlines()), default=0)
