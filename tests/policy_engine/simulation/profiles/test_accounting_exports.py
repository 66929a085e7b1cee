"""A team moving from Slurm or reading a public trace brings its own accounting: the example converters write
job files ``fit`` reads, with the documented mapping (docs/workloads.md)."""

from __future__ import annotations

import csv
import gzip
import importlib.util
import json
import random
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from click.testing import CliRunner

from policy_engine.cli.app import main

ROOT = Path(__file__).resolve().parents[4]


def example(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(Path(path).stem, ROOT / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_rows(path: Path, columns: Sequence[str], rows: list[dict]) -> Path:
    """A converter's rows as the job file its ``main`` writes (a header, then a row a job)."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, columns)
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_a_slurm_sacct_export_becomes_a_job_file_fit_reads(tmp_path):
    rng = random.Random(4)
    lines = ["JobID|Account|NNodes|Submit|Start|End|ElapsedRaw|State|Priority"]
    for index in range(800):
        account = "vision" if index % 4 else "speech"
        state = "PREEMPTED" if index % 10 == 0 else "FAILED" if index % 25 == 1 else "COMPLETED"
        day, second = divmod(index * 1500, 86400)
        submit = f"2026-11-{1 + day:02d}T{second // 3600:02d}:{second % 3600 // 60:02d}:{second % 60:02d}"
        lines.append(f"{1000 + index}|{account}|{rng.choice([1, 1, 2, 4])}|{submit}|{submit}|{submit}|"
                     f"{round(rng.lognormvariate(8, 1))}|{state}|{rng.choice([1, 10])}")
        lines.append(f"{1000 + index}.batch|{account}|1|{submit}|{submit}|{submit}|1|COMPLETED|1")
    lines.append("99999|vision|two|2026-11-01T00:00:00|x|x|5|COMPLETED|1")
    converter = example("examples/slurm/sacct_to_jobs.py")
    rows, skipped = converter.convert(lines, "ml.p4d.24xlarge", "UTC")
    assert len(rows) == 800 and len(skipped) == 1 and "99999" in skipped[0]
    path = write_rows(tmp_path / "jobs.csv", converter.COLUMNS, rows)
    out = CliRunner().invoke(main, ["fit", str(path), "--format", "json"])
    assert out.exit_code == 0, out.output
    shares = json.loads(out.output)["shares"]
    assert set(shares) == {"vision", "speech"}
    vision = shares["vision"]
    assert vision["jobs"] == 600
    preempted = sum(1 for i in range(800) if i % 4 and i % 10 == 0)
    failed = sum(1 for i in range(800) if i % 4 and i % 10 != 0 and i % 25 == 1)
    assert vision["completed"] == 600 - preempted - failed
    assert vision["unknown_run_times"] == preempted


def test_philly_job_log_entries_become_shares_by_virtual_cluster_and_instances_by_gpus(tmp_path):
    rng = random.Random(9)
    jobs = []
    for index in range(400):
        gpus = rng.choice([1, 4, 8, 16])
        hour = index // 10
        start = f"2017-10-{1 + hour // 24:02d} {hour % 24:02d}:{(index % 10) * 5:02d}:00"
        end = f"2017-10-{1 + hour // 24:02d} {hour % 24:02d}:{(index % 10) * 5 + 3:02d}:30"
        jobs.append({"status": rng.choice(["Pass", "Pass", "Failed", "Killed"]), "vc": rng.choice(["ee9e8c", "6214e9"]),
                     "jobid": f"application_{index}", "submitted_time": start,
                     "attempts": [{"start_time": start, "end_time": end,
                                   "detail": [{"ip": f"m{n}", "gpus": [f"gpu{g}" for g in range(min(8, gpus))]}
                                              for n in range(max(1, gpus // 8))]}]})
    jobs.append({"status": "Killed", "vc": "ee9e8c", "jobid": "never", "submitted_time": "2017-10-01 00:00:00",
                 "attempts": []})
    converter = example("examples/philly/job_log_to_jobs.py")
    rows, skipped = converter.convert(jobs, "ml.p4d.24xlarge", 8, "America/Los_Angeles")
    assert skipped == {"never ran": 1} and len(rows) == 400
    by_name = {row["name"]: row for row in rows}
    for job in jobs[:-1]:
        gpus = sum(len(d["gpus"]) for d in job["attempts"][-1]["detail"])
        assert by_name[job["jobid"]]["instances"] == max(1, -(-gpus // 8))
        assert by_name[job["jobid"]]["duration"] == 210.0
    path = write_rows(tmp_path / "philly.csv", converter.COLUMNS, rows)
    out = CliRunner().invoke(main, ["fit", str(path), "--timezone", "America/Los_Angeles", "--format", "json"])
    assert out.exit_code == 0, out.output
    assert set(json.loads(out.output)["shares"]) == {"ee9e8c", "6214e9"}


def test_philly_records_with_only_the_last_attempt_and_unrecorded_times_convert_or_are_counted(tmp_path):
    converter = example("examples/philly/job_log_to_jobs.py")
    flattened = {"status": "Failed", "vc": "6214e9", "jobid": "flat", "submitted_time": "2017-11-05 01:30:00",
                 "start_time": "2017-11-05 01:40:00", "end_time": "2017-11-05 03:40:00",
                 "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1"]}, {"ip": "m2", "gpus": ["gpu0", "gpu1"]}]}
    unrecorded = {"status": "Pass", "vc": "6214e9", "jobid": "lost", "submitted_time": "2017-11-05 00:00:00",
                  "attempts": [{"start_time": "2017-11-05 00:01:00", "end_time": "None", "detail": []}]}
    path = tmp_path / "jobs.json.gz"
    path.write_bytes(gzip.compress(json.dumps([flattened, unrecorded]).encode()))
    rows, skipped = converter.convert(converter.read_job_log(path), "ml.p3.2xlarge", 1, "America/Los_Angeles")
    assert skipped == {"never ran": 1}
    (row,) = rows
    assert (row["share"], row["instances"], row["observed_status"], row["duration_known"]) == (
        "6214e9", 4, "FAILED", "true")
    assert row["duration"] == 3 * 3600.0  # 01:40 PDT to 03:40 PST (the clocks went back an hour on that night)
