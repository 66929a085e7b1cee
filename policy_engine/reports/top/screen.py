"""``batch-quota top``'s screen and its JSON: a queue's figures (``adapters.aws.queue_figures``) as tables."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal, TextIO

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from policy_engine.adapters.aws.queue_figures import QueueFigures, ShareRow
from policy_engine.foundation.units import duration_text

#: Columns of a head job's reason on the screen (cut with an ellipsis; ``--format json`` has it whole).
REASON_WIDTH = 70
#: what the reason keeps on a narrow terminal (the other columns are never cut)
REASON_MIN_WIDTH = 24


def _number(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.1f}"


def _waiting(count: int, capped: bool) -> str:
    return f"{count}+" if capped else str(count)


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


_SHARE_COLUMNS: tuple[tuple[str, Literal["left", "right"]], ...] = (
    ("SHARE", "left"), ("TYPE", "left"), ("STRATEGY", "left"), ("LIMIT", "right"), ("OWN", "right"),
    ("BORROWED", "right"), ("PLAN HELD", "right"), ("LENT", "right"), ("WAITING", "right"), ("HEAD JOB", "left"),
    ("PRIO", "right"),
    ("AGE", "right"), ("REASON", "left"), ("PREEMPT 1h", "right"))
_REASON = [name for name, _ in _SHARE_COLUMNS].index("REASON")
_STRATEGY = [name for name, _ in _SHARE_COLUMNS].index("STRATEGY")
_HEAD = [name for name, _ in _SHARE_COLUMNS].index("HEAD JOB")
_PLAN_HELD = [name for name, _ in _SHARE_COLUMNS].index("PLAN HELD")


class SharesTable:
    """The per-share table, laid out for the width it is drawn at: one line per row, as in top, and on a
    narrow terminal only the reason is cut (the JSON output has it whole); every other column keeps its
    header and its widest cell whole (rich alone would squeeze the short columns to nothing)."""

    def __init__(self, figures: QueueFigures, rows: list[ShareRow]) -> None:
        self.title = f"job queue {figures.queue}: quota shares"
        self.cells = [_share_cells(row) for row in rows]
        #: no SCHEDULED plan job holds quota anywhere (the column may go on a narrow terminal)
        self.no_plan_held = not any(row.plan_held for row in rows)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        widths = [max([len(name), *(len(row[index]) for row in self.cells)])
                  for index, (name, _) in enumerate(_SHARE_COLUMNS)]
        # a cell is its text, one space either side and one border; the table adds its left border
        others = 1 + sum(width + 3 for index, width in enumerate(widths)
                         if index != _REASON and not (index == _PLAN_HELD and self.no_plan_held))
        narrow = options.max_width < others + REASON_MIN_WIDTH + 3
        reason = min(REASON_WIDTH, max(REASON_MIN_WIDTH, options.max_width - others - 3))
        # narrow: no borders, no strategy (check and explain show it), no plan column while it holds nothing, and
        # each head's reason on its own line under the table (a line longer than the terminal is cut at its edge,
        # as top cuts it)
        dropped = ((_REASON, _STRATEGY, *((_PLAN_HELD,) if self.no_plan_held else ())) if narrow else ())
        table = (Table(title=self.title, title_justify="left", expand=False, box=box.SIMPLE_HEAD,
                       padding=(0, 2, 0, 0), pad_edge=False) if narrow
                 else Table(title=self.title, title_justify="left", expand=False))
        for index, (name, justify) in enumerate(_SHARE_COLUMNS):
            if index in dropped:
                continue
            width = reason if index == _REASON else widths[index]
            table.add_column(name, justify=justify, no_wrap=True, overflow="ellipsis", max_width=width,
                             min_width=None if index == _REASON else width)
        for row in self.cells:
            table.add_row(*(cell for index, cell in enumerate(row) if index not in dropped))
        yield table
        if narrow:
            for row in self.cells:
                if row[_REASON].plain:
                    yield Text.assemble(row[0], " ", row[_HEAD], ": ", row[_REASON], overflow="fold")


def shares_table(figures: QueueFigures, rows: list[ShareRow]) -> SharesTable:
    return SharesTable(figures, rows)


def _share_cells(row: ShareRow) -> list[Text]:
    head = row.head
    state = "" if row.state == "ENABLED" else f" ({row.state})"
    return [Text(text) for text in (
        row.share + state, row.instance_type, row.strategy, str(row.limit), str(row.own), str(row.borrowed),
        str(row.plan_held), _number(row.lent), _waiting(row.waiting, row.waiting_capped), head.name if head else "-",
        str(head.priority) if head and head.priority is not None else "-",
        duration_text(head.age_seconds) if head else "-", head.reason if head else "",
        "-" if row.preemptions is None else str(row.preemptions))]


def front_table(figures: QueueFigures) -> Table:
    table = Table(title="front of the queue", title_justify="left")
    for name in ("#", "JOB", "SHARE", "AT POSITION FOR"):
        table.add_column(name)
    for job in figures.front:
        table.add_row(str(job.position), Text(job.name or job.job_id), Text(job.share or "?"),
                      duration_text(job.waiting_seconds))
    return table


def totals_table(figures: QueueFigures) -> Table:
    table = Table(title="per instance type", title_justify="left")
    for name in ("TYPE", "LIMITS", "USED", "OWN", "BORROWED", "PLAN HELD", "LENT", "WAITING", "PREEMPT 1h"):
        table.add_column(name, justify="left" if name == "TYPE" else "right")
    for total in figures.totals:
        table.add_row(Text(total.instance_type), str(total.limit), str(total.used), str(total.own),
                      str(total.borrowed), str(total.plan_held), _number(total.lent),
                      _waiting(total.waiting, total.waiting_capped),
                      "-" if total.preemptions is None else str(total.preemptions))
    return table


def screen(figures: QueueFigures, sort: SortKey, text: str, footer: list[Text]) -> RenderableType:
    """The whole view: shares, front of the queue, totals, then the footer lines."""
    return Group(shares_table(figures, visible_rows(figures, sort, text)), front_table(figures),
                 totals_table(figures), *footer)


def calls_line(figures: QueueFigures) -> str:
    """``--verbose``: the calls this refresh made."""
    made = ", ".join(f"{op} {n}" for op, n in sorted(figures.calls.items())) or "none"
    return f"calls this refresh: {made}"


def write_json(figures: QueueFigures, stream: TextIO) -> None:
    """``--once --format json``: every figure, durations in seconds, times in epoch milliseconds."""
    json.dump(asdict(figures), stream, indent=2, allow_nan=False)
    stream.write("\n")


#: The width of a one-shot table in a pipe or a file: wide enough that no row wraps.
PIPE_WIDTH = 200


def write_text(figures: QueueFigures, stream: TextIO) -> None:
    """``top --once`` (or piped): the screen's tables, printed once."""

    console = Console(file=stream, width=None if stream.isatty() else PIPE_WIDTH, highlight=False)
    console.print(screen(figures, SORTS[0], "", []))
