"""``--state FILE``: the endpoint's inputs in SQLite, and checkpoints of its state, restored on restart.

The simulator is deterministic, so the state is its inputs: the initial topology, every
call that changed something (operation, parameters, the identifiers it generated, and
the simulated time it happened at), and the clock. Replaying them rebuilds resources,
jobs (with their ARNs), their histories and the clock exactly. A replay costs as much as
the calls did, so every ``checkpoint_every`` calls the state itself is written as plain
data (``checkpoint``): a restart loads the last checkpoint and replays only the calls after
it. A checkpoint is incremental (job rows that changed, appended history), so its cost
follows the calls since the last one, not the size of the state. No Python object is
pickled, and the file can be read with any SQLite client.
"""

from __future__ import annotations

import json
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from policy_engine.foundation.model import Topology


def _exists(path: Path) -> bool:
    """Whether ``path`` exists; one that is not a regular file (a device, a FIFO, a folder) is refused before SQLite
    opens it, so no ``-journal`` or ``-wal`` file is created beside it."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return False
    except OSError as error:
        raise StateFileError(f"{path}: cannot open the state file: {error.strerror or error}") from None
    if not stat.S_ISREG(mode):
        raise StateFileError(f"{path}: not a regular file; a state file is a plain file (it is created if missing)")
    return True

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    origin_ms INTEGER NOT NULL,      -- epoch milliseconds of simulated second 0
    clock REAL NOT NULL,             -- simulated seconds when last saved
    topology TEXT                    -- JSON of the topology the account started with (NULL: empty account)
);
CREATE TABLE IF NOT EXISTS calls (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,                -- simulated seconds
    operation TEXT NOT NULL,         -- API operation, or a control operation (advance, reset, topology)
    params TEXT NOT NULL,            -- JSON
    generated TEXT NOT NULL          -- JSON list of identifiers the call created (job ids, its trail event id)
);
CREATE TABLE IF NOT EXISTS checkpoint (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    call_seq INTEGER NOT NULL,       -- the last call (calls.seq) the checkpoint includes
    state TEXT NOT NULL              -- JSON: resources, tags, the engine's clock and timers, counts (checkpoint.py)
);
CREATE TABLE IF NOT EXISTS checkpoint_jobs (
    seq INTEGER PRIMARY KEY,         -- the job's sequence number
    record TEXT NOT NULL,            -- JSON: the job as the API reports it
    engine TEXT                      -- JSON: its scheduling state while unfinished (NULL once finished)
);
CREATE TABLE IF NOT EXISTS checkpoint_log (
    kind TEXT NOT NULL,              -- trail, events, updates or terminations: histories that only grow
    first INTEGER NOT NULL,          -- index of the chunk's first row in its history
    rows TEXT NOT NULL,              -- JSON list
    PRIMARY KEY (kind, first)
);
"""

#: What a checkpoint holds besides its state: job rows ``(seq, record, engine or None)`` and, per history,
#: the rows appended since the previous one ``(kind, first index, rows)``.
JobRow = tuple[int, str, str | None]
LogChunk = tuple[str, int, list[Any]]


#: ``PRAGMA application_id`` of a state file ("BQst"): what tells it from another application's SQLite database.
APPLICATION_ID = 0x42517374
#: ``PRAGMA user_version``: the layout above. A file of a later version is refused, never rewritten.
SCHEMA_VERSION = 1
#: The tables and the ``meta`` columns of the layout, for adopting a file written before the id was stamped.
_TABLES = frozenset({"meta", "calls", "checkpoint", "checkpoint_jobs", "checkpoint_log", "sqlite_sequence"})
_META_COLUMNS = ("id", "origin_ms", "clock", "topology")


class StateFileError(Exception):
    pass


class Store:
    """The state file: created and stamped when new; adopted only when it is this project's (its application id,
    or the project's own layout from before the id was stamped); anything else is refused untouched."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        existing = _exists(self.path)
        try:
            if existing:
                self._refuse_foreign()
            self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executescript(_SCHEMA)  # commits
            self.db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except sqlite3.DatabaseError as error:
            raise StateFileError(f"{self.path}: not a batch-quota state file ({error})") from None

    def _refuse_foreign(self) -> None:
        """Read an existing file without writing to it: refuse another application's database or a later layout."""
        probe = sqlite3.connect(f"{self.path.absolute().as_uri()}?mode=ro", uri=True)
        try:
            application_id = probe.execute("PRAGMA application_id").fetchone()[0]
            version = probe.execute("PRAGMA user_version").fetchone()[0]
            tables = {name for (name,) in probe.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            meta = tuple(row[1] for row in probe.execute("PRAGMA table_info(meta)"))
        finally:
            probe.close()
        if application_id == APPLICATION_ID:
            if version > SCHEMA_VERSION:
                raise StateFileError(f"{self.path}: a state file of a later batch-quota (schema version {version}, "
                                     f"this one reads {SCHEMA_VERSION}); use that version or another file")
            return
        if application_id != 0:
            raise StateFileError(f"{self.path}: not a batch-quota state file (another application's SQLite database, "
                                 f"application id {application_id:#x}); nothing was changed")
        if tables and (not tables <= _TABLES or meta != _META_COLUMNS):
            foreign = sorted(tables - _TABLES) or ["meta"]
            raise StateFileError(f"{self.path}: not a batch-quota state file (another application's SQLite database: "
                                 f"table {foreign[0]!r} is not this project's); nothing was changed")

    def read_meta(self) -> tuple[int, float, Topology | None] | None:
        row = self.db.execute("SELECT origin_ms, clock, topology FROM meta WHERE id = 1").fetchone()
        if row is None:
            return None
        topology = None
        if row[2] is not None:
            from policy_engine.foundation.diagnostics import LoadError
            from policy_engine.inputs.loading import topology_from_data

            try:
                data = json.loads(row[2])
            except (ValueError, RecursionError) as error:  # garbage, or nested past the parser's stack
                why = "nested too deep" if isinstance(error, RecursionError) else f"not JSON: {error}"
                raise StateFileError(f"{self.path}: cannot restore the state: meta.topology is {why}") from None
            try:
                topology = topology_from_data(data, f"{self.path} (topology)")
            except LoadError as error:
                raise StateFileError(f"{self.path}: cannot restore the state: meta.topology: "
                                     f"{'; '.join(error.problems)}") from None
        return row[0], row[1], topology

    def write_meta(self, origin_ms: int, clock: float, topology: Topology | None) -> None:
        text = None if topology is None else json.dumps(topology.model_dump(mode="json", exclude_defaults=True))
        self.db.execute("INSERT OR REPLACE INTO meta (id, origin_ms, clock, topology) VALUES (1, ?, ?, ?)",
                        (origin_ms, clock, text))

    def append(self, at: float, operation: str, params: dict[str, Any], generated: list[str]) -> int:
        """Log one call (committed before the call is answered); its sequence number."""
        self.db.execute("BEGIN")
        cursor = self.db.execute("INSERT INTO calls (at, operation, params, generated) VALUES (?, ?, ?, ?)",
                                 (at, operation, json.dumps(params), json.dumps(generated)))
        self.db.execute("UPDATE meta SET clock = MAX(clock, ?) WHERE id = 1", (at,))
        self.db.execute("COMMIT")
        return cursor.lastrowid or 0

    def write_checkpoint(self, call_seq: int, state: dict[str, Any], jobs: list[JobRow],
                         chunks: list[LogChunk]) -> None:
        """One checkpoint, in one transaction: a crash keeps the previous one whole."""
        db = self.db
        db.execute("BEGIN")
        try:
            db.executemany("INSERT OR REPLACE INTO checkpoint_jobs (seq, record, engine) VALUES (?, ?, ?)", jobs)
            db.executemany("INSERT OR REPLACE INTO checkpoint_log (kind, first, rows) VALUES (?, ?, ?)",
                           [(kind, first, json.dumps(rows, separators=(",", ":"))) for kind, first, rows in chunks
                            if rows])
            db.execute("INSERT OR REPLACE INTO checkpoint (id, call_seq, state) VALUES (1, ?, ?)",
                       (call_seq, json.dumps(state, separators=(",", ":"))))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def read_checkpoint(self) -> tuple[int, dict[str, Any]] | None:
        """The last checkpoint's call sequence number and state, or ``None``."""
        row = self.db.execute("SELECT call_seq, state FROM checkpoint WHERE id = 1").fetchone()
        return None if row is None else (row[0], json.loads(row[1]))

    def checkpoint_jobs(self) -> Iterator[tuple[int, str, str | None]]:
        """Every job row, in sequence order."""
        yield from self.db.execute("SELECT seq, record, engine FROM checkpoint_jobs ORDER BY seq")

    def checkpoint_log(self, kind: str, count: int) -> list[Any]:
        """The first ``count`` rows of one history."""
        texts = [text for (text,) in self.db.execute(
            "SELECT rows FROM checkpoint_log WHERE kind = ? ORDER BY first", (kind,))]
        rows: list[Any] = []
        for chunk in orjson.loads(f"[{','.join(texts)}]"):  # one JSON document: faster than one per chunk
            rows += chunk
        del rows[count:]
        return rows

    def checkpoint_log_length(self, kind: str) -> int:
        """How many rows one history's chunks hold, counted by SQLite, which also checks that each chunk is JSON
        (``sqlite3.DatabaseError`` when one is not): cheaper than reading them."""
        row = self.db.execute("SELECT SUM(json_array_length(rows)) FROM checkpoint_log WHERE kind = ?",
                              (kind,)).fetchone()
        return int(row[0] or 0)

    def save_clock(self, clock: float) -> None:
        self.db.execute("UPDATE meta SET clock = MAX(clock, ?) WHERE id = 1", (clock,))

    def entries(self, after: int = 0) -> Iterator[tuple[int, float, str, dict[str, Any], list[str]]]:
        """The logged calls after sequence number ``after``, in order, each with its sequence number."""
        for seq, at, operation, params, generated in self.db.execute(
                "SELECT seq, at, operation, params, generated FROM calls WHERE seq > ? ORDER BY seq", (after,)):
            yield seq, at, operation, json.loads(params), json.loads(generated)

    def drop_checkpoint(self) -> None:
        """Forget the checkpoint (the log alone rebuilds the state; the next checkpoint is written whole)."""
        for table in ("checkpoint", "checkpoint_jobs", "checkpoint_log"):
            self.db.execute(f"DELETE FROM {table}")

    def clear(self) -> None:
        self.db.execute("DELETE FROM calls")
        self.drop_checkpoint()

    def close(self) -> None:
        self.db.close()
