"""Several runs per Dask task, sized from the runs' measured duration.

A Dask task costs a few milliseconds of scheduler, comm and (de)serialisation work whatever it
computes: nothing next to a replay of minutes, most of the work for one of a millisecond. Tasks
therefore carry as many runs as fit in ``target_seconds`` (one until the first task has been
timed), and fewer towards the end so that no worker waits on a long last task of another.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


def run_batch(function: Callable[[Any, Any], Any], shared: Any, items: Sequence[Any]) -> tuple[list[Any], float]:
    """One Dask task: ``function(shared, item)`` for each item, and the seconds they took together."""
    started = time.perf_counter()
    results = [function(shared, item) for item in items]
    return results, time.perf_counter() - started


@dataclass
class BatchSizer:
    """How many runs the next task gets."""

    workers: int
    target_seconds: float = 0.5
    largest: int = 64
    seconds_per_item: float | None = None

    def observe(self, items: int, seconds: float) -> None:
        """Fold in a finished task (a moving average, so a few slow runs do not decide alone)."""
        if items < 1:
            return
        measured = seconds / items
        previous = self.seconds_per_item
        self.seconds_per_item = measured if previous is None else 0.5 * previous + 0.5 * measured

    def size(self, remaining: int | None) -> int:
        """Runs for the next task; ``remaining`` (when known) keeps at least two tasks per worker to the end."""
        if self.seconds_per_item is None:
            return 1
        size = int(self.target_seconds / max(self.seconds_per_item, 1e-6))
        if remaining is not None:
            size = min(size, math.ceil(remaining / (2 * self.workers)))
        return max(1, min(self.largest, size))
