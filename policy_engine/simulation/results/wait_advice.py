"""The knob advice of ``explain SHARE --scenario S``: why the share's jobs waited, in sentences derived from the
attribution, kept beside the attribution it reads (``wait_causes``) so a new cause gets its advice here too.

Each sentence states a cause's part of the share's waiting hours, then the figures that point at a knob,
from what the attribution kept while that cause held (``wait_causes.CauseContext``: what the
head needed, what the lenders had idle, what the environment had idle) and from the topology (the
limits its environment's shares add up to). Causes under ``MINOR`` of the wait are named in one line.
These sentences never say whether a knob helps: averages of idle capacity miss what a change does over time, so
``explain`` replays each knob (``sweep.advice``) and only the replay's figures give a verdict.
"""

from __future__ import annotations

from policy_engine.foundation.model import Topology
from policy_engine.foundation.units import duration_text
from policy_engine.simulation.causes import WAIT_CAUSES, Cause, describe_wait_cause
from policy_engine.simulation.results.wait_causes import CauseContext, ShareWaits, WaitCauses

Sentence = tuple[str, str]
TOPIC = "waits"
#: Causes holding less of a share's wait than this get no sentence of their own.
MINOR = 0.05


def _pct(fraction: float) -> str:
    return f"{fraction:.0%}" if fraction >= 0.005 else "<1%"


def _n(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


def _environment(topology: Topology, share: ShareWaits) -> tuple[int, int]:
    """The environment's instances of the share's type, and the limits of every share on it for that type."""
    queue = next(q for q in topology.job_queues if any(f"{q.name}/{s.name}" == share.share for s in q.shares))
    environment = topology.environment(queue.service_environment)
    capacity = environment.capacity.get(share.instance_type, 0) if environment else 0
    limits = sum(s.capacity.get(share.instance_type, 0) for q in topology.job_queues
                 if q.service_environment == queue.service_environment for s in q.shares)
    return capacity, limits


def _room(topology: Topology, share: ShareWaits, ctx: CauseContext) -> str:
    """What a larger own limit would meet: the environment's idle instances against the need, and whether the
    limits leave room for one (no verdict: the replays give it)."""
    capacity, limits = _environment(topology, share)
    room = (f"the environment had {_n(ctx.environment_idle)} idle {share.instance_type} on average meanwhile "
            f"(its shares' limits add up to {limits} of its {capacity})")
    if limits >= capacity:  # no room to raise one limit alone: check refuses limits above the environment
        room += (f": a larger limit has to be moved from another share (--vary "
                 f"'transfer(A,B).capacity.{share.instance_type}=...') or the environment grown with it")
    return room


def _knob(topology: Topology, share: ShareWaits, cause: Cause, ctx: CauseContext | None = None) -> str:
    """The figures that point at a knob against ``cause``, from what held while it did (``ctx``: the share's heads
    while they waited for it, unless given)."""
    ctx = ctx or share.context.get(cause)
    kind = share.instance_type
    if cause is Cause.MISCONFIGURED:
        reach = share.ceiling if share.ceiling is not None else "the environment's capacity"
        return (f"{share.misconfigured_jobs} job(s) can never fit (the largest asks for {share.largest_misconfigured} "
                f"{kind}; the share reaches at most {reach}): no scheduling knob lets it run, only smaller jobs or a "
                "larger limit or environment")
    if cause is Cause.TIME_LIMIT_ACTION_PENDING:
        return (f"{share.time_limited_jobs} job(s) waited as the head until the queue's jobStateTimeLimitActions "
                "terminated them; a shorter maxTimeSeconds fails them sooner, and what held them as the head is "
                "what to fix")
    if cause is Cause.REQUEUED_AFTER_PREEMPTION:
        parts = []
        if share.preempted_borrowed:
            parts.append(f"{share.preempted_borrowed} attempt(s) on borrowed capacity were reclaimed by their lenders "
                         "(the knobs: a larger limit, or a lower borrow_limit, to keep more work on own capacity)")
        if share.preempted_own:
            parts.append(f"{share.preempted_own} attempt(s) within its limit were preempted (in-share preemption by "
                         "higher-priority jobs, or reclaim after a limit change; the knob: in_share_preemption, "
                         "replayed off)")
        return "; ".join(parts) or "its jobs were preempted and waited again in line"
    if ctx is None:
        return ""
    needs = f"a head needing {_n(ctx.needs)} {kind}"
    if cause is Cause.ENVIRONMENT_FULL:
        capacity, limits = _environment(topology, share)
        over = (f"; its environment's shares hold limits of {limits} {kind} against {capacity} instances"
                if limits > capacity else "")
        return (f"the share was within its limit and the environment had {_n(ctx.environment_idle)} idle {kind} "
                f"on average for {needs}{over}")
    if cause is Cause.WAITING_FOR_RECLAIM:
        return ("the head was within its limit and reclaim could make room, but waited for victims protected by "
                "min_runtime (or being evicted): min_runtime, a simulator assumption, is the knob (not replayed)")
    if cause is Cause.NOTHING_LENDABLE:
        return (f"the lenders had {_n(ctx.lender_idle)} idle {kind} on average for {needs}; "
                f"{_room(topology, share, ctx)}")
    if cause is Cause.LENDABLE_TAKEN:
        return (f"the lenders' idle capacity ({_n(ctx.lender_idle)} {kind} on average) was already borrowed by "
                f"earlier borrowers, first come first served; {_room(topology, share, ctx)}")
    # SHARE_AT_LIMIT
    if share.strategy == "LEND_AND_BORROW":
        return (f"the share was at its ceiling ({share.ceiling} {kind}) while the lenders had {_n(ctx.lendable)} "
                f"lendable idle {kind} on average for {needs}; {_room(topology, share, ctx)}")
    return (f"a {share.strategy} share never borrows (its borrow_limit does nothing; strategy LEND_AND_BORROW would "
            f"let it), and the lenders had {_n(ctx.lendable)} lendable idle {kind} on average for {needs}; "
            f"{_room(topology, share, ctx)}")


def _behind(topology: Topology, share: ShareWaits, fraction: float, backfill: bool) -> str:
    """Behind-head time: who blocked most, what the heads waited for meanwhile, and that cause's knob."""
    text = f"{_pct(fraction)} of wait-hours were spent behind the head of the line"
    total = sum(share.behind_by_head_cause.values())
    blocker = share.blocker
    if blocker is None or total <= 0:
        return text + "."
    held = blocker.seconds / total
    if held >= 0.5:  # one job held the line: what it waited for, and the pool while it did
        cause, ctx = blocker.cause, blocker.context
        knob = _knob(topology, share, cause, ctx)
        text += (f", {_pct(held)} of that behind one {blocker.instances}-instance head job ({blocker.name}). "
                 f"While it held the line it waited mostly ({_pct(ctx.head_seconds / blocker.seconds)}): "
                 f"{describe_wait_cause(cause)}" + (f"; {knob}" if knob else ""))
    else:
        cause, seconds = max(share.behind_by_head_cause.items(), key=lambda item: item[1])
        knob = _knob(topology, share, cause)
        text += (f"; the longest blocker ({blocker.name}, {blocker.instances} instance(s)) held {_pct(held)} of it. "
                 f"Meanwhile the heads waited mostly ({_pct(seconds / total)}): {describe_wait_cause(cause)}"
                 + (f"; {knob}" if knob else ""))
    during = blocker.context if held >= 0.5 else share.context.get(cause)
    if not backfill and during is not None and during.needs > 1 and cause in (
            Cause.SHARE_AT_LIMIT, Cause.NOTHING_LENDABLE, Cause.LENDABLE_TAKEN, Cause.ENVIRONMENT_FULL):
        text += ("; the scenario runs without backfill, which would let a smaller job behind the head use capacity "
                 "the head cannot")
    return text + "."


def wait_sentences(topology: Topology, waits: WaitCauses, share: str, backfill: bool = False) -> list[Sentence]:
    """Why ``share``'s jobs waited in the scenario, one group of sentences per instance type it waited on
    (``backfill``: whether the run let jobs past a blocked head)."""
    sentences: list[Sentence] = []
    for item in waits.share(share):
        if item.wait_seconds <= 0:
            sentences.append((TOPIC, f"No job of {share} waited for {item.instance_type} in the scenario."))
            continue
        # summed over jobs, a wait reads as wait-hours (a duration would read years); the mean per job as a duration
        sentences.append((TOPIC, f"{item.jobs_waited:,} job(s) of {share} waited for {item.instance_type}: "
                                 f"{item.wait_seconds / 3600:,.1f} wait-hours in all, "
                                 f"{duration_text(item.wait_seconds / item.jobs_waited)} per job on average "
                                 f"(attribution {waits.order})."))
        ranked = sorted(item.by_cause.items(), key=lambda kv: (-kv[1], WAIT_CAUSES.index(kv[0])))
        minor = []
        for cause, seconds in ranked:
            fraction = seconds / item.wait_seconds
            if fraction < MINOR:
                minor.append(f"{describe_wait_cause(cause)} {_pct(fraction)}")
                continue
            if cause is Cause.BEHIND_HEAD:
                sentences.append((TOPIC, _behind(topology, item, fraction, backfill)))
                continue
            knob = _knob(topology, item, cause)
            sentences.append((TOPIC, f"{_pct(fraction)} of wait-hours: {describe_wait_cause(cause)}"
                                     + (f"; {knob}" if knob else "") + "."))
        if minor:
            sentences.append((TOPIC, f"Less than {MINOR:.0%} each: {', '.join(minor)}."))
    return sentences
