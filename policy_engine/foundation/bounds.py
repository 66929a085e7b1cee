"""Bounds on every number an input can carry (not AWS's limits: those are in ``limits.py``).

AWS documents no largest duration, price or grid; these are the project's own choices, made so
that every figure a command derives from its inputs stays a valid date and a finite number.
Every reader (files, options, the endpoint) takes its bound from here and refuses a value past
it with one line; nothing is clamped. docs/bounds.md lists them and why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime

#: The latest instant any input may reach: Python's ``datetime``, ISO 8601 with four-digit years,
#: EventBridge and CloudTrail all stop at year 9999.
MAX_INSTANT = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)
#: ``MAX_INSTANT`` in seconds since 1970-01-01T00:00:00Z (253,402,300,799).
MAX_INSTANT_SECONDS = int(MAX_INSTANT.timestamp())
#: The longest duration or offset (a job's submit time, run time, ``until``, a window's end, the
#: endpoint's clock), in seconds: second 0 is at the earliest the epoch, so every instant a run
#: reaches is at most ``MAX_INSTANT``. A run that has a ``start:`` must also end by ``MAX_INSTANT``.
MAX_SECONDS = MAX_INSTANT_SECONDS
#: The largest relative weight or multiplier (a profile's sizes, priorities, cycles): their sums stay finite.
MAX_WEIGHT = 1e9
#: The most instances one job or one capacity may name: the API's Integer (signed 32-bit).
MAX_INSTANCES = 2**31 - 1
#: The highest price of one instance-hour in any currency: with ``MAX_INSTANCES`` instances for
#: ``MAX_SECONDS`` seconds, every sum of costs a report prints stays far below a float's range.
MAX_RATE = 1_000_000.0
#: The largest factor a duration or a count may be scaled by (``duration_scale``, ``workload.scale``).
MAX_SCALE = 1_000_000.0
#: The smallest positive scale factor: below it a workload's counts round to nothing.
MIN_SCALE = 1e-6
#: The most simulated seconds per real second the local endpoint may run at (``serve --speed``):
#: even at this speed the clock needs about three days to reach ``MAX_INSTANT``.
MAX_SPEED = 1_000_000.0
#: The most candidates a ``--vary`` grid may hold before it is refused (unless the user asks to
#: sample it): the grid is built in memory, one topology per candidate.
MAX_GRID = 100_000
#: The most values one ``--vary`` axis may list or a range may expand to.
MAX_AXIS_VALUES = 100_000
#: The most resampled workloads ``tune --workload-samples`` runs every candidate on.
MAX_WORKLOAD_SAMPLES = 1_000
#: ``--seed``'s largest value: every sample's seed (``seed + n``) stays a non-negative 64-bit integer. Negative
#: seeds are refused: Python's ``random.Random(-1)`` is ``Random(1)``, so samples would repeat unseen.
MAX_SEED = 2**63 - 1 - MAX_WORKLOAD_SAMPLES


@dataclass(frozen=True)
class Bound:
    """One bound on a number: ``minimum <= value <= maximum``, finite, with what it bounds."""

    minimum: float
    maximum: float
    what: str

    def problem(self, value: float) -> str | None:
        """Why ``value`` is refused, in words, or ``None`` when it is within the bound."""
        if isinstance(value, float) and not math.isfinite(value):
            return f"{self.what} must be a finite number, got {value!r}"
        if value < self.minimum or value > self.maximum:
            return f"{self.what} must be between {self.minimum:g} and {self.maximum:g}, got {value:g}"
        return None


SECONDS = Bound(0, MAX_SECONDS, "a duration or time in seconds")
INSTANCES = Bound(1, MAX_INSTANCES, "an instance count")
RATE = Bound(0, MAX_RATE, "a price per instance-hour")
SPEED = Bound(0, MAX_SPEED, "simulated seconds per real second")


def instant_problem(start: datetime | None, seconds: float) -> str | None:
    """Why second ``seconds`` of a run starting at ``start`` is past ``MAX_INSTANT``, or ``None``."""
    base = 0.0 if start is None else start.timestamp()
    if base + seconds > MAX_INSTANT_SECONDS:
        return (f"{seconds:g} seconds after {'the epoch' if start is None else start.isoformat()} is past "
                f"{MAX_INSTANT.isoformat()}, the latest instant accepted")
    return None


class PastTheLastInstant(ValueError):
    """A run reached an instant no date can name (a job finishing after ``MAX_INSTANT``): one line, exit 2."""

    def __init__(self, seconds: float, what: str) -> None:
        super().__init__(f"{what}: simulated second {seconds:,.0f} is past {MAX_INSTANT.isoformat()}, the latest "
                         "instant a date can carry (second 0 is 1970-01-01); stop the run earlier with --until")
        self.seconds = seconds
