"""Turn the Microsoft Philly trace's ``cluster_job_log`` into a batch-quota job file for ``batch-quota fit``.

The trace (Jeon et al., "Analysis of Large-Scale Multi-Tenant GPU Clusters for DNN Training Workloads",
USENIX ATC'19; github.com/msr-fiddle/philly-traces, data licensed CC-BY 4.0) lists each job with its virtual
cluster, submission time and scheduling attempts. Mapping (docs/workloads.md): virtual cluster (``vc``) ->
share; GPUs of the last attempt / --gpus-per-instance (8 for ml.p4d.24xlarge) rounded up -> instances;
``submitted_time`` -> submitted_epoch_ms (and submit_at); the last attempt's end minus its start -> duration;
``status`` Pass -> SUCCEEDED, Failed -> FAILED, Killed -> a lower bound (duration_known false). Times are the
trace's (the cluster's local time, read here as --timezone, default America/Los_Angeles). Jobs that never
ran (no attempt) are skipped and counted.

It also reads the per-job derivative the project's test window is cut from (tests/data/README): the same
records with only the last attempt, flattened into the job (``start_time``, ``end_time``, ``detail`` beside
``status`` and ``vc``). A file ending in ``.gz`` is read through gzip.

    python examples/philly/job_log_to_jobs.py cluster_job_log -o philly.csv --instance-type ml.p4d.24xlarge
    batch-quota fit philly.csv -o philly-profile.yaml --timezone America/Los_Angeles
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import math
import zoneinfo
from datetime import datetime
from pathlib import Path
from typing import Any

STATUS = {"Pass": "SUCCEEDED", "Failed": "FAILED"}  # Killed: no AWS Batch status says it (duration_known false)
COLUMNS = ("name", "share", "instance_type", "instances", "priority", "submit_at", "duration",
           "submitted_epoch_ms", "duration_known", "observed_status")


def _time(text: str, zone: zoneinfo.ZoneInfo) -> float:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S").replace(tzinfo=zone).timestamp()


def attempts_of(job: dict[str, Any]) -> list[dict[str, Any]]:
    """The job's attempts with both a start and an end: from ``attempts`` (the trace), or the one attempt a
    flattened record carries (the derivative keeps only the last attempt, its fields beside the job's)."""
    if "attempts" in job:
        listed = job.get("attempts") or []
    elif "start_time" in job or "end_time" in job:
        listed = [{"start_time": job.get("start_time"), "end_time": job.get("end_time"),
                   "detail": job.get("detail") or []}]
    else:
        listed = []
    return [a for a in listed if a.get("start_time") not in (None, "None") and a.get("end_time") not in (None, "None")]


def read_job_log(path: Path) -> list[dict[str, Any]]:
    """The JSON list of jobs, through gzip when the name ends in ``.gz``."""
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    jobs = json.loads(raw.decode("utf-8"))
    if not isinstance(jobs, list):
        raise SystemExit(f"{path}: not a JSON list of jobs")
    return jobs


def convert(jobs: list[dict[str, Any]], instance_type: str, gpus_per_instance: int,
            timezone: str) -> tuple[list[dict[str, object]], dict[str, int]]:
    """Rows of the job file, and how many jobs were skipped, by reason."""
    zone = zoneinfo.ZoneInfo(timezone)
    rows: list[dict[str, object]] = []
    skipped: dict[str, int] = {}
    for job in jobs:
        attempts = attempts_of(job)
        if not attempts or not job.get("submitted_time") or job.get("submitted_time") == "None":
            skipped["never ran"] = skipped.get("never ran", 0) + 1
            continue
        last = attempts[-1]
        gpus = sum(len(detail.get("gpus") or []) for detail in last.get("detail") or [])
        status = STATUS.get(job.get("status", ""), "")
        rows.append({"name": job.get("jobid"), "share": job.get("vc"), "instance_type": instance_type,
                     "instances": max(1, math.ceil(gpus / gpus_per_instance)), "priority": 1,
                     "epoch": _time(job["submitted_time"], zone),
                     "duration": max(1.0, _time(last["end_time"], zone) - _time(last["start_time"], zone)),
                     "duration_known": "true" if status in ("SUCCEEDED", "FAILED") else "false",
                     "observed_status": status})
    start = min((float(row["epoch"]) for row in rows), default=0.0)  # type: ignore[arg-type]
    for row in rows:
        epoch = float(row.pop("epoch"))  # type: ignore[arg-type]
        row["submit_at"], row["submitted_epoch_ms"] = round(epoch - start, 3), round(epoch * 1000)
    return sorted(rows, key=lambda row: float(row["submit_at"])), skipped  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("job_log", type=Path, help="cluster_job_log (a JSON list) from the trace")
    parser.add_argument("--instance-type", default="ml.p4d.24xlarge")
    parser.add_argument("--gpus-per-instance", type=int, default=8)
    parser.add_argument("--timezone", default="America/Los_Angeles")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    jobs = read_job_log(args.job_log)
    rows, skipped = convert(jobs, args.instance_type, args.gpus_per_instance, args.timezone)
    with args.output.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {len(rows)} job(s) to {args.output}; skipped: {skipped or 'none'}")


if __name__ == "__main__":
    main()
