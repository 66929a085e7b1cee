"""A rich ``Table`` printed to a file or a pipe without rich's per-cell layout, byte for byte as rich prints it.

rich lays a table out cell by cell: each cell is measured, then rendered through a ``Padding``, a word wrap and a
justification, a dozen objects per cell, so the 1,000-row "why jobs waited" table of a million-job ``simulate``
cost about 0.3 s of CPU to print to a file. Without a colour system (a file, a pipe, ``NO_COLOR``) no style prints
a byte, and a table whose every cell is one line that fits its column needs none of that work: a column is as
wide as its widest cell (``rich.cells.cell_len``) plus its padding, a cell is its text padded by its
justification, and the rules are the table's own ``Box`` (``get_top``, ``get_row``, ``get_bottom``). The title and
the caption, which rich wraps and centres over the table's width, are still rendered by rich (one ``Text`` each).

``segments`` returns those lines, or ``None`` for any table it cannot prove it prints as rich does, which rich
then prints: a colour console or one that records, a cell that is not a ``str`` or a plain ``Text``, a line
break, a tab, a control character or a character whose width rich measures in context (a zero-width joiner, a
variation selector), a cell wider than its column (rich would wrap it), a table wider than the width (rich
would shrink its columns), and any option beyond the box, the header, each column's justification, overflow,
no-wrap and widths, the title and the caption (footers, section lines, leading, expand, fixed or minimum table
widths, other padding). ``tests/policy_engine/reports/kit/test_plain_tables.py`` compares it with rich on drawn
tables.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, JustifyMethod
from rich.segment import Segment
from rich.style import Style
from rich.table import Column, Table
from rich.text import Text, TextType

#: What rich lays out otherwise than "one line, as wide as its cells": line breaks and what ``str.splitlines``
#: splits at (rich measures by it), tabs and other control characters, and the zero-width joiner and variation
#: selector 16 (rich measures them with their neighbours, so a line's width is not the sum of its pieces').
_NOT_PLAIN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200d\ufe0f]")
#: Markup (``[bold]``) and emoji codes (``:smile:``) in a ``str`` cell: rich's ``render_str`` reads those.
_MARKUP = re.compile(r"[\[:]")
#: rich's ``Text.rstrip_end``: the trailing whitespace of a line.
_TRAILING_SPACE = re.compile(r"\s+$")
#: The only padding laid out here: rich's default, one space either side of each cell.
_PADDING = (0, 1, 0, 1)


class _Layout(NamedTuple):
    """A table's cells as text, row by row (the header first), and each column's width with its padding."""

    rows: list[list[str]]
    widths: list[int]


def supported(table: Table, console: Console) -> bool:
    """Whether ``console`` prints nothing but text and ``table`` uses only the options laid out here."""
    return (console.color_system is None and not console.record and not console.is_jupyter
            and bool(table.columns) and table.box is not None and table.show_edge and not table.show_footer
            and not table.show_lines and not table.leading and not table.expand and table.width is None
            and table.min_width is None and tuple(table.padding) == _PADDING and table.pad_edge
            and not table.collapse_padding and not any(row.end_section for row in table.rows))


def natural_width(table: Table, console: Console, options: ConsoleOptions) -> int | None:
    """The width rich would give ``table`` with room to spare (its ``Measurement.maximum``), or ``None`` when it is
    not laid out here."""
    layout = _layout(table, console, options, unbounded=True)
    return None if layout is None else sum(layout.widths) + _edges(table)


def segments(table: Table, console: Console, options: ConsoleOptions) -> list[Segment] | None:
    """``table`` as rich renders it in ``options`` on ``console`` (styles aside: none prints), or ``None`` when rich
    must lay it out."""
    if options.max_width < 1 or not supported(table, console):
        return None
    layout = _layout(table, console, options, unbounded=False)
    if layout is None:
        return None
    widths = layout.widths
    table_width = sum(widths) + _edges(table)
    annotation_options = options.update(width=table_width, highlight=table.highlight, height=None)
    out: list[Segment] = []
    if table.title:
        out.extend(_annotation(console, annotation_options, table.title, Style.pick_first(table.title_style,
                                                                                          "table.title"),
                               table.title_justify))
    assert table.box is not None  # ``supported``
    box = table.box.substitute(options, safe=console.safe_box if table.safe_box is None else table.safe_box)
    if not table.show_header:
        box = box.get_plain_headed_box()
    lines = [box.get_top(widths)]
    count = len(layout.rows)
    for index, row in enumerate(layout.rows):
        if index == 0:
            left, right, divider = box.head_left, box.head_right, box.head_vertical
        elif index == count - 1:
            left, right, divider = box.foot_left, box.foot_right, box.foot_vertical
        else:
            left, right, divider = box.mid_left, box.mid_right, box.mid_vertical
        lines.append(f"{left}{divider.join(row)}{right}")
        if index == 0 and table.show_header:
            lines.append(box.get_row(widths, "head", edge=True))
    lines.append(box.get_bottom(widths))
    new_line = Segment.line()
    for line in lines:
        out.append(Segment(line))
        out.append(new_line)
    if table.caption:
        out.extend(_annotation(console, annotation_options, table.caption,
                               Style.pick_first(table.caption_style, "table.caption"), table.caption_justify))
    return out


def _edges(table: Table) -> int:
    """The table's border columns (rich's ``Table._extra_width`` for a boxed table with its edge)."""
    return 2 + len(table.columns) - 1


def _annotation(console: Console, options: ConsoleOptions, text: TextType, style: str | Style,
                justify: JustifyMethod) -> list[Segment]:
    """A title or caption as rich's ``Table`` renders it: wrapped and justified over the table's width."""
    rendered = console.render_str(text, style=style, highlight=False) if isinstance(text, str) else text
    return list(console.render(rendered, options.update(justify=justify)))


def _layout(table: Table, console: Console, options: ConsoleOptions, *, unbounded: bool) -> _Layout | None:
    """Each cell padded to its column's width, as rich renders it; ``None`` when a cell or the table would not fit
    as it is (``unbounded``: measure only, whatever the width)."""
    if not supported(table, console):
        return None
    columns = table.columns
    available = options.max_width - _edges(table)
    plain_columns: list[list[str]] = []
    widths: list[int] = []
    for column in columns:
        cells = _plain_cells(table, column, console, options)
        if cells is None or not cells:
            return None
        lengths = [cell_len(text) for _, text in cells]
        widest = max(lengths)
        if column.width is not None:
            width = column.width + 2
        else:
            width = widest + 2
            if column.min_width is not None:
                width = max(width, column.min_width + 2)
            if column.max_width is not None:
                width = min(width, column.max_width + 2)
        if widest > width - 2:  # rich would wrap or cut a cell
            return None
        if width == 2 and any(text for _, text in cells):  # rich prints nothing of a cell no cell wide (U+200B)
            return None
        widths.append(width)
        plain_columns.append([_justified(column, cell, text, length, width - 2)
                              for (cell, text), length in zip(cells, lengths, strict=True)])
    if not unbounded and sum(widths) > available:  # rich would shrink the columns
        return None
    return _Layout([list(row) for row in zip(*plain_columns, strict=True)], widths)


def _plain_cells(table: Table, column: Column, console: Console,
                 options: ConsoleOptions) -> list[tuple[Text | None, str]] | None:
    """The column's header (when shown) and cells as (their ``Text``, its plain text); ``None`` when one is not
    a single line of text."""
    out: list[tuple[Text | None, str]] = []
    for cell in ((column.header, *column.cells) if table.show_header else column.cells):
        if type(cell) is str:
            if _MARKUP.search(cell) is None:
                if _NOT_PLAIN.search(cell) is not None:
                    return None
                out.append((None, cell))
                continue
            cell = console.render_str(cell, markup=options.markup, highlight=False)
        if type(cell) is not Text or cell.end != "\n":
            return None
        text = cell.plain
        if _NOT_PLAIN.search(text) is not None:
            return None
        out.append((cell, text))
    return out


def _justified(column: Column, cell: Text | None, text: str, length: int, width: int) -> str:
    """One cell as ``Text.wrap`` and ``Padding`` render a line that fits: justified to ``width`` cells, and padded."""
    justify = (cell.justify if cell is not None else None) or column.justify or "default"
    overflow = (cell.overflow if cell is not None else None) or column.overflow or "fold"
    no_wrap = cell.no_wrap if cell is not None and cell.no_wrap is not None else bool(column.no_wrap)
    if overflow != "ignore":  # rich's ``ignore`` skips both the trim and the justification
        if not no_wrap and len(text) > width:  # ``Text.rstrip_end``: counts characters, not cells
            trailing = _TRAILING_SPACE.search(text)
            if trailing is not None:
                text = text[:len(text) - min(len(trailing.group()), len(text) - width)]
                length = cell_len(text)
        if justify == "center":
            text = text.rstrip()
            length = cell_len(text)
            text = " " * ((width - length) // 2) + text
            length = cell_len(text)
        elif justify == "right":
            text = text.rstrip()
            length = cell_len(text)
            text = " " * (width - length) + text
            length = width
    return f" {text}{' ' * (width - length)} "


__all__: Sequence[str] = ("natural_width", "segments", "supported")
