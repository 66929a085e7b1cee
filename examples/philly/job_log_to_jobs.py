"""Turn the Microsoft Philly trace's ``cluster_job_log`` into a batch-quota job file for ``batch-quota fit``.

The trace (Jeon et al., "Analysis of Large-Scale Multi-Tenant GPU Clusters for DNN Training Workloads",
USENIX ATC'19; github.com/msr-fiddle/philly-traces, data licensed CC-BY 4.0) lists each job with its virtual
cluster, submission time and scheduling attempts. Mapping (docs/workloads.md): virtual cluster (``vc``) ->
share; GPUs of the last attempt / --gpus-per-instance (8 for ml.p4d.24xlarge) rounded up -> instances;
``submitted_time`` -> submitted_epoch_ms (and submit_at); the last attempt's end minus its start -> duration;
``status`` Pass -> SUCCEEDED, Failed -> FAILED, Killed -> a lower bound (duration_known false). Times are the
trace's (the cluster's local time, read here as --timezone, default America/Los_Angeles). Jobs that never
ran (no attempt) are skipped and counted.

    python examples/philly/job_log_to_jobs.py cluster_job_log -o philly.csv --instance-type ml.p4d.24xlarge
    batch-quota fit philly.csv -o philly-profile.yaml --timezone America/Los_Angeles
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import zoneinfo
from datetime import datetime
from pathlib import Path
from typing import Any

STATUS = {"Pass": "SUCCEEDED", "Failed": "FAILED", "Killed": "KILLED"}
COLUMNS = ("name", "share", "instance_type", "instances", "priority", "submit_at", "duration",
           "submitted_epoch_ms", "duration_known", "observed_status")


def _time(text: str, zone: zoneinfo.ZoneInfo) -> float:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S").replace(tzinfo=zone).timestamp()


def convert(jobs: list[dict[str, Any]], instance_type: str, gpus_per_instance: int,
            timezone: str) -> tuple[list[dict[str, object]], dict[str, int]]:
    """Rows of the job file, and how many jobs were skipped, by reason."""
    zone = zoneinfo.ZoneInfo(timezone)
    rows: list[dict[str, object]] = []
    skipped: dict[str, int] = {}
    for job in jobs:
        attempts = [a for a in job.get("attempts") or [] if a.get("start_time") and a.get("end_time")]
        if not attempts or not job.get("submitted_time") or job.get("submitted_time") == "None":
            skipped["never ran"] = skipped.get("never ran", 0) + 1
            continue
        last = attempts[-1]
        gpus = sum(len(detail.get("gpus") or []) for detail in last.get("detail") or [])
        status = STATUS.get(job.get("status", ""), "UNKNOWN")
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
    jobs = json.loads(args.job_log.read_text(encoding="utf-8"))
    rows, skipped = convert(jobs, args.instance_type, args.gpus_per_instance, args.timezone)
    with args.output.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {len(rows)} job(s) to {args.output}; skipped: {skipped or 'none'}")


if __name__ == "__main__":
    main()
