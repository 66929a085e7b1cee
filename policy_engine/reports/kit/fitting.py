"""Tables that fit a terminal's width: any rich ``Table`` printed on a terminal, whatever its columns.

rich shrinks a table that is too wide by cutting its widest columns, wherever that falls: a header folds
mid-word (``borro/wed``, ``preem/ption/s``) and a before/after figure mid-value (``4d 0h → 2d 18h (−1d`` /
``7h)``). ``fit`` lays a table out itself instead, in this order, and takes the first that fits:

1. the table as it is, when its natural width fits;
2. its columns narrowed, each no narrower than its longest unbreakable piece (``reports.kit.breaks``): text
   (the header, names, prose) breaks at spaces only, and a figure (a right-aligned column) only between its
   parts (after ``→``, before ``(``, after ``,``), so ``2h 16m`` is never split;
3. the same with a compact border (no outer edge, single padding);
4. split: the leading name columns (left-aligned, at most ``MAX_KEYS``: share and instance type; after a
   rank ``#``) repeated in each part and the other columns spread in order over as few parts as fit, titled
   ``(part 1 of 3)``, the caption under the last;
5. stacked: one row per figure (``header | value``) under each row's names (a name that is a bare number is
   given its header: ``borrow_limit=100, transfer=0``), when not even one figure column fits beside the names;
6. listed, below the narrowest stack: one line per name and per figure (``header: value``, or the value on the
   next line), a long name broken only after its ``/``, ``_`` and ``.`` and otherwise left to overflow the
   line (never folded inside a word).

A prose column (text of several words: a cause of waiting) is never narrowed below ``PROSE_WIDTH`` (or its
widest line): a split or a stack reads better than a cause wrapped over five lines of ten characters.

A table with no name column to repeat (or a single figure beside its names) takes the narrowest layout instead,
or the listed one when even that does not fit.

It is a pure function of the table and the width, used only on a terminal (``terminal.console(fit=True)``):
files and pipes get the whole table, as wide as its cells (``terminal.for_stream``). The width is rich's: the
terminal's, or ``COLUMNS`` when set (so a test or a user can choose it), never below ``MIN_WIDTH``.
"""

from __future__ import annotations

import copy
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

from rich import box
from rich.cells import cell_len
from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text, TextType

from policy_engine.reports.kit.breaks import TEXT_BREAKS, spans

#: At most this many leading name columns are repeated in each part of a split table (share and instance type);
#: a later text column (a strategy) is split off like a figure.
MAX_KEYS = 2
#: The narrowest width a report is laid out for: a terminal (or ``COLUMNS``) narrower than this gets this width,
#: the terminal wrapping what is wider (README, "Read at a glance"). rich takes ``COLUMNS=0`` as zero columns
#: and printed nothing (or failed); Python's ``shutil`` ignores a ``COLUMNS`` that is not a positive number, as we do.
MIN_WIDTH = 20
#: A prose column (cells of several words) is not narrowed below this many cells: the table is split or stacked.
PROSE_WIDTH = 24
#: Where a name too long for its line may break when nothing else fits: after a ``/``, ``_`` or ``.``.
NAME_BREAKS = re.compile(r"(?<=[/_.])(?=.)")
#: Wider than any terminal: a table's natural width is measured against it.
_UNBOUNDED = 100_000


@dataclass
class _Cells:
    """One column's header and cells as ``Text``, and how they may break."""

    header: Text
    cells: list[Text]
    figure: bool

    def pieces(self, text: Text) -> list[str]:
        """The unbreakable pieces of each line of ``text``."""
        return [line[a:b] for line in text.plain.split("\n") for a, b in spans(line, self.figure)]

    @cached_property
    def narrowest(self) -> int:
        """The longest unbreakable piece of the header (text: spaces only) and the cells."""
        header = max((cell_len(p) for p in TEXT_BREAKS.split(self.header.plain) if p), default=1)
        piece = max([header, 1, *(cell_len(p) for cell in self.cells for p in self.pieces(cell))])
        return max(piece, min(self.widest_cell, PROSE_WIDTH)) if self.prose else piece

    @cached_property
    def prose(self) -> bool:
        """Whether this is a text column of sentences or phrases (a cause), not of names."""
        return not self.figure and any(" " in cell.plain.strip() for cell in self.cells)

    @cached_property
    def widest_cell(self) -> int:
        return max([1, *(cell_len(line) for text in self.cells for line in text.plain.split("\n"))])

    @cached_property
    def widest(self) -> int:
        return max([1, *(cell_len(line) for text in (self.header, *self.cells) for line in text.plain.split("\n"))])


def _as_text(console: Console, value: RenderableType | None) -> Text | None:
    if value is None:
        return Text("")
    if isinstance(value, Text):
        return value
    if isinstance(value, str):
        return console.render_str(value)
    return None


def _columns(console: Console, table: Table) -> list[_Cells] | None:
    """Each column as text, or ``None`` when a cell is not text (such a table is printed as it is)."""
    out = []
    for column in table.columns:
        header = _as_text(console, column.header)
        cells = [_as_text(console, cell) for cell in column.cells]
        if header is None or any(cell is None for cell in cells):
            return None
        out.append(_Cells(header, [c for c in cells if c is not None], figure=column.justify == "right"))
    return out


def wrap(text: Text, width: int, figure: bool) -> Text:
    """``text`` broken into lines of at most ``width`` cells at its break points only (a piece longer than
    ``width`` stays whole); styles are kept."""
    if "\n" not in text.plain and cell_len(text.plain) <= width:
        return text  # most cells: nothing to break
    out: list[Text] = []
    offset = 0
    for line in text.plain.split("\n"):
        first: int | None = None
        last = 0
        for start, end in _name_spans(line, spans(line, figure), width, figure):
            if first is None:
                first, last = start, end
            elif cell_len(line[first:end]) <= width:
                last = end
            else:
                out.append(text[offset + first:offset + last])
                first, last = start, end
        out.append(text[offset + first:offset + last] if first is not None else Text(""))
        offset += len(line) + 1
    return Text("\n").join(out)


def _name_spans(line: str, pieces: list[tuple[int, int]], width: int, figure: bool) -> list[tuple[int, int]]:
    """``pieces``, each text piece wider than ``width`` cut after its ``/``, ``_`` and ``.`` (``NAME_BREAKS``);
    the parts are packed back together by ``wrap``, so a cut is only taken where the line needs it."""
    if figure:
        return pieces
    out = []
    for start, end in pieces:
        if cell_len(line[start:end]) <= width:
            out.append((start, end))
            continue
        cuts = [start, *(start + m.start() for m in NAME_BREAKS.finditer(line[start:end])), end]
        out += [(a, b) for a, b in itertools.pairwise(cuts) if b > a]
    return out


def _overhead(table: Table, columns: int, console: Console) -> int:
    """What the borders and padding of ``table``'s style add to ``columns`` columns' content."""
    probe = copy.copy(table)
    probe.title = probe.caption = None
    probe.columns = [Column(width=1, _index=index) for index in range(columns)]  # the index says which is an edge
    probe.rows = []
    probe.show_header = False
    probe.width = probe.min_width = None
    probe.expand = False
    return Measurement.get(console, console.options.update_width(_UNBOUNDED), probe).maximum - columns


def _compact(table: Table) -> Table:
    compact = copy.copy(table)
    compact.box, compact.show_edge, compact.pad_edge, compact.collapse_padding = box.SIMPLE_HEAD, False, False, True
    return compact


def _narrowed(columns: Sequence[_Cells], room: int, squeeze: bool = False) -> list[int] | None:
    """Content widths that add up to at most ``room``: the widest columns narrowed first, none below its
    narrowest; ``None`` when the narrowest widths do not fit, unless ``squeeze``: then the widest floors are
    lowered too (a piece wider than its column is folded: nothing narrower could show it whole)."""
    widths = [c.widest for c in columns]
    floors = [c.narrowest for c in columns]
    if sum(floors) > room:
        if not squeeze:
            return None
        floors = _squeezed(floors, max(room, len(floors)))
    excess = sum(widths) - room
    while excess > 0:
        shrinkable = [i for i, w in enumerate(widths) if w > floors[i]]
        if not shrinkable:  # every column at its floor: the caller checked the floors fit
            break
        top = max(widths[i] for i in shrinkable)
        widest = [i for i in shrinkable if widths[i] == top]
        below = max([floors[i] for i in widest] + [widths[i] for i in shrinkable if widths[i] < top])
        step = min(top - below, -(-excess // len(widest)))
        for i in widest:
            if excess > 0:
                cut = min(step, excess)
                widths[i] -= cut
                excess -= cut
    return widths


def _squeezed(floors: Sequence[int], room: int) -> list[int]:
    """``floors`` with the largest lowered, evenly, until they add up to ``room`` (each at least 1)."""
    out = list(floors)
    while sum(out) > room:
        top = max(out)
        out[out.index(top)] -= 1
    return out


def _laid_out(table: Table, columns: Sequence[_Cells], indices: Sequence[int], widths: Sequence[int],
              title: TextType | None, caption: TextType | None) -> Table:
    """A copy of ``table`` with the columns ``indices`` at ``widths``, every cell broken at its break points."""
    out = copy.copy(table)
    out.title, out.caption = title, caption
    out.width = out.min_width = None
    out.expand = False
    out.columns = []
    for position, (index, width) in enumerate(zip(indices, widths, strict=True)):
        cells = columns[index]
        column = replace(table.columns[index], header=wrap(cells.header, width, figure=False),
                         width=width, min_width=None, max_width=None, ratio=None, no_wrap=False, overflow="fold",
                         _cells=[wrap(cell, width, cells.figure) for cell in cells.cells])
        column._index = position
        out.columns.append(column)
    out.rows = list(table.rows)
    return out


def _part_title(title: TextType | None, part: int, parts: int) -> TextType | None:
    suffix = f" (part {part} of {parts})"
    if isinstance(title, Text):
        return title + suffix
    return f"{title}{suffix}" if title else suffix.strip()


def _row_names(columns: Sequence[_Cells], keys: int, row: int) -> Text:
    """A row's names for a stacked layout: a name that is a bare number (a sweep's axis value) with its header
    (``1 borrow_limit=100, transfer=0``), since no header row says which is which."""
    rank = 1 if keys and columns[0].figure else 0
    named = [c.cells[row] if _NAMED.search(c.cells[row].plain) or not c.header.plain.strip()
             else Text.assemble(c.header.plain.strip(), "=", c.cells[row]) for c in columns[rank:keys]]
    labelled = any(not _NAMED.search(c.cells[row].plain) for c in columns[rank:keys])
    return Text(" ").join([*(c.cells[row] for c in columns[:rank]), Text(", " if labelled else " ").join(named)])


#: A cell with a letter names itself (a share, an instance type); one without (``100``) needs its header.
_NAMED = re.compile(r"[^\W\d_]")


def _stacked(table: Table, columns: Sequence[_Cells], keys: int, width: int, console: Console) -> Table | Listed:
    """Each row as its names, then one line per figure (``header | value``): the last resort of a narrow terminal
    (``_listed`` when even that does not fit)."""
    stacked = _compact(table)
    stacked.columns, stacked.rows = [], []
    stacked.show_header = False
    stacked.width = stacked.min_width = None
    stacked.add_column(overflow="fold")
    stacked.add_column(overflow="fold")
    names = [_row_names(columns, keys, row) for row in range(len(table.rows))]
    label = _Cells(Text(""), [*names, *(c.header for c in columns[keys:])], figure=False)
    value = _Cells(Text(""), [cell for c in columns[keys:] for cell in c.cells], figure=True)
    room = width - _overhead(stacked, 2, console)
    header_floor = max(_Cells(Text(""), [c.header for c in columns[keys:]], figure=False).narrowest, 1)
    if header_floor + value.narrowest > room:
        return _listed(table, columns, keys, width, names)
    widths = _narrowed([label, value], room, squeeze=True)
    assert widths is not None
    for row in range(len(table.rows)):
        stacked.add_row(Text.assemble(wrap(names[row], widths[0], figure=False), style="bold"), "")
        for index, column in enumerate(columns[keys:], start=keys):
            last = index == len(columns) - 1
            stacked.add_row(wrap(column.header, widths[0], figure=False),
                            wrap(column.cells[row], widths[1], figure=column.figure), end_section=last)
    return stacked


class Listed(Text):
    """Lines already laid out (a table as ``_listed`` lines, ``explain``'s sentences): a fitting console prints them
    as they are, never re-wrapped (``soft_wrap``), so a piece wider than the terminal is never cut by rich."""


def _listed(table: Table, columns: Sequence[_Cells], keys: int, width: int, names: Sequence[Text]) -> Listed:
    """One line per name and per figure (``header: value``; the value on its own line when both do not fit):
    lines of whole words, a long name broken only after ``/``, ``_`` or ``.`` and otherwise longer than
    ``width`` (printed unwrapped: the terminal wraps it, nothing here cuts a word)."""
    lines: list[Text] = []
    if table.title:
        lines.append(wrap(Text(str(table.title), style="bold"), width, figure=False))
    for row in range(len(table.rows)):
        if names[row].plain:
            lines.append(Text.assemble(wrap(names[row], width, figure=False), style="bold"))
        elif row:
            lines.append(Text(""))
        for column in columns[keys:]:
            label, value = column.header.plain.replace("\n", " "), column.cells[row]
            if cell_len(label) + 2 + cell_len(value.plain) <= width - 2 and "\n" not in value.plain:
                lines.append(Text.assemble("  ", (label + ":", "dim"), " ", value))
            else:
                lines.append(Text.assemble("  ", wrap(Text(label + ":", style="dim"), width - 2, figure=False)))
                lines.append(Text.assemble("    ", wrap(value, width - 4, column.figure)))
    if table.caption:
        lines.append(wrap(Text(str(table.caption), style="dim"), width, figure=False))
    listed = Listed()
    listed.append_text(Text("\n").join(_indented(line) for line in lines))
    return listed


def _indented(line: Text) -> Text:
    """``line`` with every continuation line indented like its first."""
    plain = line.plain
    indent = plain[:len(plain) - len(plain.lstrip(" "))]
    return Text(f"\n{indent}").join(part if i == 0 else part[len(indent):] if part.plain.startswith(indent) else part
                                   for i, part in enumerate(line.split("\n")))


def fit(table: Table, console: Console, width: int | None = None) -> list[Table | Listed]:
    """``table`` as one or more tables, each at most ``width`` (default: the console's, never below ``MIN_WIDTH``)
    cells wide (see the module's docstring for the order tried), or, below the narrowest stack, as lines
    (``Text``, printed unwrapped); a table with cells other than text comes back as it is."""
    width = max(MIN_WIDTH, width or console.width)
    columns = _columns(console, table)
    if columns is None or not columns:
        return [table]
    if sum(c.widest for c in columns) + _overhead(table, len(columns), console) <= width or \
            Measurement.get(console, console.options.update_width(_UNBOUNDED), table).maximum <= width:
        return [table]
    everything = list(range(len(columns)))
    for style in (table, _compact(table)):
        widths = _narrowed(columns, width - _overhead(style, len(columns), console))
        if widths is not None:
            return [_laid_out(style, columns, everything, widths, table.title, table.caption)]
    keys = min(_keys(columns), len(columns) - 1)
    if keys == 0 or len(columns) - keys < 2:  # nothing to split off: the widest pieces fold
        compact = _compact(table)
        room = width - _overhead(compact, len(columns), console)
        if sum(c.narrowest for c in columns) > room:
            names = [_row_names(columns, keys, row) for row in range(len(table.rows))]
            return [_listed(table, columns, keys, width, names)]
        widths = _narrowed(columns, room, squeeze=True)
        assert widths is not None
        return [_laid_out(compact, columns, everything, widths, table.title, table.caption)]
    splits = [(style, groups) for style in (table, _compact(table))
              if (groups := _groups(columns, keys, width, style, console)) is not None]
    if not splits:
        return [_stacked(table, columns, keys, width, console)]
    style, groups = min(splits, key=lambda split: len(split[1]))  # the fewest parts; the table's own box on a tie
    parts: list[Table | Listed] = []
    for number, group in enumerate(groups, start=1):
        indices = [*range(keys), *group]
        widths = _narrowed([columns[i] for i in indices], width - _overhead(style, len(indices), console))
        assert widths is not None  # _groups packed each part to fit
        parts.append(_laid_out(style, columns, indices, widths, _part_title(table.title, number, len(groups)),
                               table.caption if number == len(groups) else None))
    return parts


def _keys(columns: Sequence[_Cells]) -> int:
    """How many leading columns name a row: text columns (a share, an instance type), after a rank (``#``) if
    any, at most ``MAX_KEYS`` of them."""
    rank = 1 if columns and columns[0].figure and columns[0].widest <= 3 else 0
    names = next((i for i, c in enumerate(columns[rank:]) if c.figure), len(columns) - rank)
    return rank + min(names, MAX_KEYS) if names else 0


def _groups(columns: Sequence[_Cells], keys: int, width: int, style: Table, console: Console
            ) -> list[list[int]] | None:
    """The figure columns packed in order into as few parts as fit beside the ``keys`` name columns."""
    groups: list[list[int]] = []
    names = [columns[i].narrowest for i in range(keys)]
    for index in range(keys, len(columns)):
        candidate = [*groups[-1], index] if groups else [index]
        room = width - _overhead(style, keys + len(candidate), console)
        if groups and sum(names) + sum(columns[i].narrowest for i in candidate) <= room:
            groups[-1] = candidate
            continue
        if sum(names) + columns[index].narrowest > width - _overhead(style, keys + 1, console):
            return None
        groups.append([index])
    return groups

