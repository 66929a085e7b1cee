"""The fast path of job CSVs: common, valid rows become ``JobSpec``s a column at a time.

A million-row workload spends most of its loading time here, so rows are read in chunks and
each chunk is checked column by column with C-level operations (``zip``, ``map``, joins). A
chunk that any of those checks cannot vouch for is read row by row, and a row the row check
cannot vouch for goes to the full check (``job_rows.job_from_row``, in ``job_files``), so that
every problem is still reported, in line order. Both fast checks accept exactly what the full
check accepts, and build the same values.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator, Sequence
from itertools import islice, repeat
from typing import NamedTuple

from policy_engine.simulation.core.jobs import CORE_FIELDS, JobSpec
from policy_engine.simulation.inputs.job_rows import MAX_COUNT, MAX_DIGITS, MAX_PRIORITY, MAX_SECONDS, ShareIndex

#: Rows per chunk: large enough that a chunk's checks cost a few C-level passes per thousands of rows.
CHUNK = 4096
#: The fields a fast row has no column for, at their defaults.
_DEFAULTS = tuple(JobSpec._field_defaults[name] for name in JobSpec._fields[len(CORE_FIELDS):])
_new_spec = tuple.__new__  # JobSpec from one tuple, without the generated __new__: a million times
#: A time column (cells joined by commas) that ``float`` reads the way ``_fast_number`` does, cell for cell.
_PLAIN_TIMES = re.compile(r"[0-9.eE+,-]*")


class Batch(NamedTuple):
    """Consecutive rows the fast path read whole: the line of the first, and their specs in line order."""

    first: int
    specs: list[JobSpec]


def _fast_number(text: str) -> float:
    """A time cell the fast path vouches for (``ValueError`` otherwise: the full path then reports it)."""
    if "_" in text or text.strip() != text:  # float() is lenient; the full path reports such cells
        raise ValueError(text)
    value = float(text)
    if not (0 <= value <= MAX_SECONDS):
        raise ValueError(text)
    return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value


def _times(cells: Sequence[str]) -> list[float] | None:
    """``_fast_number`` of every cell, or ``None`` when a cell needs it one at a time (or the full check)."""
    joined = ",".join(cells)
    # an empty cell leaves two commas together, or one at an end (a cell holding a comma only looks empty)
    if (not _PLAIN_TIMES.fullmatch(joined) or ",," in joined or joined.startswith(",") or joined.endswith(",")
            or not cells or not cells[0]):
        return None
    try:
        values = list(map(float, cells))
    except ValueError:
        return None
    if ("-" in joined and min(values) < 0) or max(values) > MAX_SECONDS:
        return None
    if joined.count(".") != len(cells) or "e" in joined or "E" in joined:
        # some cell may be written as an integer: that one is read as an int, as the full check does
        return [int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value
                for text, value in zip(cells, values, strict=True)]
    return values  # every cell has its one decimal point: all stay floats


#: Above this many distinct cells in a chunk's count column, each cell is converted rather than looked up.
_FEW = 64


def _counts(cells: Sequence[str], default: str, low: int, high: int) -> tuple[list[int], int] | None:
    """Exact, short ASCII-digit integers within ``[low, high]`` (an empty cell is ``default``), with the most
    digits of a cell (an empty one counts as ``default``), or ``None``.

    ``int()`` takes " 3" and "3_0", and refuses thousands of digits: exact, short digits only. Counts repeat
    (instances, priorities), so each distinct cell is checked once and the column is looked up in C.
    """
    distinct = set(cells)
    if len(distinct) <= _FEW:
        table: dict[str, int] = {}
        digits = 0
        for cell in distinct:
            text = cell or default
            if not (text.isascii() and text.isdigit()) or len(text) > MAX_DIGITS:
                return None
            value = int(text)
            if not low <= value <= high:
                return None
            table[cell] = value
            digits = max(digits, len(text))
        return list(map(table.__getitem__, cells)), digits
    if "" in distinct:
        cells = [cell or default for cell in cells]
    joined = "".join(cells)
    digits = max(map(len, cells))
    if not (joined.isascii() and joined.isdigit()) or digits > MAX_DIGITS:
        return None
    values = list(map(int, cells))
    if min(values) < low or max(values) > high:
        return None
    return values, digits


class FastReader:
    """Reads a job CSV whose columns are all ``JobSpec`` fields; shares resolved once per distinct cell pair."""

    def __init__(self, header: list[str], shares: ShareIndex):
        column = {name: index for index, name in enumerate(header)}
        self.width = len(header)
        self.i_name, self.i_share, self.i_duration = column["name"], column["share"], column["duration"]
        self.i_type, self.i_inst = column.get("instance_type"), column.get("instances")
        self.i_prio, self.i_submit = column.get("priority"), column.get("submit_at")
        self.shares = shares
        self.resolved: dict[tuple[str, str], tuple[str, str] | None] = {}

    def target(self, ref: str, wanted: str) -> tuple[str, str] | None:
        """``(QUEUE/SHARE, instance type)`` of a row's share and type cells, or ``None`` (the full check says why)."""
        key = (ref, wanted)
        if key in self.resolved:
            return self.resolved[key]
        found = self.shares.resolve(ref) if ref else "missing"
        target = None
        if not isinstance(found, str):
            canonical, types = found
            if not types:  # a share read without a topology (``job_files.AnyShare``): any instance type
                target = (canonical, wanted)
            elif wanted in types or (not wanted and len(types) == 1):
                target = (canonical, wanted or types[0])
        self.resolved[key] = target
        return target

    def chunk(self, rows: list[list[str]]) -> list[JobSpec] | None:
        """Every row of ``rows`` as a spec, checked column by column; ``None`` when any row needs a closer look."""
        if len(set(map(len, rows))) != 1 or len(rows[0]) != self.width:
            return None
        columns = list(zip(*rows, strict=True))
        names = columns[self.i_name]
        if not all(names):
            return None
        refs = columns[self.i_share]
        wanted = columns[self.i_type] if self.i_type is not None else ("",) * len(rows)
        pairs = list(zip(refs, wanted, strict=True))
        distinct = set(pairs)
        targets = {pair: target for pair in distinct if (target := self.target(*pair)) is not None}
        if len(targets) != len(distinct):
            return None
        placed = [targets[pair] for pair in pairs]
        size = len(rows)
        instances = (_counts(columns[self.i_inst], "1", 1, MAX_COUNT) if self.i_inst is not None
                     else ([1] * size, 1))
        priorities = (_counts(columns[self.i_prio], "0", 0, MAX_PRIORITY) if self.i_prio is not None
                      else ([0] * size, 1))
        if instances is None or priorities is None:
            return None
        # the row check bounds the two cells' digits together
        if instances[1] + priorities[1] > MAX_DIGITS:
            return None
        submits = _times(columns[self.i_submit]) if self.i_submit is not None else [0] * size
        durations = _times(columns[self.i_duration])
        if submits is None or durations is None:
            return None
        return list(map(_new_spec, repeat(JobSpec), zip(
            names, [target[0] for target in placed], [target[1] for target in placed], instances[0], priorities[0],
            submits, durations, *(repeat(value) for value in _DEFAULTS), strict=False)))  # repeat() is endless

    def row(self, cells: list[str]) -> JobSpec | None:
        """One row as a spec when the fast checks vouch for it, else ``None`` (the full check reports it)."""
        try:
            if len(cells) != self.width:
                return None
            i_type, i_inst, i_prio, i_submit = self.i_type, self.i_inst, self.i_prio, self.i_submit
            target = self.target(cells[self.i_share], cells[i_type] if i_type is not None else "")
            if target is None:
                return None
            instances_text = cells[i_inst] if i_inst is not None and cells[i_inst] else "1"
            priority_text = cells[i_prio] if i_prio is not None and cells[i_prio] else "0"
            if (not (instances_text.isdigit() and priority_text.isdigit())
                    or len(instances_text) + len(priority_text) > MAX_DIGITS):
                return None  # int() takes " 3" and "3_0"; exact, short digits only
            instances, priority = int(instances_text), int(priority_text)
            name = cells[self.i_name]
            if not 1 <= instances <= MAX_COUNT or not 0 <= priority <= MAX_PRIORITY or not name:
                return None
            submit = _fast_number(cells[i_submit]) if i_submit is not None and cells[i_submit] else 0
            return _new_spec(JobSpec, (name, target[0], target[1], instances, priority, submit,
                                       _fast_number(cells[self.i_duration]), *_DEFAULTS))
        except ValueError:
            return None

    def rows(self, rows: list[list[str]], first: int) -> Iterator[Batch | tuple[int, list[str]]]:
        """``rows`` (from line ``first``) as batches of fast rows and ``(line, cells)`` of the others."""
        chunk = self.chunk(rows) if rows else None
        if chunk is not None:
            yield Batch(first, chunk)
            return
        batch: list[JobSpec] = []
        start = first
        for number, cells in enumerate(rows, start=first):
            spec = self.row(cells)
            if spec is not None:
                batch.append(spec)
                continue
            if batch:
                yield Batch(start, batch)
                batch = []
            yield number, cells
            start = number + 1
        if batch:
            yield Batch(start, batch)


def fast_csv_rows(reader: Iterator[list[str]], header: list[str],
                  shares: ShareIndex) -> Iterator[Batch | tuple[int, list[str]]]:
    """Batches of fast rows and ``(line, cells)`` of rows for the full check, in line order.

    When reading stops (``csv.Error``, ``UnicodeDecodeError``), the rows read before are yielded
    first, so that their problems are still reported.
    """
    fast = FastReader(header, shares)
    first = 2
    while True:
        rows: list[list[str]] = []
        try:
            rows.extend(islice(reader, CHUNK))
        except (csv.Error, UnicodeDecodeError):
            yield from fast.rows(rows, first)
            raise
        if not rows:
            return
        yield from fast.rows(rows, first)
        first += len(rows)
