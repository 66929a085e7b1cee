"""Job files: CSV and JSON Lines rows read into ``JobSpec``s, with one problem per broken row or field.

Common, valid CSV rows take a fast path (``fast_csv``: a chunk of rows checked a column at a time);
any row it cannot vouch for goes through the full check (``job_rows.job_from_row``) so that every
problem is still reported. A problem that stops reading (not UTF-8, a CSV field over the csv
module's limit) is one line with the line number; the rows read before it are still checked.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
from collections.abc import Generator, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from policy_engine.foundation.diagnostics import Named
from policy_engine.foundation.model import Topology
from policy_engine.inputs import input_files
from policy_engine.inputs.loading import find_lone_surrogate
from policy_engine.simulation.core.jobs import CORE_FIELDS, JobSpec
from policy_engine.simulation.gcpause import gc_paused
from policy_engine.simulation.inputs.fast_csv import Batch, fast_csv_rows
from policy_engine.simulation.inputs.input_problems import MAX_PROBLEMS, Problems
from policy_engine.simulation.inputs.job_rows import (
    JOB_FIELDS,
    REQUIRED,
    Extras,
    RowAt,
    ShareIndex,
    TextRow,
    job_from_row,
)

#: A row to check (a mapping), or a ``Batch`` of rows the fast path already turned into ``JobSpec``s, with where
#: it is (for a batch only ``(file, line of its first row)``: a million ``RowAt``s would cost more than the check).
Row = tuple[RowAt | tuple[str, int], Mapping[str, Any] | Batch]
#: Columns the fast CSV path understands; any other column sends the file through full validation.
_FAST_COLUMNS = frozenset(CORE_FIELDS)


def _header_problem(header: list[str], required: tuple[str, ...] = REQUIRED) -> str | None:
    """What is wrong with a CSV header as a whole (said once, not once per row), or ``None``."""
    if header and header[0].startswith("\ufeff"):
        return "the header starts with a byte-order mark (BOM); save the file as UTF-8 without BOM"
    if len(header) == 1 and ";" in header[0]:
        return "the header is separated by ';'; job files are comma-separated (name,share,duration,...)"
    upper = [cell for cell in header if cell not in JOB_FIELDS and cell.strip().lower() in JOB_FIELDS]
    if upper:
        return (f"header column(s) {', '.join(map(repr, upper))} must be written exactly as "
                f"{', '.join(repr(cell.strip().lower()) for cell in upper)} (lower case, no spaces)")
    unknown = [cell for cell in header if cell not in JOB_FIELDS]
    if unknown:
        hints = "".join(f" (did you mean {close[0]!r}?)" for cell in unknown[:1]
                        if (close := difflib.get_close_matches(cell, JOB_FIELDS, n=1)))
        return (f"header column(s) {', '.join(map(repr, unknown))} are not job fields{hints}; "
                f"the columns are {', '.join(JOB_FIELDS)}")
    repeated = sorted({cell for cell in header if header.count(cell) > 1})
    if repeated:
        return f"header names column(s) {', '.join(map(repr, repeated))} more than once"
    missing = [name for name in required if name not in header]
    if missing:
        return f"header lacks the required column(s) {', '.join(map(repr, missing))}"
    return None


def _csv_rows(reader: Iterator[list[str]], path: Path, problems: Problems, shares: ShareIndex | None,
              required: tuple[str, ...] = REQUIRED) -> Iterator[Row]:
    source = str(path)
    header = next(reader, None)
    if header is None:
        problems.add(source, None, (), "empty job file: expected a header line")
        return
    wrong = _header_problem(header, required)
    if wrong:
        problems.add(source, 1, (), wrong)
        return
    rows: Iterable[Batch | tuple[int, list[str]]]
    if shares is not None and set(header) <= _FAST_COLUMNS and set(REQUIRED) <= set(header):
        rows = fast_csv_rows(reader, header, shares)
    else:
        rows = enumerate(reader, start=2)
    for row in rows:
        if isinstance(row, Batch):
            yield (source, row.first), row
            continue
        number, cells = row
        if len(cells) != len(header):
            problems.add(source, number, (), f"expected {len(header)} columns, got {len(cells)}")
        else:
            yield RowAt(source, number, number, True), TextRow(zip(header, cells, strict=True))


def _jsonl_rows(handle: IO[str], path: Path, problems: Problems) -> Iterator[Row]:
    source = str(path)
    for number, text in enumerate(handle, start=1):
        if not text.strip():
            continue
        try:
            row = json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_unique_keys)
        except json.JSONDecodeError as error:
            problems.add(source, number, (), f"JSON syntax error: {error.msg}")
            continue
        except (ValueError, RecursionError) as error:  # a constant, a huge integer, deep nesting
            problems.add(source, number, (), f"cannot read: {_short(error)}")
            continue
        if not isinstance(row, dict):
            problems.add(source, number, (), f"expected a JSON object, got {type(row).__name__}")
            continue
        if find_lone_surrogate(row) is not None:
            problems.add(source, number, (), "text holds a lone UTF-16 surrogate escape (\\ud800-\\udfff), "
                                             "which is no character")
            continue
        yield RowAt(source, number, number, True), row


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different: a repeated key is refused, never the last one taken."""
    row = dict(pairs)
    if len(row) != len(pairs):
        seen: set[str] = set()
        repeated = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        raise ValueError(f"the key {repeated!r} appears more than once")
    return row


def _refuse_constant(token: str) -> float:
    raise ValueError(f"{token} is not a number JSON allows (only finite numbers)")


def _short(error: Exception) -> str:
    if isinstance(error, RecursionError):
        return "nested too deeply"
    text = str(error)
    return "an integer is too large" if "digits" in text and "limit" in text else text


def rows_from_file(path: Path, source: str, problems: Problems, shares: ShareIndex | None = None,
                   required: tuple[str, ...] = REQUIRED) -> Generator[Row, None, None]:
    """The rows of a CSV or JSON Lines job file; ``source`` (the scenario) is named when the file type is wrong."""
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl", ".ndjson"):
        problems.add(source, None, ("jobs",), f"unsupported job file type {path.suffix!r}; use .csv or .jsonl")
        return
    try:
        binary = input_files.open_input(path, input_files.JOBS)
    except input_files.InputFileError as error:
        problems.add_rendered([str(error)])
        return
    with io.TextIOWrapper(binary, encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle) if suffix == ".csv" else None
        try:
            yield from (_csv_rows(reader, path, problems, shares, required) if reader
                        else _jsonl_rows(handle, path, problems))
        except UnicodeDecodeError:
            problems.add_rendered([input_files.locate_bad_utf8(path, input_files.JOBS)])
        except csv.Error as error:  # a field over the csv module's size limit
            problems.add(str(path), reader.line_num if reader else None, (), f"cannot read CSV: {error}")


def _row_at(where: RowAt | tuple[str, int]) -> RowAt:
    return where if isinstance(where, RowAt) else RowAt(where[0], where[1], where[1], True)


def collect_jobs(rows: Iterable[Row], shares: ShareIndex, problems: Problems, named: set[str] | None = None,
                 extras: Extras | None = None) -> list[JobSpec]:
    """Valid jobs; ``named`` collects every name written, valid or not (actions may refer to them)."""
    jobs: list[JobSpec] = []
    seen: set[str] = set()

    def unique(name: object, where: RowAt | tuple[str, int]) -> bool:
        """Whether ``name`` is new (a duplicate is reported even when the row has other errors)."""
        if isinstance(name, str) and name:
            if name in seen:
                at = _row_at(where)
                problems.add(at.source, at.line, ("jobs", Named(at.position, name), "name"),
                             f"duplicate job name {name!r}")
                return False
            seen.add(name)
        return True

    for where, row in rows:
        if isinstance(row, Batch):
            names = [spec.name for spec in row.specs]
            batch_names = set(names)
            if len(batch_names) == len(names) and seen.isdisjoint(batch_names):  # the common case: in bulk
                seen |= batch_names
                jobs += row.specs
                continue
            source = where[0]
            jobs += [spec for line, spec in enumerate(row.specs, start=row.first) if unique(spec.name, (source, line))]
            continue
        spec = job_from_row(row, _row_at(where), shares, problems, extras)
        name = row.get("name")
        if named is not None and isinstance(name, str):
            named.add(name)
        if unique(name, where) and spec is not None:
            jobs.append(spec)
    return jobs


class AnyShare(ShareIndex):
    """Resolves every share name to itself with no known instance types: for a job file read without a topology
    (``fit``), where every other rule of the reader still holds. A ``training_plan`` must name one of ``plans``'s
    training plans when given, else any text is taken (``fit`` then says what it does with it)."""

    def __init__(self, plans: Topology | None = None) -> None:
        super().__init__(Topology(training_plans=plans.training_plans) if plans is not None else Topology())
        self.plans_known = plans is not None

    def resolve(self, ref: str) -> tuple[str, tuple[str, ...]] | str:
        return ref, ()


def check_job_file(path: Path, topology: Topology | None = None, required: tuple[str, ...] = REQUIRED,
                   csv_cells: bool = True, plans: Topology | None = None) -> None:
    """Every rule the simulator reads a job file by (header, types, ranges, JSON Lines syntax), without keeping the
    jobs: ``fit`` reads its columns another way, and refuses what ``simulate`` refuses. ``LoadError`` otherwise.

    ``csv_cells=False`` checks a CSV file's header only: the caller checks its cells a column at a time against
    the same bounds (``fit``: a million rows one by one would cost five times the fit). Without ``topology``, a
    row's ``training_plan`` is checked against ``plans``'s training plans when given."""
    problems = Problems()
    shares = ShareIndex(topology) if topology is not None else AnyShare(plans)
    header_only = not csv_cells and path.suffix.lower() == ".csv"
    with gc_paused():
        rows = rows_from_file(path, str(path), problems, shares, required)
        for where, row in rows:
            if header_only:  # the header was checked before the first row came
                break
            if not isinstance(row, Batch):
                job_from_row(row, _row_at(where), shares, problems, Extras(), required)
            if problems.total >= MAX_PROBLEMS:
                break
        rows.close()
    problems.raise_if_any()


def load_jobs(path: Path, topology: Topology, extras: Extras | None = None) -> list[JobSpec]:
    """Read a CSV or JSON Lines workload on its own (``generate`` and ``history`` write these)."""
    problems = Problems()
    shares = ShareIndex(topology)
    with gc_paused():
        jobs = collect_jobs(rows_from_file(path, str(path), problems, shares), shares, problems, extras=extras)
    problems.raise_if_any()
    return jobs
