"""The event queue's entries: one typed tuple per future event, ordered by time, phase and workload order.

An entry is a ``NamedTuple`` so that the heap compares plain tuples (one heap operation per
event, no ``__lt__`` in Python) while every field has a name and a type.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any, NamedTuple


class Phase(IntEnum):
    """Order of the events of one instant (submissions come between ``UPDATE`` and ``LIMIT``)."""

    FINISH = 0  # completions, failures and wake-ups of waiting heads
    ADVANCE = 1  # SCHEDULED -> STARTING -> RUNNING after a delay
    UPDATE = 2  # priority and topology updates, terminations
    SUBMIT = 3  # submissions (not heap events: the arrivals list)
    LIMIT = 4  # jobStateTimeLimitActions, after the scheduling pass


class Kind(IntEnum):
    """What an event does; the engine dispatches on it through a table, not a chain of ``if``."""

    FINISH = 0  # subject: the job; data: (version, failed)
    ADVANCE = 1  # subject: the job; data: its version
    PRIORITY = 2  # subject: a PriorityUpdate
    TOPOLOGY = 3  # subject: a ShareUpdate or EnvironmentUpdate
    LIMIT = 4  # subject: the ShareCapacity; data: its head when the timer started
    WAKE = 5  # subject: the pool index
    TERMINATE = 6  # subject: a JobTermination
    PLAN = 7  # training plans (``simulation.plan_windows``): subject and data are the plan gate's


class Event(NamedTuple):
    """A heap entry; ``seq`` (push order) is unique, so comparisons never reach ``kind`` or ``subject``."""

    time: float
    phase: int
    order: int  # workload order of the job (0 when none)
    seq: int
    kind: Kind
    subject: Any
    data: Any


#: ``Event`` from one tuple without the keyword constructor: the hot path builds one per job attempt.
make_event = tuple.__new__
