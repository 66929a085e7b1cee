"""``serve --state FILE``: only the project's own state file is opened for writing (``endpoint/store.py``).

A state file carries ``PRAGMA application_id`` and a schema version; an existing file of the project's layout
without the id (written before it) is adopted and stamped; anything else is refused untouched. Device nodes
are copies made inside the test's temporary folder (root only), never the machine's /dev.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.adapters.endpoint.store import APPLICATION_ID, SCHEMA_VERSION, StateFileError, Store
from policy_engine.cli import main
from policy_engine.inputs.examples import example_topology


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def serve(state: Path) -> tuple[int, list[str]]:
    """``serve --state`` on a closed loop: a refused file exits 2 before anything listens."""
    result = CliRunner().invoke(main, ["serve", "--state", str(state), "--port", "0"])
    return result.exit_code, result.stderr.strip().splitlines()


def test_a_new_state_file_is_stamped_with_the_id_and_version(tmp_path):
    path = tmp_path / "state.sqlite"
    Store(path).db.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_another_applications_database_is_refused_untouched(tmp_path):
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("INSERT INTO customers (name) VALUES ('kept')")
    with_meta = tmp_path / "meta.sqlite"  # its own meta table: once an OperationalError
    with sqlite3.connect(with_meta) as db:
        db.execute("CREATE TABLE meta (key TEXT, value TEXT)")
    stamped = tmp_path / "stamped.sqlite"  # another application's id
    with sqlite3.connect(stamped) as db:
        db.execute("PRAGMA application_id = 1234")
        db.execute("CREATE TABLE meta (id INTEGER PRIMARY KEY, origin_ms INTEGER, clock REAL, topology TEXT)")
    for path, why in ((other, "table 'customers'"), (with_meta, "table 'meta'"), (stamped, "application id 0x4d2")):
        before = digest(path)
        code, lines = serve(path)
        assert code == 2 and len(lines) == 1 and "not a batch-quota state file" in lines[0] and why in lines[0], lines
        assert digest(path) == before
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(path.name)) == [path.name]


def test_a_state_file_of_a_later_version_is_refused(tmp_path):
    path = tmp_path / "state.sqlite"
    Store(path).db.close()
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StateFileError, match="later batch-quota"):
        Store(path)


def test_the_projects_own_layout_without_an_id_is_adopted_and_stamped(tmp_path):
    path = tmp_path / "old.sqlite"
    store = Store(path)
    store.write_meta(1_700_000_000_000, 42.0, example_topology())
    store.db.close()
    with sqlite3.connect(path) as db:  # as written before the id was stamped
        db.execute("PRAGMA application_id = 0")
        db.execute("PRAGMA user_version = 0")
    adopted = Store(path)
    meta = adopted.read_meta()
    assert meta is not None and meta[1] == 42.0 and meta[2] == example_topology()
    assert adopted.db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID


def test_a_device_or_fifo_is_refused_and_nothing_is_created_beside_it(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    paths = [fifo]
    if os.geteuid() == 0 and os.path.exists("/dev/null"):
        null = tmp_path / "null"
        os.mknod(null, stat.S_IFCHR | 0o666, os.stat("/dev/null").st_rdev)
        paths.append(null)
    for path in paths:
        code, lines = serve(path)
        assert code == 2 and lines == [f"error: {path}: not a regular file; a state file is a plain file (it is "
                                       "created if missing)"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)  # no -journal, no -wal


@pytest.mark.parametrize("topology", ["{not json", "[" * 100_000 + "]" * 100_000, json.dumps({"job_queues": 7})])
def test_a_damaged_stored_topology_is_cannot_restore_the_state(tmp_path, topology):
    path = tmp_path / "state.sqlite"
    store = Store(path)
    store.write_meta(0, 0.0, None)
    store.db.execute("UPDATE meta SET topology = ?", (topology,))
    store.db.close()
    code, lines = serve(path)
    assert code == 2 and len(lines) == 1 and lines[0].startswith(f"error: {path}: cannot restore the state: "), lines
