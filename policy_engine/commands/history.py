"""``batch-quota history --queue NAME --since 30d``: finished jobs as a workload CSV to replay.

Streams: each DescribeServiceJob result is written as it arrives (bounded concurrency,
botocore's retries), so tens of thousands of jobs never sit in memory. The file appears
only when complete: Ctrl-C or a failed call leaves none (exit 130 / 2).
"""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from policy_engine.aws.atomic_file import atomic_write
from policy_engine.aws.cli_options import aws_options, client_options, connect, exits_on_aws_errors
from policy_engine.commands.shared import EXIT_OK, SafePath, fail_input


@click.command("history")
@click.option("--queue", required=True, metavar="NAME", help="The quota-managed job queue (name or ARN).")
@click.option("--since", default="30d", show_default=True, metavar="AGE",
              help="Jobs created in the last AGE: 30d, 12h, 90m, 3600s.")
@click.option("-o", "--output", type=SafePath(dir_okay=False), default=None,
              help="Write the CSV here; default: standard output.")
@click.option("--workers", type=click.IntRange(1, 64), default=8, show_default=True,
              help="DescribeServiceJob calls in flight at once.")
@aws_options
def command(queue: str, since: str, output: str | None, workers: int, **connection: Any) -> None:
    """Write QUEUE's SUCCEEDED and FAILED jobs as the workload CSV `simulate` reads, with observed columns."""
    from policy_engine.aws.history import parse_since, write_history

    try:
        window = parse_since(since)
    except ValueError:
        fail_input([f"--since: expected an age such as 30d, 12h, 90m or 3600s, got {since!r}"])
    since_ms = int((time.time() - window) * 1000)
    with exits_on_aws_errors():
        api = connect(client_options(workers=workers, **connection))
        if output is None:
            stats = write_history(api, queue, since_ms, sys.stdout, workers)
        else:
            with atomic_write(output, newline="") as handle:
                stats = write_history(api, queue, since_ms, handle, workers)
    click.echo(f"history of {queue}: {stats.written:,} finished job(s) since {since} "
               f"({stats.unfinished:,} unfinished and {stats.outside_window:,} older skipped; "
               f"{sum(api.calls.values()):,} API calls)", err=True)
    raise SystemExit(EXIT_OK)
