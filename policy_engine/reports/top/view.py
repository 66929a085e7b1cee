"""``top``'s view: a queue's figures (``adapters.aws.queue_figures``) as the screen's rows of text (the shares,
filtered and sorted; the front of the queue; the totals per instance type), the calls line, and the JSON
document, read once per refresh. How ``s`` sorts and ``/`` filters the shares lives here too."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from policy_engine.adapters.aws.queue_figures import QueueFigures, ShareRow
from policy_engine.foundation.units import duration_text

__all__ = ["SORTS", "QueueFigures", "ShareRow", "SortKey", "TopView", "build", "calls_line", "clock_text", "document",
           "no_plan_held", "share_cells", "title", "visible_rows"]


@dataclass(frozen=True)
class SortKey:
    """How ``s`` orders the rows: ``name`` (shown in the footer) and the key (largest first unless by share)."""

    name: str
    key: Callable[[ShareRow], Any]
    descending: bool


SORTS = (
    SortKey("share", lambda r: (r.share, r.instance_type), False),
    SortKey("used", lambda r: (r.used, r.borrowed), True),
    SortKey("waiting", lambda r: (r.waiting_capped, r.waiting), True),
    SortKey("borrowed", lambda r: (r.borrowed, r.used), True),
    SortKey("head age", lambda r: r.head.age_seconds or 0 if r.head else -1, True),
)


def visible_rows(figures: QueueFigures, sort: SortKey, text: str) -> list[ShareRow]:
    """The rows the filter ``text`` keeps (share name or instance type contains it, case-insensitive), sorted."""
    needle = text.lower()
    rows = [r for r in figures.rows if needle in r.share.lower() or needle in r.instance_type.lower()]
    return sorted(rows, key=sort.key, reverse=sort.descending)


def _waiting(count: int, capped: bool) -> str:
    return f"{count}+" if capped else str(count)


def share_cells(rows: Sequence[ShareRow]) -> tuple[tuple[str, ...], ...]:
    """Per row: share (and its state unless enabled), type, strategy, limit, own, borrowed, held by SCHEDULED plan
    jobs, lent (whole instances), waiting, head job, its priority, its age, its reason, preemptions in the last hour."""
    out = []
    for row in rows:
        head = row.head
        state = "" if row.state == "ENABLED" else f" ({row.state})"
        out.append((row.share + state, row.instance_type, row.strategy, str(row.limit), str(row.own),
                    str(row.borrowed), str(row.plan_held), str(row.lent),
                    _waiting(row.waiting, row.waiting_capped),
                    head.name if head else "-", str(head.priority) if head and head.priority is not None else "-",
                    duration_text(head.age_seconds) if head else "-", head.reason if head else "",
                    "-" if row.preemptions is None else str(row.preemptions)))
    return tuple(out)


def no_plan_held(rows: Sequence[ShareRow]) -> bool:
    """No SCHEDULED plan job holds quota in any of ``rows`` (the PLAN HELD column may go on a narrow terminal)."""
    return not any(row.plan_held for row in rows)


@dataclass(frozen=True)
class TopView:
    title: str  # ``job queue Q: quota shares``
    shares: tuple[tuple[str, ...], ...]  # ``share_cells`` of the rows kept, in order
    front: tuple[tuple[str, ...], ...]  # position, job, share, at position for
    totals: tuple[tuple[str, ...], ...]  # type, limits, used, own, borrowed, plan held, lent, waiting, preemptions
    no_plan_held: bool  # no SCHEDULED plan job holds quota in the shares kept (``no_plan_held``)


def title(figures: QueueFigures) -> str:
    return f"job queue {figures.queue}: quota shares"


def build(figures: QueueFigures, sort: SortKey = SORTS[0], text: str = "") -> TopView:
    """The screen's rows, the shares filtered by ``text`` and sorted by ``sort``."""
    front = tuple((str(job.position), job.name or job.job_id, job.share or "?", duration_text(job.waiting_seconds))
                  for job in figures.front)
    totals = tuple((total.instance_type, str(total.limit), str(total.used), str(total.own), str(total.borrowed),
                    str(total.plan_held), str(total.lent), _waiting(total.waiting, total.waiting_capped),
                    "-" if total.preemptions is None else str(total.preemptions)) for total in figures.totals)
    rows = visible_rows(figures, sort, text)
    return TopView(title(figures), share_cells(rows), front, totals, no_plan_held(rows))


def clock_text(figures: QueueFigures) -> str:
    """The snapshot's instant, labelled with whose clock it is: ``serve``'s simulated clock is not wall time (it
    moves at ``--speed`` or when advanced), the account's snapshot is."""
    taken = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(figures.taken_at_ms / 1000))
    return f"{'simulated clock' if figures.simulated_clock else 'snapshot at'} {taken} UTC"


def calls_line(figures: QueueFigures) -> str:
    """``--verbose``: the calls this refresh made."""
    made = ", ".join(f"{op} {n}" for op, n in sorted(figures.calls.items())) or "none"
    return f"calls this refresh: {made}"


def document(figures: QueueFigures) -> dict[str, Any]:
    """``--once --format json``: every figure, durations in seconds, times in epoch milliseconds."""
    return asdict(figures)
