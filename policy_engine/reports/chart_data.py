"""What the simulation charts show, as plain data: lanes of a timeline, stacks of a utilisation chart.

Kept apart from drawing so tests can check *what* a chart says (which job ran where, on own or
borrowed capacity, when it was preempted) without reading pixels. Everything is derived from
a ``SimulationResult``: per-attempt segments for timelines, the engine's utilisation samples
(``SimulationSettings(utilisation_series=True)``) for the stacked areas.
"""

from __future__ import annotations

from dataclasses import dataclass

from policy_engine.model import Topology, share_id

PREEMPTED = "preempted"


@dataclass(frozen=True)
class Segment:
    """One stay of a job on capacity; ``borrowed`` when placed above the share's own limit."""

    start: float
    end: float
    borrowed: bool
    outcome: str  # succeeded | failed | preempted | terminated | running


@dataclass(frozen=True)
class Lane:
    """One job's row in its share's timeline."""

    job: str
    instance_type: str
    instances: int
    priority: int
    status: str
    submitted_at: float
    segments: tuple[Segment, ...]

    @property
    def preempted_at(self) -> tuple[float, ...]:
        """Preemption marks: the end of every preempted segment."""
        return tuple(s.end for s in self.segments if s.outcome == PREEMPTED)


def timelines(result) -> dict[str, list[Lane]]:
    """``share -> lanes`` (one per submitted job, workload order); a running attempt ends at the report time."""
    lanes: dict[str, list[Lane]] = {}
    for record in result.jobs:
        segments = tuple(
            Segment(a.start, result.time if a.end is None else a.end, a.borrowed, a.outcome) for a in record.attempts
        )
        lanes.setdefault(record.share, []).append(Lane(record.name, record.instance_type, record.instances,
                                                       record.priority, record.status, record.submitted_at, segments))
    return lanes


@dataclass(frozen=True)
class UtilisationSeries:
    """Step functions (value holds from ``times[i]`` to ``times[i + 1]``) of one share and instance type.

    ``own + lent + idle`` is the share's limit at every step; ``borrowed`` sits on top of it.
    """

    share: str
    instance_type: str
    limit: int
    times: tuple[float, ...]
    own: tuple[float, ...]
    borrowed: tuple[float, ...]
    lent: tuple[float, ...]
    idle: tuple[float, ...]

    def at(self, time: float) -> dict[str, float]:
        """The stack in force at ``time`` (the last step starting at or before it)."""
        index = max(i for i, t in enumerate(self.times) if t <= time)
        return {"own": self.own[index], "borrowed": self.borrowed[index], "lent": self.lent[index],
                "idle": self.idle[index]}


def utilisation(result, topology: Topology) -> dict[tuple[str, str], UtilisationSeries]:
    """``(share, instance type) -> series`` in topology order, from time 0 (all idle) to the report time."""
    if result.utilisation is None:
        raise ValueError("the simulation was run without SimulationSettings(utilisation_series=True)")
    steps: dict[tuple[str, str], dict[float, tuple[float, float, float, float]]] = {}
    limits: dict[tuple[str, str], int] = {}
    for queue, share in topology.shares():
        for instance_type, limit in share.capacity.items():
            key = (share_id(queue, share), instance_type)
            limits[key] = limit
            steps[key] = {0.0: (0, 0, 0.0, float(limit))}
    for time, share, instance_type, own, borrowed, lent, idle in result.utilisation:
        if (share, instance_type) in steps:
            steps[(share, instance_type)][time] = (own, borrowed, lent, idle)  # the last sample of an instant wins
    out = {}
    for key, by_time in steps.items():
        times = sorted(by_time)
        if times[-1] < result.time:
            by_time[result.time] = by_time[times[-1]]
            times.append(result.time)
        rows = [by_time[t] for t in times]
        out[key] = UtilisationSeries(key[0], key[1], limits[key], tuple(times),
                                     *(tuple(row[i] for row in rows) for i in range(4)))
    return out
