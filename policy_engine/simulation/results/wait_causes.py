"""Why jobs waited: every waiting second of a finished run charged to one cause, per share and per job.

Worked out after the run, from the usage log and the job records, never on the scheduler's hot path
(docs/simulator.md, "Why jobs waited"). A job waits from its submission to its first placement, and
again from every preempted or failed attempt to the next one (or to its end, or the report time). One
sweep over time replays the usage log through fresh pools (``core.capacity.build_pools``: the engine's
own counters, so "idle", "lendable" and "borrowed" mean what they mean to the scheduler), keeps every
line's waiting jobs in line order (priority, then submission), and asks of each head what
``reasons.waiting`` asks: within its limit (then the environment is full, or a reclaim is under way),
able to borrow (nothing lendable, or lendable capacity taken by earlier borrowers), or at its limit.
Every other waiting job of the line is behind its head. Beside that state, a job may be misconfigured,
requeued after a preemption, or waiting for the time-limit action that ended it; an ``AttributionOrder``
(``wait_orders``) picks the one cause each second is charged to.

Not followed (documented): an environment's capacity changed mid-run (the topology's is used), a
borrow ceiling changed by ``update_share`` (limits and strategies are followed), priorities changed while
a job waited (its final priority orders its line), and in-share preemption held up by protected victims
(a head at its limit counts as at its limit).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from policy_engine.foundation.json_data import JsonObject
from policy_engine.simulation.causes import WAIT_CAUSES, Cause
from policy_engine.simulation.core import placement, wait_sweep
from policy_engine.simulation.core.capacity import build_pools
from policy_engine.simulation.core.jobs import CAPACITY_INSUFFICIENT
from policy_engine.simulation.results.records import JobRecords, job_timelines
from policy_engine.simulation.results.wait_orders import DEFAULT_ORDER, ORDERS, AttributionOrder
from policy_engine.simulation.time_limits import queue_actions

if TYPE_CHECKING:
    from policy_engine.foundation.model import Topology
    from policy_engine.simulation.results.records import SimulationResult
    from policy_engine.simulation.usage import UsageLog

#: How close a head's stint must come to an action's ``maxTimeSeconds`` to be the one that action ended
#: (relative; the two are the same sum of floats taken in another order).
_TIMER_TOLERANCE = 1e-9


class CauseContext(NamedTuple):
    """What the pool looked like while a share's heads waited for one cause (time-weighted means)."""

    head_seconds: float  # seconds a head of the share waited for this cause
    needs: float  # instances the head needed
    lendable: float  # lendable idle instances not borrowed (``Pool.free_lendable``)
    lender_idle: float  # idle owned capacity of the lenders, borrowed or not
    environment_idle: float  # idle instances of the environment
    used: float  # instances the share used


class Blocker(NamedTuple):
    """The head that held most of a line's behind-head seconds, and what it waited for meanwhile."""

    name: str
    instances: int
    seconds: float  # waiting seconds of the jobs behind it, while it was the head
    cause: Cause  # what it waited for most of the time it blocked the line
    context: CauseContext  # the pool meanwhile (while it blocked for ``cause``)


def _context(sums: list[float]) -> CauseContext:
    """Time-weighted means from the sums the sweep keeps (``sums[0]`` is the time)."""
    span = sums[0]
    return CauseContext(span, *(value / span for value in sums[1:]))


@dataclass(frozen=True)
class ShareWaits:
    """One share's waiting seconds on one instance type, by cause (``sum(by_cause) == wait_seconds``)."""

    share: str
    instance_type: str
    strategy: str
    limit: int
    ceiling: int | None
    jobs_waited: int
    wait_seconds: float
    by_cause: dict[Cause, float]
    #: seconds of the jobs behind a head, by what that head waited for meanwhile
    behind_by_head_cause: dict[Cause, float] = field(default_factory=dict)
    blocker: Blocker | None = None
    #: per head cause, the pool's state while it held
    context: dict[Cause, CauseContext] = field(default_factory=dict)
    #: per cause, the jobs that had a waiting second charged to it
    jobs_by_cause: dict[Cause, int] = field(default_factory=dict)
    #: attempts of the share preempted (reclaim takes borrowed ones, in-share preemption own ones)
    preempted_borrowed: int = 0
    preempted_own: int = 0
    misconfigured_jobs: int = 0
    largest_misconfigured: int = 0
    time_limited_jobs: int = 0

    def to_json(self) -> JsonObject:
        """Seconds as numbers, causes by their enum values, every waiting cause present (0 when none)."""
        return {"share": self.share, "instance_type": self.instance_type, "jobs_waited": self.jobs_waited,
                "wait_seconds": self.wait_seconds,
                "by_cause": {cause.value: self.by_cause.get(cause, 0.0) for cause in WAIT_CAUSES},
                "jobs_by_cause": {cause.value: self.jobs_by_cause.get(cause, 0) for cause in WAIT_CAUSES}}


@dataclass(frozen=True)
class WaitCauses:
    """The attribution of a run: per share (topology order) and, per job record, the cause it waited longest for."""

    order: str
    shares: list[ShareWaits]
    #: in ``result.jobs`` order; ``None`` for a job that never waited
    job_causes: Sequence[Cause | None]

    def share(self, share: str, instance_type: str | None = None) -> list[ShareWaits]:
        return [s for s in self.shares if s.share == share and instance_type in (None, s.instance_type)]

    def to_json(self) -> JsonObject:
        return {"attribution": self.order, "shares": [s.to_json() for s in self.shares]}


#: the charged causes numbered as ``WAIT_CAUSES`` lists them, and the sweep's head causes among them
_NUMBER = {cause: number for number, cause in enumerate(WAIT_CAUSES)}
_HEAD_NUMBER = np.array([_NUMBER[cause] for cause in wait_sweep.HEAD_CAUSES], dtype=np.int8)
_BEHIND = _NUMBER[Cause.BEHIND_HEAD]


#: Pairs of a line and a size counted in a table rather than sorted, beyond four per waiting job.
_PAIR_TABLE = 1 << 20

#: Jobs read, and events handed to the sweep, a chunk at a time: what sits in Python lists at once.
_CHUNK = 16_384


class Stretches(NamedTuple):
    """The waiting stretches of a run as columns (``wait_sweep.Waiting``, one entry per stretch, a job's in order,
    jobs in record order), and per line the attempts preempted while borrowed (``2 * line``) and own ones."""

    job: np.ndarray
    line: np.ndarray
    start: np.ndarray
    end: np.ndarray
    requeued: np.ndarray
    needs: np.ndarray
    failed: np.ndarray
    #: its place in its line's order (priority as the run ended, then submission, then workload order; a job's own
    #: stretches by their start) among all stretches, so that the sweep's heaps compare integers; the sweep names
    #: stretches by rank, ``order`` maps a rank back to its stretch
    rank: np.ndarray
    order: np.ndarray
    preempted: list[int]


def read_stretches(result: SimulationResult, line_of: dict[tuple[str, str], int], lines: int) -> Stretches:
    """Every job's stretches, read a chunk of jobs at a time into numpy columns."""
    records = result.jobs
    # the engine's own jobs, every one finished: read from the jobs themselves, else from each job's timeline
    engine = records.engine_columns() if isinstance(records, JobRecords) and records.finished() else None
    timelines = iter(job_timelines(records)) if engine is None else iter(())
    preempted = [0] * (2 * lines)
    # the columns filled in place (grown, rarely, when preemptions make more stretches than jobs): chunks put together
    # at the end would hold every column twice at once
    columns = [np.empty(len(result.jobs), dtype=kind) for kind in _KINDS]
    first = count = 0
    while True:
        if engine is not None:
            chunk = wait_sweep.read_jobs(*engine, line_of, preempted, result.time, first, _CHUNK)
        else:
            chunk = wait_sweep.read_waits(timelines, line_of, preempted, result.time, first, _CHUNK)
        added = len(chunk.job)
        if count + added > len(columns[0]):
            columns = [np.resize(column, max(count + added, len(column) * 5 // 4)) for column in columns]
        for column, values in zip(columns, (chunk.job, chunk.line, chunk.start, chunk.end, chunk.requeued, chunk.needs,
                                            chunk.failed, chunk.priority, chunk.submitted), strict=True):
            column[count:count + added] = values
        count += added
        first += chunk.read
        if chunk.read < _CHUNK:
            break
    job, line, start, end, requeued, needs, failed, priority, submitted = (column[:count] for column in columns)
    del columns
    # the stretches are in workload order, a job's by their start: the sorts, stable, keep that order among equals.
    # By submission (nearly sorted already: a merge of runs), then by priority (a few distinct values: as 16-bit
    # integers a radix sort) rather than ``np.lexsort``: a third of its time at a million stretches
    order = np.argsort(submitted, kind="stable")
    del submitted
    highest_first = -priority[order]
    del priority
    if len(highest_first) and np.iinfo(np.int16).min <= highest_first.min() and highest_first.max() <= \
            np.iinfo(np.int16).max:
        highest_first = highest_first.astype(np.int16)
    order = order[np.argsort(highest_first, kind="stable")].astype(np.int32)
    del highest_first
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    return Stretches(job, line, start, end, requeued, needs, failed, rank, order, preempted)


#: The columns' types as read (``wait_sweep.Waiting``): job, line, start, end, requeued, needs, failed, and the
#: priority and submission the rank is worked out from (then let go). A million stretches take 40 MB.
_KINDS = (np.int32, np.int32, np.float64, np.float64, bool, np.int32, bool, np.int64, np.float64)


def _usage_changes(times: np.ndarray, who: np.ndarray, used: np.ndarray, logged_line: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The usage log in time order as the sweep reads it (times, line numbers, use), an instant's entries in log
    order. A log has one entry per share and instant (``UsageLog``); a second one (a log read mid-instant) is
    applied after the first, as the sweep applies an instant's changes before it reads any."""
    if len(times) and np.any(times[1:] < times[:-1]):  # logs of runs in parallel, merged: one after the other
        chronological = np.argsort(times, kind="stable")
        return times[chronological], logged_line[who[chronological]], used[chronological]
    return times, logged_line[who], used


#: Events a window (``wait_sweep.Window``) holds at most per stream: what sits in Python lists at once.
_WINDOW = _CHUNK


class Stream(NamedTuple):
    """One kind of event for ``_windows``: its times in time order, and its line numbers, values and (stretches
    starting) codes taken in the order ``take`` (``None``: theirs is time order), a window at a time, so that no
    column is copied whole in time order (a million stretches' columns are 20 MB each way)."""

    times: np.ndarray
    lines: np.ndarray
    values: np.ndarray
    codes: np.ndarray | None = None
    take: np.ndarray | None = None

    def part(self, begin: int, end: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Its events ``begin`` to ``end`` in time order: times, lines, values, codes (0 where it has none)."""
        at: slice | np.ndarray = slice(begin, end) if self.take is None else self.take[begin:end]
        codes = np.zeros(end - begin, dtype=np.int64) if self.codes is None else self.codes[at]
        return self.times[begin:end], self.lines[at], self.values[at], codes


def _windows(streams: list[Stream], size: int = _WINDOW) -> Iterator[wait_sweep.Window]:
    """The streams, in the order of ``wait_sweep.Window``'s kinds, merged in time order, a window at a time: cut
    between instants, about ``size`` events of each stream in each. Merged by a stable sort of the streams put one
    after the other (a merge of four sorted runs): at one time, the events of an earlier kind first, each kind's in
    its order."""
    cuts = np.unique(np.concatenate([stream.times[size::size] for stream in streams]))
    bounds = [np.concatenate(([0], np.searchsorted(stream.times, cuts, side="left"), [len(stream.times)]))
              for stream in streams]
    kinds = len(streams)
    for window in range(len(cuts) + 1):
        parts = [stream.part(int(bound[window]), int(bound[window + 1]))
                 for stream, bound in zip(streams, bounds, strict=True)]
        sizes = [len(part[0]) for part in parts]
        if not sum(sizes):
            continue
        times = np.concatenate([part[0] for part in parts])
        order = np.argsort(times, kind="stable")
        times = times[order]
        lines, values, codes = (np.concatenate([part[column] for part in parts])[order] for column in (1, 2, 3))
        kind = np.repeat(np.arange(kinds), sizes)[order]
        del order
        new = np.empty(len(times), dtype=bool)
        new[0] = True
        np.not_equal(times[1:], times[:-1], out=new[1:])
        firsts = np.flatnonzero(new)
        instant = np.cumsum(new.view(np.int8), dtype=np.int32)  # bytes: numpy sums bools 8x slower
        instant -= 1
        del new
        # per instant and kind, how many events: one bincount over (instant, kind) pairs
        counts = np.bincount(instant * kinds + kind, minlength=len(firsts) * kinds).reshape(len(firsts), kinds)
        usages, limit_changes, starts, ends = (counts[:, number].tolist() for number in range(kinds))
        yield wait_sweep.Window(times[firsts].tolist(), usages, limit_changes, starts, ends, lines.tolist(),
                                values.tolist(), codes.tolist())


def _sweep(sweep: wait_sweep.Sweep, waits: Stretches, bad: np.ndarray, log: UsageLog,
           line_of: dict[tuple[str, str], int]) -> None:
    """One sweep over time: usage changes, limit changes, stretches starting and ending, merged in time order."""
    logged_line = np.array([line_of[(s.share, s.instance_type)] for s in log.shares], dtype=np.int64)
    start, end, line, needs, failed, rank = waits.start, waits.end, waits.line, waits.needs, waits.failed, waits.rank
    usage = Stream(*_usage_changes(*log.columns(), logged_line))
    changes = sorted(((c.time, int(logged_line[c.number]), c.limit, c.lends) for c in log.limit_changes),
                     key=lambda change: change[0])
    limits = Stream(np.array([change[0] for change in changes], dtype=np.float64),
                    np.array([change[1] for change in changes], dtype=np.int64), np.arange(len(changes)))
    # a stretch's needs, misconfigured and watched (a time-limit action may have ended it) packed in one int
    # (``wait_sweep.stretch_code``): mostly small ints, which Python does not allocate
    code = (needs.astype(np.int64) << 2) | (bad.astype(np.int64) << 1) | failed
    by_start = np.argsort(start, kind="stable")
    starts = Stream(start[by_start], line, rank, code, by_start)
    by_end = np.argsort(end, kind="stable")
    ends = Stream(end[by_end], line, rank, None, by_end)
    sweep.expect(len(start))
    wait_sweep.run(sweep, _windows([usage, limits, starts, ends]), changes)


def attribute(result: SimulationResult, topology: Topology, order: AttributionOrder | str = DEFAULT_ORDER
              ) -> WaitCauses:
    """Charge every waiting second of ``result`` (run on ``topology`` with ``usage_log=True``) to one cause."""
    if result.usage is None:
        raise ValueError("the simulation was run without SimulationSettings(usage_log=True)")
    policy = ORDERS[order] if isinstance(order, str) else order
    pools = build_pools(topology)
    sweep = wait_sweep.Sweep(pools)
    line_of = {(line.share.share_id, line.share.instance_type): line.number for line in sweep.lines}
    waits = read_stretches(result, line_of, len(sweep.lines))
    job, line, needs = waits.job, waits.line, waits.needs
    # misconfigured: asked once per line and size among the jobs that waited
    misconfigured: dict[int, str] = {}
    first = _firsts(job)  # each job's first stretch (a job's stretches are together)
    if len(job):
        sizes = int(needs.max()) + 1
        key = line[first].astype(np.int64) * sizes + needs[first]  # per waiting job, its line and size as one number
        # each pair once: counted in a table when it is small (a sort of a million keys costs 20 times more)
        pairs = np.flatnonzero(np.bincount(key)) if len(sweep.lines) * sizes <= _PAIR_TABLE + 4 * len(key) \
            else np.unique(key)
        reasons = {pair: reason for pair, number, size in zip(pairs.tolist(), (pairs // sizes).tolist(),
                                                               (pairs % sizes).tolist(), strict=True)
                   if (reason := placement.misconfiguration(sweep.lines[number].share.pool,
                                                            sweep.lines[number].share, size))}
        if reasons:
            for position in np.flatnonzero(np.isin(key, np.fromiter(reasons, dtype=np.int64))).tolist():
                misconfigured[int(job[first[position]])] = reasons[int(key[position])]
    bad = np.zeros(len(job), dtype=bool)  # per stretch
    if misconfigured:
        bad = np.isin(job, np.fromiter(misconfigured, dtype=np.int64))
    _sweep(sweep, waits, bad, result.usage, line_of)
    return _charge(result, topology, policy, sweep, waits, first, bad, misconfigured)


def _timer_ended(stint: int, head_since: float, end: float, queue: str, misconfigured: str,
                 actions: dict[str, dict[str, float]]) -> bool:
    """Whether a ``jobStateTimeLimitActions`` timer ended this stretch (its job failed as it ended): the head of its
    line (its last ``stint``, since ``head_since``) for exactly the action's ``maxTimeSeconds`` (a timer starts when
    a job becomes the head)."""
    if stint < 0:
        return False
    limit = actions.get(queue, {}).get(misconfigured or CAPACITY_INSUFFICIENT)
    if limit is None:
        return False
    return abs((end - head_since) - limit) <= _TIMER_TOLERANCE * max(1.0, limit)


def _firsts(job: np.ndarray) -> np.ndarray:
    """The position of each job's first stretch (a job's stretches are together, jobs in record order)."""
    return np.flatnonzero(np.concatenate(([True], job[1:] != job[:-1]))).astype(np.int32) if len(job) else job


def _choose(policy: AttributionOrder, bad: np.ndarray, requeued: np.ndarray, held: np.ndarray,
            timed: np.ndarray) -> np.ndarray:
    """Per piece, the cause charged (a ``WAIT_CAUSES`` number) by what held: misconfigured, requeued, the line's cause
    (a ``WAIT_CAUSES`` number), a time-limit action pending. The policy is asked once per combination that occurs."""
    combination = ((bad.astype(np.int16) * 2 + requeued) * len(WAIT_CAUSES) + held) * 2 + timed
    table = np.zeros(2 * 2 * len(WAIT_CAUSES) * 2, dtype=np.int8)  # a few dozen combinations: a table, not a sort
    for key in np.flatnonzero(np.bincount(combination, minlength=len(table))).tolist():
        holding = {WAIT_CAUSES[key // 2 % len(WAIT_CAUSES)]}
        if key // (2 * len(WAIT_CAUSES)) // 2:
            holding.add(Cause.MISCONFIGURED)
        if key // (2 * len(WAIT_CAUSES)) % 2:
            holding.add(Cause.REQUEUED_AFTER_PREEMPTION)
        if key % 2:
            holding.add(Cause.TIME_LIMIT_ACTION_PENDING)
        table[key] = _NUMBER[policy.choose(frozenset(holding))]
    return table[combination]


def _longest(policy: AttributionOrder, jobs: int, waited: np.ndarray, piece_job: np.ndarray, charged: np.ndarray,
             seconds: np.ndarray) -> list[Cause | None]:
    """Per job record, the cause it waited longest for (the first in the policy's order among equals; ``None``:
    it never waited). ``waited``: the records that waited, in order; per piece, which of them it is
    (``piece_job``), its cause (a ``WAIT_CAUSES`` number) and seconds. One cause at a time, in the policy's order, so
    that a million jobs need a few columns, not one per cause."""
    # the waiting causes in the policy's order (an order may rank more causes; it ranks every one it charges)
    ranked = sorted(WAIT_CAUSES, key=lambda cause: policy.order.index(cause) if cause in policy.order
                    else len(WAIT_CAUSES))
    most = np.zeros(len(waited), dtype=np.float64)
    longest = np.full(len(waited), len(ranked), dtype=np.uint8)  # none yet
    for position, cause in enumerate(ranked):
        mine = charged == _NUMBER[cause]
        if not mine.any():
            continue
        total = np.bincount(piece_job[mine], weights=seconds[mine], minlength=len(waited))
        longer = total > most  # strictly: among equals the earlier cause in the order stays
        most[longer] = total[longer]
        longest[longer] = position
    chosen = np.full(jobs, len(ranked), dtype=np.uint8)  # per record, its cause's position (none: never waited)
    chosen[waited] = longest
    return list(map([*ranked, None].__getitem__, chosen.tobytes()))  # bytes: positions as ints, no list of them


def _charge(result: SimulationResult, topology: Topology, policy: AttributionOrder, sweep: wait_sweep.Sweep,
            waits: Stretches, first: np.ndarray, bad: np.ndarray, misconfigured: dict[int, str]) -> WaitCauses:
    """Each stretch's pieces (behind its head; as the head, per cause) charged by the policy, per share and job."""
    lines, causes = len(sweep.lines), len(WAIT_CAUSES)
    job, line, start, end = waits.job, waits.line, waits.start, waits.end
    stretch_count = len(job)
    # a stretch ended by a time-limit action: its last stint as the head (the timer ran all of it) is charged to it
    actions = {queue: {reason: float(action.max_time_seconds) for reason, action in by_reason.items()}
               for queue, by_reason in queue_actions(topology).items()}
    timer = np.zeros(stretch_count, dtype=bool)
    last_stint: dict[int, int] = {}  # of the stretches a timer may have ended
    if actions:
        for number in np.flatnonzero(waits.failed).tolist():
            stint, head_since = sweep.watched.get(int(waits.rank[number]), (-1, 0.0))
            last_stint[number] = stint
            timer[number] = _timer_ended(stint, head_since, float(end[number]),
                                         sweep.lines[int(line[number])].share.queue.name,
                                         misconfigured.get(int(job[number]), ""), actions)
    # every piece in the smallest types that hold it (a million-job run has millions of pieces): the heads' pieces
    # (the sweep's ranks as stretch numbers), then one behind its head per stretch, for the rest of it; each column
    # filled in place, the sweep's array it is copied from let go at once (a copy never sits beside its source)
    piece_stretch, piece_cause, piece_seconds = sweep.take_pieces()
    heads = len(piece_stretch)
    head_piece = waits.order[np.frombuffer(piece_stretch, dtype=np.int32)]
    del piece_stretch
    span = end - start
    totals = np.bincount(line, weights=span, minlength=lines)
    rest = span - np.bincount(head_piece, weights=np.frombuffer(piece_seconds, dtype=np.float64),
                              minlength=stretch_count)
    del span
    behind = np.flatnonzero(rest > 0)
    count = heads + len(behind)
    piece = np.empty(count, dtype=np.int32)
    piece[:heads] = head_piece
    piece[heads:] = behind
    del head_piece
    seconds = np.empty(count, dtype=np.float64)
    seconds[:heads] = np.frombuffer(piece_seconds, dtype=np.float64)
    del piece_seconds
    seconds[heads:] = rest[behind]
    del rest, behind
    held = np.empty(count, dtype=np.int8)
    held[:heads] = _HEAD_NUMBER[np.frombuffer(piece_cause, dtype=np.int8)]
    del piece_cause
    held[heads:] = _BEHIND
    timed = np.zeros(count, dtype=bool)  # the pieces of a stretch's last stint, where a timer ended it
    for position, stint in sweep.watched_pieces.items():
        number = int(piece[position])
        timed[position] = bool(timer[number]) and stint == last_stint.get(number)
    charged = _choose(policy, bad[piece], waits.requeued[piece], held, timed)
    del held, timed
    key = line[piece]  # per piece, its line and cause as one number (in place: one array of pieces, not three)
    key *= causes
    key += charged
    by_share = np.bincount(key, weights=seconds, minlength=lines * causes).reshape(lines, causes)
    del key
    # the waiting jobs numbered in order, per stretch (a job's stretches share its line: a job counts once)
    numbered = np.cumsum(np.concatenate(([False], job[1:] != job[:-1])).view(np.int8), dtype=np.int32) \
        if stretch_count else job
    piece_job = numbered[piece]
    del piece
    job_line = line[first]
    jobs_waited = np.bincount(job_line, minlength=lines)
    # per line and cause, the jobs charged any of it (each pair of a job and a cause once), a cause at a time
    held_by = np.zeros((len(first), causes), dtype=bool)
    held_by[piece_job, charged] = True
    jobs_by_cause = np.stack([np.bincount(job_line[held_by[:, cause]], minlength=lines) for cause in range(causes)],
                             axis=1)
    del held_by, job_line
    job_causes = _longest(policy, len(result.jobs), job[first], piece_job, charged, seconds)
    del piece_job, charged, seconds
    time_limited = np.bincount(line[first[np.unique(numbered[timer])]], minlength=lines)
    sizes: dict[int, list[int]] = defaultdict(list)
    bad_first = first[bad[first]]
    for number, size in zip(line[bad_first].tolist(), needs_of(waits, bad_first), strict=True):
        sizes[number].append(size)
    shares = []
    for item, charged_seconds, total, count, limited, counts in zip(
            sweep.lines, by_share.tolist(), totals.tolist(), jobs_waited.tolist(), time_limited.tolist(),
            jobs_by_cause.tolist(), strict=True):
        share = item.share
        blocker = None
        if item.blocker is not None:
            number, sums = max(item.blocker_sums.items(), key=lambda entry: entry[1].seconds)
            blocker = Blocker(result.jobs[int(job[waits.order[item.blocker.rank]])].name, item.blocker.needs,
                              item.blocker_seconds, wait_sweep.HEAD_CAUSES[number], _context(sums.figures()))
        context = {wait_sweep.HEAD_CAUSES[number]: _context(item.context[number].figures())
                   for number in item.context_order}
        shares.append(ShareWaits(
            share=share.share_id, instance_type=share.instance_type, strategy=share.model.strategy,
            limit=share.model.capacity.get(share.instance_type, 0), ceiling=share.model.ceiling(share.instance_type),
            jobs_waited=count, wait_seconds=total,
            by_cause={cause: value for cause, value in zip(WAIT_CAUSES, charged_seconds, strict=True) if value > 0},
            jobs_by_cause={cause: value for cause, value, seconds in zip(WAIT_CAUSES, counts, charged_seconds,
                                                                         strict=True) if seconds > 0},
            behind_by_head_cause={wait_sweep.HEAD_CAUSES[number]: item.behind[number]
                                  for number in item.behind_order},
            blocker=blocker, context=context, preempted_borrowed=waits.preempted[2 * item.number],
            preempted_own=waits.preempted[2 * item.number + 1],
            misconfigured_jobs=len(sizes[item.number]), largest_misconfigured=max(sizes[item.number], default=0),
            time_limited_jobs=limited))
    return WaitCauses(policy.name, shares, job_causes)


def needs_of(waits: Stretches, positions: np.ndarray) -> list[int]:
    """The instances the stretches at ``positions`` needed."""
    return waits.needs[positions].tolist()
