"""Outputs never clobber what the user did not name as a plain output (``policy_engine/foundation/output_files.py``).

Device nodes, FIFOs and symlinks are made inside the test's temporary folder (a device node as a copy of
/dev/full's or /dev/null's major and minor numbers, which needs root), never the machine's /dev.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli import main
from policy_engine.foundation.output_files import OutputError, OutputFolder, atomic_write, open_output
from tests.builders import scenario_files

ROOT = Path(__file__).resolve().parents[3]


def device_copy(folder: Path, name: str, of: str) -> Path:
    """A character device inside ``folder`` with the numbers of ``of`` (/dev/full, /dev/null); skips without root."""
    if os.geteuid() != 0 or not os.path.exists(of):
        pytest.skip("making a device node needs root")
    numbers = os.stat(of).st_rdev
    path = folder / name
    os.mknod(path, stat.S_IFCHR | 0o666, numbers)
    return path


def test_a_device_target_is_written_in_place_and_a_full_one_is_an_error_never_replaced(tmp_path):
    full = device_copy(tmp_path, "full", "/dev/full")
    with pytest.raises(OutputError) as error, atomic_write(full) as handle:
        handle.write("x" * 100)
    assert "No space left on device" in error.value.line
    assert stat.S_ISCHR(os.stat(full).st_mode)  # still the device: never replaced by a regular file
    null = device_copy(tmp_path, "null", "/dev/null")
    with atomic_write(null) as handle:
        handle.write("discarded")
    assert stat.S_ISCHR(os.stat(null).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full", "null"]  # no temporary file left either


def test_a_fifo_target_with_no_reader_is_refused_at_once_and_one_with_a_reader_is_written(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    began = time.monotonic()
    with pytest.raises(OutputError) as error, atomic_write(fifo) as handle:
        handle.write("nobody reads this")
    assert "no reader" in error.value.line and time.monotonic() - began < 5
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    time.sleep(0.2)  # the reader opens the FIFO first, as a shell's `cat pipe &` would
    with atomic_write(fifo) as handle:
        handle.write("read by the reader\n")
    reader.join(5)
    assert received == [b"read by the reader\n"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_regular_target_is_still_replaced_whole(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    with atomic_write(target) as handle:
        handle.write("new\n")
    assert target.read_text() == "new\n" and sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_a_folder_output_follows_no_symlink_and_waits_on_no_fifo(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    victim = elsewhere / "victim.html"
    victim.write_text("keep me")
    linked = tmp_path / "linked"
    linked.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(OutputError, match="symbolic link"):
        OutputFolder(linked)
    report = tmp_path / "report"
    report.mkdir()
    (report / "index.html").symlink_to(Path("..") / "elsewhere" / "victim.html")
    os.mkfifo(report / "chart.png")
    with OutputFolder(report) as folder:
        with pytest.raises(OutputError, match=r"index\.html is a symbolic link"):
            folder.write_text("index.html", "overwritten")
        with pytest.raises(OutputError, match=r"chart\.png is not a regular file"):
            folder.write_bytes("chart.png", b"png")
        assert folder.write_text("fresh.html", "ok") == report / "fresh.html"
    assert victim.read_text() == "keep me" and (report / "fresh.html").read_text() == "ok"


def test_open_output_refuses_a_folder_and_a_fifo_with_no_reader(tmp_path):
    fifo = tmp_path / "events"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match="no reader"):
        open_output(fifo)
    with pytest.raises(OutputError, match="is a folder"):
        open_output(tmp_path)


@pytest.fixture
def sweep_scenario(tmp_path):
    return scenario_files(tmp_path)


def _planted(tmp_path: Path, folder: str, name: str) -> Path:
    """``tmp/folder/name -> ../outside/victim``: a link someone planted inside an existing output folder."""
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    victim = outside / f"victim-{name}"
    victim.write_text("keep me")
    (tmp_path / folder).mkdir()
    (tmp_path / folder / name).symlink_to(Path("..") / "outside" / victim.name)
    return victim


@pytest.mark.parametrize("command", ["sweep", "tune"])
def test_sweep_and_tune_reports_refuse_a_symlinked_folder_and_a_planted_link(tmp_path, sweep_scenario, command):
    base = [command, str(sweep_scenario), "--vary", "QS1.borrow_limit=0,100", "--workers", "1", "--quiet"]
    if command == "tune":
        base += ["--budget", "2"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "linked").symlink_to(elsewhere, target_is_directory=True)
    result = CliRunner().invoke(main, [*base, "--report", str(tmp_path / "linked")])
    assert result.exit_code == 2 and "symbolic link" in result.stderr and list(elsewhere.iterdir()) == []
    victim = _planted(tmp_path, "report", "index.html")
    result = CliRunner().invoke(main, [*base, "--report", str(tmp_path / "report")])
    assert result.exit_code == 2 and "index.html is a symbolic link" in result.stderr, result.output
    assert victim.read_text() == "keep me"


def test_sweep_out_refuses_a_planted_manifest_link(tmp_path, sweep_scenario):
    victim = _planted(tmp_path, "results", "_sweep.json")
    result = CliRunner().invoke(main, ["sweep", str(sweep_scenario), "--vary", "QS1.borrow_limit=0,100",
                                       "--workers", "1", "--quiet", "--out", str(tmp_path / "results")])
    assert result.exit_code == 2 and "_sweep.json is a symbolic link" in result.stderr, result.output
    assert victim.read_text() == "keep me"


def test_simulate_events_to_a_fifo_nobody_reads_is_one_line_at_once(tmp_path, sweep_scenario):
    fifo = tmp_path / "events.jsonl"
    os.mkfifo(fifo)
    began = time.monotonic()
    result = CliRunner().invoke(main, ["simulate", str(sweep_scenario), "--events", str(fifo), "--quiet"])
    assert result.exit_code == 2 and time.monotonic() - began < 30
    assert result.stderr.strip().splitlines() == [
        f"error: {fifo}: cannot write events file: a FIFO or socket with no reader; start the reader first"]


def test_fit_output_onto_a_device_copy_is_written_in_place_never_replaced(tmp_path):
    jobs = tmp_path / "jobs.csv"
    jobs.write_text("name,share,submit_at,duration\n" + "".join(f"j{i},team,{i * 60},{600 + i}\n"
                                                               for i in range(40)))
    null = device_copy(tmp_path, "profile.yaml", "/dev/null")
    result = CliRunner().invoke(main, ["fit", str(jobs), "-o", str(null)])
    assert result.exit_code == 0, result.output
    assert stat.S_ISCHR(os.stat(null).st_mode)
    full = device_copy(tmp_path, "full.yaml", "/dev/full")
    result = CliRunner().invoke(main, ["fit", str(jobs), "-o", str(full)])
    assert result.exit_code == 2 and "No space left on device" in result.stderr
    assert stat.S_ISCHR(os.stat(full).st_mode)


@pytest.mark.parametrize("name", ["jobs.csv", "jobs.jsonl", "graph.dot", "graph.svg"])
def test_generate_and_graph_outputs_to_a_fifo_nobody_reads_are_one_line_at_once(tmp_path, name):
    fifo = tmp_path / name
    os.mkfifo(fifo)
    command = ["generate", "-o", str(fifo), "--jobs", "5"] if name.startswith("jobs") else ["graph", "-o", str(fifo)]
    began = time.monotonic()
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 2 and time.monotonic() - began < 30, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and "no reader" in result.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
