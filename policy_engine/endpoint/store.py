"""``--state FILE``: the endpoint's inputs in SQLite, replayed on restart.

The simulator is deterministic, so the state is its inputs: the initial topology, every
call that changed something (operation, parameters, the identifiers it generated, and
the simulated time it happened at), and the clock. Replaying them rebuilds resources,
jobs (with their ARNs), their histories and the clock exactly; no Python object is
pickled, and the file can be read with any SQLite client.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from policy_engine.model import Topology

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
    generated TEXT NOT NULL          -- JSON list of identifiers the call created (job ids)
);
"""


class StateFileError(Exception):
    pass


class Store:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as error:
            raise StateFileError(f"{self.path}: not a batch-quota state file ({error})") from None

    def read_meta(self) -> tuple[int, float, Topology | None] | None:
        row = self.db.execute("SELECT origin_ms, clock, topology FROM meta WHERE id = 1").fetchone()
        if row is None:
            return None
        topology = None
        if row[2] is not None:
            from policy_engine.loading import topology_from_data

            topology = topology_from_data(json.loads(row[2]), f"{self.path} (topology)")
        return row[0], row[1], topology

    def write_meta(self, origin_ms: int, clock: float, topology: Topology | None) -> None:
        text = None if topology is None else json.dumps(topology.model_dump(mode="json", exclude_defaults=True))
        self.db.execute("INSERT OR REPLACE INTO meta (id, origin_ms, clock, topology) VALUES (1, ?, ?, ?)",
                        (origin_ms, clock, text))

    def append(self, at: float, operation: str, params: dict[str, Any], generated: list[str]) -> None:
        self.db.execute("BEGIN")
        self.db.execute("INSERT INTO calls (at, operation, params, generated) VALUES (?, ?, ?, ?)",
                        (at, operation, json.dumps(params), json.dumps(generated)))
        self.db.execute("UPDATE meta SET clock = MAX(clock, ?) WHERE id = 1", (at,))
        self.db.execute("COMMIT")

    def save_clock(self, clock: float) -> None:
        self.db.execute("UPDATE meta SET clock = MAX(clock, ?) WHERE id = 1", (clock,))

    def entries(self) -> Iterator[tuple[float, str, dict[str, Any], list[str]]]:
        for at, operation, params, generated in self.db.execute(
                "SELECT at, operation, params, generated FROM calls ORDER BY seq"):
            yield at, operation, json.loads(params), json.loads(generated)

    def clear(self) -> None:
        self.db.execute("DELETE FROM calls")

    def close(self) -> None:
        self.db.close()
