"""The "why jobs waited" tables and chart data: each share's waiting time by cause (``results.wait_causes``).

One row per share, instance type and cause that held any waiting second, largest first, in the
duration words of ``policy_engine.foundation.units``; text (rich), markdown and the HTML report's stacked chart
read the same rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from policy_engine.foundation.units import duration_text
from policy_engine.reports.kit.markdown import table as markdown_table
from policy_engine.reports.kit.safe_text import rich_text
from policy_engine.simulation.causes import WAIT_CAUSES, Cause, describe_wait_cause
from policy_engine.simulation.results.wait_causes import WaitCauses

if TYPE_CHECKING:
    from rich.table import Table

TITLE = "Why jobs waited"
#: a share's waits are summed over its jobs (a month of 1,000 jobs can hold years of waiting), so they read as
#: wait-hours, not as a duration
HEADER = ("share", "instance type", "cause", "wait-hours", "% of the share's wait", "jobs it held")


class CauseRow(NamedTuple):
    share: str
    instance_type: str
    cause: Cause
    seconds: float
    fraction: float  # of the share's waiting seconds on this type
    jobs: int  # jobs of the share on this type that waited for this cause (a job may wait for several)


def rows(waits: WaitCauses) -> Iterator[CauseRow]:
    """Shares that waited, in topology order; per share its causes, most time first."""
    for share in waits.shares:
        if share.wait_seconds <= 0:
            continue
        for cause, seconds in sorted(share.by_cause.items(), key=lambda item: (-item[1], WAIT_CAUSES.index(item[0]))):
            yield CauseRow(share.share, share.instance_type, cause, seconds, seconds / share.wait_seconds,
                           share.jobs_by_cause.get(cause, 0))


def row_cells(row: CauseRow) -> tuple[str, str, str, str, str, str]:
    return (row.share, row.instance_type, describe_wait_cause(row.cause), f"{row.seconds / 3600:,.1f}",
            f"{row.fraction:.1%}", f"{row.jobs:,}")


def caption(waits: WaitCauses) -> str:
    return (f"every waiting second (time RUNNABLE: to the first placement and again after each preemption, failed "
            f"attempt or capacity retry) charged to one cause and summed over the share's jobs (their waits), "
            f"attribution order {waits.order}")


def rich_table(waits: WaitCauses) -> Table | None:
    """The text report's table (``None`` when no job waited)."""
    from rich.table import Table  # here: the markdown and JSON reports never load rich

    body = [row_cells(row) for row in rows(waits)]
    if not body:
        return None
    out = Table(title=f"{TITLE} ({caption(waits)})")
    for index, header in enumerate(HEADER):
        out.add_column(header, overflow="fold", justify="right" if index >= 3 else "left")
    previous = None
    for cells in body:
        shown = cells if cells[:2] != previous else ("", "", *cells[2:])  # a share's name once per group
        previous = cells[:2]
        out.add_row(*map(rich_text, shown))
    return out


def markdown(waits: WaitCauses) -> list[str]:
    """The markdown report's section (empty when no job waited)."""
    body = [row_cells(row) for row in rows(waits)]
    if not body:
        return []
    return [f"#### {TITLE}", "", f"_{caption(waits)}_", "", *markdown_table(HEADER, body, align="lllrrr"), ""]


def chart_data(waits: WaitCauses) -> dict[str, Any]:
    """What the HTML page's stacked chart draws: hours per share and cause, every cause's words in order."""
    totals = {(s.share, s.instance_type): s.wait_seconds for s in waits.shares}
    values = [{"share": f"{row.share} · {row.instance_type} ({totals[row.share, row.instance_type] / 3600:,.0f} h)",
               "cause": describe_wait_cause(row.cause),
               "order": WAIT_CAUSES.index(row.cause), "hours": round(row.seconds / 3600, 6),
               "time": duration_text(row.seconds), "percent": round(100 * row.fraction, 1)}
              for row in rows(waits)]
    return {"causes": [describe_wait_cause(cause) for cause in WAIT_CAUSES], "values": values,
            "order": waits.order}
