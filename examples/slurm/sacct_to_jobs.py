"""Turn a Slurm accounting export into a batch-quota job file that ``batch-quota fit`` reads.

    sacct --allusers --parsable2 --noheader=no --starttime 2026-11-01 \
          --format=JobID,Account,NNodes,Submit,Start,End,ElapsedRaw,State,Priority > sacct.txt
    python examples/slurm/sacct_to_jobs.py sacct.txt --instance-type ml.p4d.24xlarge -o jobs.csv
    batch-quota fit jobs.csv --topology my-topology.yaml -o profile.yaml

Mapping (docs/workloads.md): Account -> share, NNodes -> instances (a SageMaker instance is a node),
Submit -> submitted_epoch_ms (and submit_at, seconds after the first submission), ElapsedRaw -> duration,
State -> observed_status (COMPLETED: SUCCEEDED; FAILED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL: FAILED; anything
else, e.g. PREEMPTED or CANCELLED: its run time is a lower bound, duration_known false). Job steps
(``123.batch``) are skipped: the job line carries the allocation. Times are read in UTC unless --timezone.
"""

from __future__ import annotations

import argparse
import csv
import sys
import zoneinfo
from datetime import datetime
from pathlib import Path

SUCCEEDED = {"COMPLETED"}
FAILED = {"FAILED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL", "DEADLINE"}
COLUMNS = ("name", "share", "instance_type", "instances", "priority", "submit_at", "duration",
           "submitted_epoch_ms", "duration_known", "observed_status")


def convert(lines: list[str], instance_type: str, timezone: str) -> tuple[list[dict[str, object]], list[str]]:
    """Rows of the job file, and one line per sacct line that could not be used (with why)."""
    zone = zoneinfo.ZoneInfo(timezone)
    reader = csv.DictReader(lines, delimiter="|")
    rows: list[dict[str, object]] = []
    skipped: list[str] = []
    for number, record in enumerate(reader, start=2):
        job = record.get("JobID", "")
        if "." in job:  # a step of a job, not an allocation
            continue
        try:
            submit = datetime.fromisoformat(record["Submit"]).replace(tzinfo=zone)
            elapsed = float(record["ElapsedRaw"])
            nodes = int(record["NNodes"])
        except (KeyError, ValueError) as error:
            skipped.append(f"line {number}: {job or '?'}: {error}")
            continue
        state = record.get("State", "").split()[0] if record.get("State") else ""
        # no AWS Batch status says PREEMPTED or CANCELLED: those rows carry none (their duration_known false says it)
        status = "SUCCEEDED" if state in SUCCEEDED else "FAILED" if state in FAILED else ""
        rows.append({"name": job, "share": record.get("Account") or "default", "instance_type": instance_type,
                     "instances": nodes, "priority": min(9999, int(record.get("Priority") or 1)),
                     "epoch": submit.timestamp(), "duration": max(elapsed, 1.0),
                     "duration_known": "true" if status in ("SUCCEEDED", "FAILED") else "false",
                     "observed_status": status})
    start = min((float(row["epoch"]) for row in rows), default=0.0)  # type: ignore[arg-type]
    for row in rows:
        epoch = float(row.pop("epoch"))  # type: ignore[arg-type]
        row["submit_at"] = round(epoch - start, 3)
        row["submitted_epoch_ms"] = round(epoch * 1000)
    return sorted(rows, key=lambda row: float(row["submit_at"])), skipped  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sacct", type=Path)
    parser.add_argument("--instance-type", required=True, help="the SageMaker instance type one node stands for")
    parser.add_argument("--timezone", default="UTC", help="the zone sacct printed its times in")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    rows, skipped = convert(args.sacct.read_text(encoding="utf-8").splitlines(), args.instance_type, args.timezone)
    with args.output.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    for line in skipped:
        print(f"skipped: {line}", file=sys.stderr)
    print(f"wrote {len(rows)} job(s) to {args.output}; {len(skipped)} line(s) skipped")


if __name__ == "__main__":
    main()
