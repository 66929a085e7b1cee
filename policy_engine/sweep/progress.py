"""The progress bar of a sweep or a tuning run: runs done, runs per second and time left (rich)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn, TimeRemainingColumn
from rich.text import Text


class RateColumn(ProgressColumn):
    """Runs per second over rich's recent window (blank until it has two samples)."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f} runs/s" if speed else "- runs/s", style="progress.data.speed")


@contextmanager
def progress_bar(label: str, enabled: bool, console: Console | None = None) -> Iterator[Callable[[int, int], None]]:
    """Yield ``update(done, total)``; a no-op unless ``enabled`` and stderr (or ``console``) is a terminal."""
    console = console or Console(stderr=True)
    if not enabled or not (console.is_terminal or sys.stderr.isatty()):
        yield lambda done, total: None
        return
    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), RateColumn(), TextColumn("ETA"),
                  TimeRemainingColumn(), console=console, transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update
