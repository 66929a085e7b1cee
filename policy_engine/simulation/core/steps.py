"""The scheduling pass of one pool: own capacity, reclaim, borrow FIFO, in-share preemption, then backfill.

The pass restarts at the first step after any placement or preemption, and only looks at
heads that may have changed (``Agenda.dirty``) or that wait for capacity just freed, so an
instant costs O(changes x log n), not O(shares). The steps decide; the engine places and preempts.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Final

from policy_engine.simulation.causes import Cause
from policy_engine.simulation.core import placement
from policy_engine.simulation.core.agenda import Agenda, BorrowEntry
from policy_engine.simulation.core.capacity import Pool, ShareCapacity
from policy_engine.simulation.core.jobs import Job, Status
from policy_engine.simulation.core.preemption import in_share_victims, reclaim_victims

if TYPE_CHECKING:
    from policy_engine.simulation.core.lifecycle import JobLifecycle

#: ``JobLifecycle.pass_start`` between passes (``lifecycle.OUTSIDE_PASS``; not imported: lifecycle imports steps).
OUTSIDE_PASS: Final = 1 << 60  # a short int when compiled; no run places that many jobs

_RUNNABLE: Final = Status.RUNNABLE
_RECLAIM: Final = Cause.RECLAIM_PREEMPTION
_IN_SHARE: Final = Cause.IN_SHARE_PREEMPTION


def _is_head(share: ShareCapacity, job: Job) -> bool:
    return share.line.first is job


class Steps:
    """The scheduling steps, in order, over one engine's pools."""

    __slots__ = ("backfill", "engine")

    def __init__(self, engine: JobLifecycle):
        self.engine = engine
        self.backfill = engine.settings.backfill

    def run_pass(self, agenda: Agenda) -> None:
        engine = self.engine
        engine.pass_start = engine._start_counter  # what this pass places is no victim in it (the loop guard)
        self._run_pass(agenda)
        engine.pass_start = OUTSIDE_PASS

    def _run_pass(self, agenda: Agenda) -> None:
        while True:
            if agenda.dirty and self.classify(agenda):
                continue
            if agenda.own and self.own(agenda):
                continue
            if agenda.reclaim and self.reclaim(agenda):
                continue
            # step 3 only with lendable idle capacity (the call is skipped on a cluster with none)
            if agenda.borrow and agenda.pool.lender_idle > agenda.pool.borrowed and self.borrow(agenda):
                continue
            if agenda.preempt and self.in_share(agenda):
                continue
            if agenda.dirty:
                continue
            if self.backfill and (not agenda.settled or agenda.fresh):
                if self.fill(agenda):
                    continue
                agenda.settled = True
            break

    def classify(self, agenda: Agenda) -> bool:
        """Sort each changed head into the step that may place it; ``True`` when it placed one itself.

        A lone changed head that fits on own capacity while no other head waits for it is what step 1
        would pop and place next, so it is placed at once: on a busy cluster, most placements. Its line's
        new head is then what the pass would look at next (this step again), so it is looked at here.
        """
        pool = agenda.pool
        env = pool.env
        dirty = agenda.dirty
        agenda.dirty = {}
        push = heapq.heappush
        lone = len(dirty) == 1 and not agenda.own
        for share in dirty:
            line = share.line
            while True:
                job = line.first
                if job is None or job.misconfigured:
                    break
                spec = job.spec
                n = spec.instances
                used = share.used
                if used + n <= share.limit:
                    # placement.own_fits, inline (within the limit already)
                    if env.capacity - env.used >= n and (not share.lends or pool.lender_idle - pool.borrowed >= n):
                        if not lone:
                            push(agenda.own, (-job.priority, spec.submit_at, job.seq, job, share))
                            break
                        self.engine.place(share, job, False, False)  # own capacity, no preemption
                        changed = agenda.dirty
                        if len(changed) != 1 or share not in changed:
                            return True  # the pass restarts at this step
                        agenda.dirty = {}
                        continue  # only this line changed: its new head, as the restarted pass would
                    push(agenda.reclaim, (-job.priority, spec.submit_at, job.seq, job, share))
                # placement.under_ceiling, inline
                elif (share.borrows and (share.ceiling is None or used + n <= share.ceiling)
                      and agenda.borrow_member.get(share) is not job):
                    agenda.borrow_member[share] = job
                    push(agenda.borrow, (spec.submit_at, job.seq, job, share))
                # has_lower_priority, inline: once per head
                if (share.in_share and share.active_priorities and min(share.active_priorities) < job.priority
                        and agenda.preempt_member.get(share) is not job):
                    agenda.preempt_member[share] = job
                    push(agenda.preempt, (-job.priority, spec.submit_at, job.seq, job, share))
                break
        return False

    def own(self, agenda: Agenda) -> bool:
        """Step 1: a head within its own limit, on idle owned capacity."""
        pool = agenda.pool
        env = pool.env
        while agenda.own:
            entry = heapq.heappop(agenda.own)
            job, share = entry[3], entry[4]
            if share.line.first is not job:  # _is_head, inline: once per job
                continue
            n = job.spec.instances  # placement.own_fits, inline
            if share.used + n <= share.limit and env.capacity - env.used >= n and (
                    not share.lends or pool.lender_idle - pool.borrowed >= n):
                self.engine.place(share, job, False, False)  # own capacity, no preemption
                return True
            agenda.dirty[share] = None  # no longer fits on its own: look at it again
        return False

    def reclaim(self, agenda: Agenda) -> bool:
        """Step 2: a head within its own limit takes back capacity from shares above theirs."""
        pool = agenda.pool
        engine = self.engine
        while agenda.reclaim:
            entry = heapq.heappop(agenda.reclaim)
            job, share = entry[3], entry[4]
            if not _is_head(share, job):
                continue
            n = job.spec.instances
            if not placement.within_own_limit(share, n) or placement.own_fits(pool, share, n):
                agenda.dirty[share] = None
                continue
            victims = reclaim_victims(pool, share, job, engine.policy)
            if victims is None or not self.all_ready(pool, victims, agenda, share):
                agenda.waiting[share] = None
                continue
            for victim in victims:
                engine.preempt(victim, job, _RECLAIM)
            engine.place(share, job, borrowed=False, after_preemption=True)
            return True
        return False

    def borrow(self, agenda: Agenda) -> bool:
        """Step 3: borrowing heads, first come first served, on lendable idle capacity."""
        pool = agenda.pool
        lendable, env_free = pool.lender_idle - pool.borrowed, pool.env.capacity - pool.env.used
        if not agenda.borrow or lendable <= 0 or env_free <= 0:
            return False
        room = lendable if lendable < env_free else env_free  # nothing changes them until a placement
        skipped: list[BorrowEntry] = []
        placed = False
        member = agenda.borrow_member
        while agenda.borrow:
            entry = heapq.heappop(agenda.borrow)
            job, share = entry[2], entry[3]
            if member.get(share) is not job:
                continue  # stale: the line's current head has its own entry
            if share.line.first is not job:
                del member[share]  # it will be classified again when it is the head again
                continue
            n = job.spec.instances
            if share.used + n <= share.limit or (share.ceiling is not None and share.used + n > share.ceiling):
                del member[share]  # within its own limit now, or no longer under its ceiling
                agenda.dirty[share] = None
                continue
            if n <= room:  # placement.borrow_fits: the share borrows and is above its limit, under its ceiling
                del member[share]
                self.engine.place(share, job, True, False)  # borrowed, no preemption
                placed = True
                break
            skipped.append(entry)
        for entry in skipped:
            heapq.heappush(agenda.borrow, entry)
        return placed

    def in_share(self, agenda: Agenda) -> bool:
        """Step 4: a head preempts lower-priority jobs of its own share (with reclaim where it needs it)."""
        pool = agenda.pool
        engine = self.engine
        while agenda.preempt:
            entry = heapq.heappop(agenda.preempt)
            job, share = entry[3], entry[4]
            if agenda.preempt_member.get(share) is job:
                del agenda.preempt_member[share]
            if not _is_head(share, job):
                continue
            n = job.spec.instances
            if placement.fits(pool, share, n):
                agenda.dirty[share] = None
                continue
            victims = in_share_victims(pool, share, job, engine.policy)
            if victims is None or not self.all_ready(pool, victims, agenda, share):
                agenda.waiting[share] = None
                continue
            borrowed = share.used - sum(v.spec.instances for v in victims if v.share is share) + n > share.limit
            for victim in victims:
                engine.preempt(victim, job, _IN_SHARE if victim.share is share else _RECLAIM)
            engine.place(share, job, borrowed=borrowed, after_preemption=True)
            return True
        return False

    def all_ready(self, pool: Pool, victims: list[Job], agenda: Agenda, share: ShareCapacity) -> bool:
        """Whether the step's victims may all be preempted now; otherwise wake the pool when they may, and
        note that ``share``'s head waits for protected victims (``Agenda.protected``).

        The loop guard: a job placed by this pass is no victim in it (nor before T + min_runtime
        when that is set), or two heads could preempt each other forever inside one pass; one more
        pass of the pool at the same instant may take it. The head waits for the same victims
        (the step's choice) instead of taking others that are not protected.
        """
        engine = self.engine
        ends = [end for end in map(engine.protected_until, victims) if end is not None]
        if not ends:
            return True
        end = max(ends)
        if end > engine.now:
            engine.wake(pool, end)
        else:
            engine.repass(pool)
        agenda.protected[share] = None
        return False

    def fill(self, agenda: Agenda) -> bool:
        """Backfill (optional): a job behind a blocked head may use capacity the head cannot (no preemption).

        The first job in line order (head excluded) that fits on own or borrowed capacity, share by
        share in pool order. What fits is every size up to a bound (own room, or borrowed room above
        the own limit: the two ranges always join), so the line's size index answers it without a scan.

        Once settled (nothing fitted, and since then no capacity was freed), only lines a job joined
        are looked at (``fresh``): placements only take capacity, so nothing else can fit.
        """
        pool = agenda.pool
        fresh = agenda.fresh
        candidates = fresh if agenda.settled else agenda.deep
        env_free = pool.env.capacity - pool.env.used
        if env_free <= 0:
            fresh.clear()
            return False
        lendable = pool.lender_idle - pool.borrowed
        if candidates is not fresh:
            fresh.clear()  # the whole pool is looked at
        # lines with someone behind the head and room for them: on a busy cluster most shares are at their
        # limit with nothing to borrow, so this leaves one or two of a dozen (put in pool order only then)
        can_borrow = lendable > 0
        shares = [share for share in candidates
                  if (share.limit > share.used or (can_borrow and share.borrows)) and share.line.waiting >= 2]
        position = agenda.position
        if len(shares) > 1:
            shares.sort(key=position.__getitem__)  # pool order, as the definition walks it
        start = 0 if candidates is fresh else agenda.fill_from
        for share in shares:
            if position[share] < start:
                continue  # looked at since the last capacity freed: nothing of it fits
            line = share.line
            room = share.limit - share.used
            most = room if room < env_free else env_free
            if share.lends and lendable < most:
                most = lendable
            if share.borrows:
                top = lendable if lendable < env_free else env_free
                if share.ceiling is not None and share.ceiling - share.used < top:
                    top = share.ceiling - share.used
                if top > room and top > most:
                    most = top
            if most > 0:
                job = line.first_fitting(most, line.first)
                if job is not None:
                    n = job.spec.instances
                    borrowed = not placement.own_fits(pool, share, n)
                    self.engine.place(share, job, borrowed=borrowed, after_preemption=False, remove=True)
                    if candidates is not fresh:
                        agenda.fill_from = position[share]  # the next look starts here: more of it may fit
                    return True  # a fresh line stays fresh: another of its new jobs may fit as well
        fresh.clear()  # nothing in a fresh line fits: none will until capacity is freed
        return False
