"""Victim selection: which running jobs give way, behind one small interface.

AWS does not publish its heuristic ("number and type of instances borrowed,
relative priorities, duration"). The default follows Kueue: lowest priority
first, then most recently started. A policy only orders candidates; the rules
that keep preemption safe (eligibility, a minimal set, all or nothing) live in
``choose_victims`` and are shared by every policy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import ClassVar, Protocol

from policy_engine.simulation.core import placement
from policy_engine.simulation.core.capacity import Pool, ShareCapacity
from policy_engine.simulation.core.jobs import Job


class VictimPolicy(Protocol):
    """Orders preemption candidates: the first is preempted first.

    ``key`` sees the preempting job too (as Kueue's candidate ordering does), so a policy can
    prefer, say, victims of other shares or of a lower priority than the preemptor's.
    """

    name: ClassVar[str]

    def key(self, victim: Job, preemptor: Job) -> tuple[object, ...]:
        """The victim's sort key, compared element by element: the smallest is preempted first."""
        ...


class LowestPriorityNewestFirst:
    """The default (Kueue's order): lowest priority first, then most recently started."""

    name: ClassVar[str] = "lowest-priority-newest"

    def key(self, victim: Job, preemptor: Job) -> tuple[int, ...]:
        return (victim.priority, -victim.start_order)


class FewestInstancesFirst:
    """Smallest jobs first (fewest instances given back), then lowest priority, then newest."""

    name: ClassVar[str] = "fewest-instances"

    def key(self, victim: Job, preemptor: Job) -> tuple[int, ...]:
        return (victim.spec.instances, victim.priority, -victim.start_order)


#: Every victim policy by ``name`` (what users type); ``register_policy`` adds one.
POLICIES: dict[str, VictimPolicy] = {}


def register_policy(policy: VictimPolicy) -> VictimPolicy:
    """Add ``policy`` to ``POLICIES``; a second policy of the same name is refused, never silently swapped in."""
    if policy.name in POLICIES:
        raise ValueError(f"victim policy {policy.name!r} registered twice")
    POLICIES[policy.name] = policy
    return policy


register_policy(LowestPriorityNewestFirst())
register_policy(FewestInstancesFirst())


def choose_victims(
    pool: Pool,
    candidates: Iterable[Job],
    policy: VictimPolicy,
    preemptor: Job,
    eligible: Callable[[Job], bool],
    satisfied: Callable[[list[Job]], bool],
) -> list[Job] | None:
    """The minimal set of victims that makes ``satisfied`` true, or ``None`` (preempt none).

    Each step takes the first candidate, in the policy's order, that is ``eligible`` in the
    state after the earlier removals (so a candidate that becomes eligible later, e.g. a
    reclaim victim once in-share victims brought the head within its limit, is not missed);
    selection stops as soon as ``satisfied``; then
    every victim but the last is tentatively added back, newest choice first, and
    stays added back when it was not needed. Counters are restored before returning:
    the caller performs the real preemptions.
    """
    chosen: list[Job] = []
    found = False
    key = policy.key
    remaining = sorted(candidates, key=lambda victim: key(victim, preemptor))
    while not found:
        # the first candidate, in policy order, that is eligible in the state after the earlier removals
        index = next((i for i, job in enumerate(remaining) if eligible(job)), None)
        if index is None:
            break
        job = remaining.pop(index)
        pool.adjust(job.share, -job.spec.instances)
        chosen.append(job)
        found = satisfied(chosen)
    if found:
        for index in range(len(chosen) - 2, -1, -1):
            job = chosen[index]
            pool.adjust(job.share, job.spec.instances)
            rest = chosen[:index] + chosen[index + 1:]
            if satisfied(rest):
                chosen = rest
            else:
                pool.adjust(job.share, -job.spec.instances)
    for job in chosen:
        pool.adjust(job.share, job.spec.instances)
    return chosen if found else None


def has_lower_priority(share: ShareCapacity, job: Job) -> bool:
    """Whether in-share preemption could help ``job``: its share allows it and runs a lower-priority job."""
    if not share.in_share:
        return False
    priority = job.priority
    return any(other < priority for other in share.active_priorities)


def could_make_room(pool: Pool, share: ShareCapacity, instances: int, lower: list[Job],
                    above: list[ShareCapacity]) -> bool:
    """Whether preempting every candidate would make room: ``lower`` (the head's in-share candidates) and
    every job of ``above`` (``above_limit``). When not, no set of victims does, and none is searched for.

    A bound on the counters' arithmetic (what ``Pool.adjust`` would do), without moving them: freeing
    more only ever helps (own room, environment, lendable capacity), so a set that fits implies that
    all of them fit. A blocked head asks again after every release in its pool; sorting every
    candidate each time cost more than the rest of the pass.
    """
    used, limit = share.used, share.limit
    after = used - sum(job.spec.instances for job in lower)
    lender_idle, borrowed = pool.lender_idle, pool.borrowed
    if share.lends:
        lender_idle += max(0, limit - after) - max(0, limit - used)
    if share.borrows:
        borrowed -= max(0, used - limit) - max(0, after - limit)
    env_free = pool.env.capacity - pool.env.used + (used - after)
    # step 3 after in-share victims only (``borrow_fits`` without "above its limit": only a bound)
    if (share.borrows and (share.ceiling is None or after + instances <= share.ceiling)
            and lender_idle - borrowed >= instances and env_free >= instances):
        return True
    if after + instances > limit:
        return False  # own capacity needs the share within its limit; other shares' victims do not change that
    for other in above:  # every job of it gone: nothing borrowed, all of its limit idle
        env_free += other.used
        if other.borrows:
            borrowed -= other.used - other.limit
        if other.lends:
            lender_idle += other.limit
    return env_free >= instances and (not share.lends or lender_idle - borrowed >= instances)


def above_limit(pool: Pool, share: ShareCapacity) -> list[ShareCapacity]:
    """The other shares of ``pool`` using more than their own limit: the only ones reclaim takes from."""
    return [other for other in pool.shares if other.used > other.limit and other is not share]


def reclaim_victims(pool: Pool, share: ShareCapacity, head: Job, policy: VictimPolicy) -> list[Job] | None:
    """Step 2: jobs of shares above their own limit; each eligible only while its share still is.

    Protection (``min_runtime``) is not looked at here: the set is the rule's over all
    candidates, and the engine waits when it holds a protected job (never picks another).
    """
    n = head.spec.instances
    above = above_limit(pool, share)
    if not above or placement.over_capacity(pool) or not could_make_room(pool, share, n, [], above):
        return None
    candidates = [job for other in above for job in other.active]
    if not candidates:
        return None
    return choose_victims(
        pool,
        candidates,
        policy,
        head,
        eligible=lambda job: job.share.used > job.share.limit,
        satisfied=lambda chosen: placement.own_fits(pool, share, n),
    )


def in_share_victims(pool: Pool, share: ShareCapacity, head: Job, policy: VictimPolicy) -> list[Job] | None:
    """Step 4: strictly lower-priority jobs of the head's share, combinable with step 2's reclaim.

    Like ``reclaim_victims``, the rule's set over all candidates, protected or not.
    """
    n = head.spec.instances
    priority = head.priority
    candidates = [job for job in share.active if job.priority < priority]
    if not candidates or placement.over_capacity(pool):
        return None
    above = above_limit(pool, share)
    if not could_make_room(pool, share, n, candidates, above):
        return None
    candidates += [job for other in above for job in other.active]  # each eligible only while its share is above

    def eligible(job: Job) -> bool:
        if job.share is share:
            return True
        return job.share.used > job.share.limit and share.used + n <= share.limit

    def satisfied(chosen: list[Job]) -> bool:
        if placement.own_fits(pool, share, n):
            return True
        crossing = any(job.share is not share for job in chosen)
        return not crossing and placement.borrow_fits(pool, share, n)

    return choose_victims(pool, candidates, policy, head, eligible, satisfied)
