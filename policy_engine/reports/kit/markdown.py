"""GitHub-flavoured Markdown building blocks for pull-request comments and ``$GITHUB_STEP_SUMMARY``.

The ``*_markdown`` reports are compact on purpose: a verdict line, then small tables built
here. Cells are escaped so a ``|`` or a newline in a message cannot break a table.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from policy_engine.reports.kit import safe_text


def cell(value: object) -> str:
    """One table cell shown literally (HTML, Markdown and pipes escaped), newlines folded, empty shown as a dash."""
    text = "<br>".join(safe_text.markdown(line) for line in str(value).replace("\r", " ").split("\n"))
    return text if text.strip() else "–"


def code(text: str) -> str:
    """``text`` as an inline code span, fenced with more backticks than it contains in a row."""
    value = safe_text.visible(text)
    fence = "`" * (1 + max((len(m) for m in re.findall(r"`+", value)), default=0))
    return f"{fence} {value} {fence}" if "`" in value else f"`{value}`"


def table(header: Sequence[str], rows: Iterable[Sequence[object]], align: str = "") -> list[str]:
    """A GFM table; ``align`` is one letter per column (``l``/``r``), default left."""
    marks = [("---:" if (align[i:i + 1] == "r") else "---") for i in range(len(header))]
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return lines


#: A cell longer than this wraps in GitHub's comment column (about 110 characters of table on a laptop):
#: a table with such a column is written as a list instead (``listed``).
LONG_CELL = 40
#: How many characters of cells one row of a before/after table holds before it is split (``split_columns``):
#: beyond, GitHub wraps its cells onto several lines.
ROW_CHARS = 110


def long_columns(header: Sequence[str], rows: Sequence[Sequence[object]]) -> set[int]:
    """The columns with a cell (or header) longer than ``LONG_CELL``."""
    return {index for index in range(len(header))
            if any(len(str(row[index])) > LONG_CELL for row in rows)}


def listed(header: Sequence[str], row: Sequence[object], long: set[int], names: int | None = None) -> str:
    """One row as a list item, for a table whose long text would wrap its cells: the first cell and the short ones,
    then each long one after its header (``- BQ703 · lowered_limit · training/vision: **what happens:** ...``).
    With ``names``, only the first ``names`` cells name the row: every other cell, a figure, keeps its header
    (``- training/sim: **preemptions:** 0; **wait p95:** ...``), never a bare number."""
    if names is not None:
        long = set(range(names, len(row)))
    lead = {0} | (set(range(len(row))) - long)  # the first cell names the row, however long
    short = " · ".join(cell(row[index]) for index in sorted(lead) if str(row[index]).strip())
    rest = "; ".join(f"**{cell(header[index])}:** {cell(row[index])}" for index in sorted(long - {0})
                     if str(row[index]).strip())
    return "- " + short + (f": {rest}" if short and rest else rest)


def split_columns(header: Sequence[str], rows: Sequence[Sequence[str]], names: int,
                  chars: int = ROW_CHARS) -> list[tuple[tuple[str, ...], list[tuple[str, ...]]]]:
    """A wide table as several, each with the ``names`` columns and as many of the others, in order, as keep its
    longest row within ``chars`` characters of cells: GitHub then shows each row on one line."""
    def width(index: int) -> int:  # a header wraps at its spaces; a cell is kept whole
        return max([*(len(word) for word in header[index].split()), *(len(str(row[index])) for row in rows)]) + 3

    keys = sum(width(i) for i in range(names))
    groups: list[list[int]] = []
    for index in range(names, len(header)):
        if groups and keys + sum(width(i) for i in groups[-1]) + width(index) <= chars:
            groups[-1].append(index)
        else:
            groups.append([index])
    return [(tuple(header[i] for i in (*range(names), *group)),
             [tuple(str(row[i]) for i in (*range(names), *group)) for row in rows]) for group in groups]
