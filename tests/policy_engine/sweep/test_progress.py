"""The sweep's progress bar shows runs done of all, runs per second and the time left."""

from __future__ import annotations

import io
import time

from rich.console import Console

from policy_engine.sweep.progress import progress_bar


def test_bar_shows_done_total_rate_and_eta():
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120, color_system=None)
    with progress_bar("sweep", True, console) as update:
        for done in range(0, 5):
            update(done, 40)
            time.sleep(0.05)
    text = out.getvalue()
    assert "sweep" in text and "4/40" in text
    assert "runs/s" in text and "- runs/s" not in text.rsplit("4/40", 1)[1]  # a rate once there are samples
    assert "ETA" in text and "0:00:0" in text


def test_disabled_bar_prints_nothing():
    out = io.StringIO()
    with progress_bar("sweep", False, Console(file=out, force_terminal=True)) as update:
        update(1, 2)
    assert out.getvalue() == ""
