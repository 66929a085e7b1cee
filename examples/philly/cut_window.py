"""Cut the window of the Philly trace that tests/data/philly ships, reproducibly (tests/data/README.md).

The source is a per-job derivative of the trace's ``cluster_job_log`` (github.com/weifanjiang/DRE,
``data/philly/sampled_jobs.json``): the trace's own records, last attempt only, of jobs that passed or
failed on more than one GPU and whose last attempt ran at least an hour. This keeps the records whose
``submitted_time`` falls in [--start, --end), in the source's order and unchanged, as compact JSON
through gzip (a zero timestamp, so the same input gives the same bytes).

    python examples/philly/cut_window.py sampled_jobs.json -o tests/data/philly/philly-window.json.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path, help="sampled_jobs.json (a JSON list of job records)")
    parser.add_argument("--start", default="2017-10-09 00:00:00", help="first submitted_time kept (a Monday)")
    parser.add_argument("--end", default="2017-12-04 00:00:00", help="first submitted_time not kept (8 weeks on)")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    jobs = json.loads(args.source.read_text(encoding="utf-8"))
    kept = [job for job in jobs if args.start <= job["submitted_time"] < args.end]
    with gzip.GzipFile(args.output, "wb", mtime=0) as handle:
        handle.write(json.dumps(kept, separators=(",", ":")).encode("utf-8"))
    print(f"kept {len(kept)} of {len(jobs)} job(s) submitted in [{args.start}, {args.end}) in {args.output}")


if __name__ == "__main__":
    main()
