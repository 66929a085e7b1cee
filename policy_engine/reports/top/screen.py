"""``batch-quota top``'s screen and its JSON: a queue's figures (``adapters.aws.queue_figures``) as tables."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Literal, TextIO

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from policy_engine.reports.top.view import (
    SORTS,
    QueueFigures,
    ShareRow,
    SortKey,
    build,
    calls_line,
    clock_text,
    document,
    no_plan_held,
    share_cells,
    title,
    visible_rows,
)

__all__ = ["PIPE_WIDTH", "SORTS", "SharesTable", "SortKey", "calls_line", "clock_text", "front_table", "screen",
           "shares_table", "totals_table", "visible_rows", "write_json", "write_text"]

#: Columns of a head job's reason on the screen (cut with an ellipsis; ``--format json`` has it whole).
REASON_WIDTH = 70
#: what the reason keeps on a narrow terminal (the other columns are never cut)
REASON_MIN_WIDTH = 24

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

    def __init__(self, title: str, cells: Sequence[Sequence[str]], no_plan_held: bool = False) -> None:
        self.title = title
        self.cells = [[Text(text) for text in row] for row in cells]
        #: no SCHEDULED plan job holds quota anywhere (the column may go on a narrow terminal)
        self.no_plan_held = no_plan_held

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
    return SharesTable(title(figures), share_cells(rows), no_plan_held(rows))


def front_table(rows: Sequence[Sequence[str]]) -> Table:
    table = Table(title="front of the queue", title_justify="left")
    for name in ("#", "JOB", "SHARE", "AT POSITION FOR"):
        table.add_column(name)
    for position, job, share, waiting in rows:
        table.add_row(position, Text(job), Text(share), waiting)
    return table


def totals_table(rows: Sequence[Sequence[str]]) -> Table:
    table = Table(title="per instance type", title_justify="left")
    for name in ("TYPE", "LIMITS", "USED", "OWN", "BORROWED", "PLAN HELD", "LENT", "WAITING", "PREEMPT 1h"):
        table.add_column(name, justify="left" if name == "TYPE" else "right")
    for instance_type, *figures in rows:
        table.add_row(Text(instance_type), *figures)
    return table


def screen(figures: QueueFigures, sort: SortKey, text: str, footer: list[Text]) -> RenderableType:
    """The whole view: shares, front of the queue, totals, then the footer lines."""
    view = build(figures, sort, text)
    return Group(SharesTable(view.title, view.shares, view.no_plan_held), front_table(view.front),
                 totals_table(view.totals), *footer)


def write_json(figures: QueueFigures, stream: TextIO) -> None:
    """``--once --format json``: every figure, durations in seconds, times in epoch milliseconds."""
    json.dump(document(figures), stream, indent=2, allow_nan=False)
    stream.write("\n")


#: The width of a one-shot table in a pipe or a file: wide enough that no row wraps.
PIPE_WIDTH = 200


def write_text(figures: QueueFigures, stream: TextIO) -> None:
    """``top --once`` (or piped): the screen's tables, printed once."""

    console = Console(file=stream, width=None if stream.isatty() else PIPE_WIDTH, highlight=False)
    console.print(screen(figures, SORTS[0], "", [Text(clock_text(figures))]))
