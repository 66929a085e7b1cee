"""Sweep results as a Parquet dataset: one part file per batch of finished runs, and resume.

One row per run: its grid index and key, one typed column per varied field, status, findings
and error, the cluster-wide figures, one column per share, instance type and figure
(``training/QS1[ml.g5.xlarge].wait_p95``), and ``summary``/``shares`` as simulate's JSON text so
the JSON output is rebuilt exactly on resume. The schema is fixed before the first run, so every part
file has the same columns and ``pandas.read_parquet(DIR)`` / ``polars.read_parquet(DIR/*.parquet)``
open the directory directly. A part file is written under a dot name and renamed, so a reader never
sees half of one; ``_sweep.json`` (ignored by Parquet readers) records what the sweep varies.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from policy_engine.foundation.model import Topology, share_id
from policy_engine.foundation.output_files import OutputFolder
from policy_engine.sweep.expressions import SHARE_METRICS, SUMMARY_METRICS
from policy_engine.sweep.grammar import Axis
from policy_engine.sweep.run_record import RunRecord
from policy_engine.sweep.run_status import RunStatus

if TYPE_CHECKING:
    import pyarrow as pa

MANIFEST = "_sweep.json"
PART = "part-{:05d}.parquet"
_INTEGER_FIELDS = {"borrow_limit", "capacity", "transfer"}
_BOOLEAN_FIELDS = {"in_share_preemption", "backfill"}
_INTEGER_METRICS = {"jobs", "preemptions"}


class DatasetError(RuntimeError):
    """The output directory cannot be used as asked (exit 2)."""


def share_pairs(topology: Topology, axes: Sequence[Axis]) -> list[tuple[str, str]]:
    """Every (share, instance type) a candidate can report, in topology order (capacity axes may add types)."""
    pairs = [(share_id(q, s), t) for q, s in topology.shares() for t in s.capacity]
    for axis in axes:
        moved = [axis.target] if axis.kind == "share" and axis.field == "capacity" else \
            [axis.target, axis.partner or ""] if axis.kind == "transfer" else []
        for target in moved:  # a capacity axis or a transfer may give a share a type it had no limit for
            if (target, axis.instance_type) not in pairs:
                pairs.append((target, axis.instance_type or ""))
    return pairs


def share_column(share: str, instance_type: str, metric: str) -> str:
    return f"{share}[{instance_type}].{metric}"


def _axis_type(axis: Axis) -> pa.DataType:
    import pyarrow as pa

    if axis.kind == "workload" or axis.field in ("startup_delay", "preemption_delay", "min_runtime"):
        return pa.float64()
    if axis.field in _INTEGER_FIELDS:
        return pa.int64()
    if axis.field in _BOOLEAN_FIELDS:
        return pa.bool_()
    return pa.string()


def schema(axes: Sequence[Axis], pairs: Sequence[tuple[str, str]]) -> pa.Schema:
    import pyarrow as pa

    fields = [pa.field("run", pa.int64()), pa.field("key", pa.string())]
    fields += [pa.field(axis.path, _axis_type(axis)) for axis in axes]
    fields += [pa.field(name, pa.string()) for name in ("status", "error", "findings")]
    fields += [pa.field(m, pa.int64() if m in _INTEGER_METRICS else pa.float64()) for m in SUMMARY_METRICS]
    for share, instance_type in pairs:
        fields += [pa.field(share_column(share, instance_type, m), pa.int64() if m in _INTEGER_METRICS
                            else pa.float64()) for m in SHARE_METRICS]
    fields += [pa.field("summary", pa.string()), pa.field("shares", pa.string()), pa.field("costs", pa.string()),
               pa.field("targets", pa.string())]
    return pa.schema(fields)


def flat_row(record: RunRecord, key: str, axes: Sequence[Axis],
             pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """The run as one flat row (the CSV output and the Parquet columns, without the JSON text)."""
    row: dict[str, Any] = {"run": record.index, "key": key}
    row.update({axis.path: record.values[axis.path] for axis in axes})
    row.update(status=record.status, error=record.error, findings=json.dumps(list(record.findings)))
    summary = record.summary
    row.update({metric: summary.get(metric) for metric in SUMMARY_METRICS})
    by_pair = {(entry["share"], entry["instance_type"]): entry for entry in record.shares}
    for share, instance_type in pairs:
        entry = by_pair.get((share, instance_type), {})
        row.update({share_column(share, instance_type, m): entry.get(m) for m in SHARE_METRICS})
    return row


class ResultsDataset:
    """Appends finished runs as part files; knows which runs a previous, interrupted sweep finished."""

    def __init__(self, directory: Path, axes: Sequence[Axis], pairs: Sequence[tuple[str, str]],
                 manifest: dict[str, Any], resume: bool):
        self.directory = directory
        self.axes, self.pairs = list(axes), list(pairs)
        self.schema = schema(axes, pairs)
        self.written: dict[str, RunRecord] = {}
        self._next_part = 1
        if directory.is_symlink():
            raise DatasetError(f"{directory}: cannot write results: is a symbolic link; give the real folder")
        existing = sorted(directory.glob("part-*.parquet")) if directory.is_dir() else []
        manifest_path = directory / MANIFEST
        if existing and not resume:
            raise DatasetError(f"{directory}: already holds sweep results; pass --resume to continue that "
                               "sweep or choose an empty directory")
        if resume and manifest_path.exists():  # a manifest alone is a sweep stopped before its first results
            self._check_manifest(manifest_path, manifest)
            self._load(existing)
        elif existing:
            raise DatasetError(f"{directory}: holds part files but no {MANIFEST}: not a sweep this command wrote; "
                               "choose another directory")
        try:
            self.folder = OutputFolder(directory)  # follows no symlink: a planted _sweep.json -> elsewhere is refused
            self.folder.write_text(MANIFEST, json.dumps(manifest, indent=2) + "\n")
        except OSError as error:
            raise DatasetError(f"{directory}: cannot write results: {error.strerror or error}") from None

    def _check_manifest(self, path: Path, manifest: dict[str, Any]) -> None:
        try:
            previous = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise DatasetError(f"{path}: cannot read the sweep manifest: {error}") from None
        if previous.get("vary") != manifest["vary"]:
            raise DatasetError(f"{self.directory}: --resume with other --vary fields or values than the sweep "
                               f"there ({', '.join(a['path'] for a in previous.get('vary', []))}); "
                               "use the same --vary arguments or another directory")
        if previous.get("scenario_sha256") != manifest["scenario_sha256"]:
            raise DatasetError(f"{self.directory}: --resume of a sweep of another scenario (the scenario, its "
                               "topology or its workload changed since); use another directory")

    def _load(self, parts: Sequence[Path]) -> None:
        import pyarrow.parquet as pq

        for part in parts:
            try:
                table = pq.read_table(part)
            except Exception as error:  # pyarrow raises several types for a damaged file
                raise DatasetError(f"{part}: cannot read this part file: {error}") from None
            for row in table.to_pylist():
                self.written[row["key"]] = self._record(part, row)
            number = int(part.stem.split("-")[1])
            self._next_part = max(self._next_part, number + 1)

    def _record(self, part: Path, row: dict[str, Any]) -> RunRecord:
        """One row read back as the run it records; a row no sweep wrote is refused in one line (exit 2)."""
        if row.get("status") not in tuple(RunStatus):
            raise DatasetError(f"{part}: run {row.get('run')} has status {row.get('status')!r}, not one of "
                               f"{', '.join(RunStatus)}: the file was not written by a sweep")
        try:
            return RunRecord(
                index=int(row["run"]),
                values={axis.path: row[axis.path] for axis in self.axes},
                status=RunStatus(row["status"]),
                findings=tuple(json.loads(row["findings"])),
                error=row["error"],
                summary=json.loads(row["summary"]),
                shares=tuple(json.loads(row["shares"])),
                costs=json.loads(row["costs"]) if row.get("costs") else None,  # the ledger cost metrics price
                targets=tuple(json.loads(row.get("targets") or "[]")),
            )
        except (KeyError, TypeError, ValueError) as error:  # a column missing, or not the JSON text a sweep writes
            what = f"no column {error}" if isinstance(error, KeyError) else f"{type(error).__name__}: {error}"
            raise DatasetError(f"{part}: run {row.get('run')} cannot be read back ({what}): the file was not "
                               "written by a sweep") from None

    def append(self, batch: Iterable[tuple[str, RunRecord]]) -> int:
        """Write one part file of ``(key, record)``; a key already written is skipped. Returns rows written."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        fresh = {key: record for key, record in batch if key not in self.written}
        if not fresh:
            return 0
        rows = []
        for key, record in fresh.items():
            row = flat_row(record, key, self.axes, self.pairs)
            row.update(summary=json.dumps(record.summary), shares=json.dumps(list(record.shares)),
                       costs=json.dumps(record.costs) if record.costs else None,
                       targets=json.dumps(list(record.targets)))
            rows.append(row)
        table = pa.Table.from_pylist(rows, schema=self.schema)
        name = PART.format(self._next_part)
        temporary = f".{name}.tmp"
        with self.folder.open(temporary) as handle:
            pq.write_table(table, handle)
        self.folder.replace(temporary, name)
        self._next_part += 1
        self.written.update(fresh)  # only once the part file is in place (an interrupted write is retried)
        return len(rows)
