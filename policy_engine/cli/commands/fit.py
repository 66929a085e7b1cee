"""``batch-quota fit WORKLOAD [--topology TOPOLOGY] [--timezone TZ] -o PROFILE``: a workload profile per share.

Reads a job file (CSV or JSON Lines: ``generate``'s, ``history``'s, or an accounting export with the
same columns) and writes the profile ``generate --workload-profile`` draws from. Exit 0 when the
profile is written, 2 for bad input (one line per problem).
"""

from __future__ import annotations

import sys
import zoneinfo
from pathlib import Path

import click

from policy_engine.cli.commands.shared import SafePath, fail_input, python_topologies, start_instant, topology_or_exit
from policy_engine.foundation.diagnostics import LoadError
from policy_engine.foundation.output_files import atomic_write
from policy_engine.inputs.input_files import refuse_overwriting_inputs
from policy_engine.reports.kit.subjects import FitOutput
from policy_engine.reports.registry import FIT_FORMATS

#: What a missing scipy costs: one line naming the extra, never an ImportError traceback.
MISSING_SCIPY = "fit needs scipy, which is not installed: pip install 'batch-quota[fit]'"


@python_topologies()
@click.command("fit")
@click.argument("workload", type=SafePath(dir_okay=False))
@click.option("-o", "--output", type=SafePath(dir_okay=False), help="Write the profile here (.yaml).")
@click.option("--topology", type=SafePath(dir_okay=False),
              help="Resolve share names against it (SHARE -> QUEUE/SHARE); rows of other shares are counted, "
                   "not used.")
@click.option("--timezone", default="UTC", show_default=True,
              help="Read daily and weekly cycles in this IANA time zone (from absolute submission times).")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True,
              help="Seed of the goodness-of-fit subsample.")
@click.option("--start", metavar="ISO8601",
              help="The instant submit_at 0 stands for, where training plan windows are dates and the file has no "
                   "submitted_epoch_ms (default: as generate writes it, the Monday 00:00 on or before the first "
                   "window).")
@click.option("--min-jobs-per-size", type=click.IntRange(1, None), default=None, metavar="N",
              help="A size with at least N completed jobs gets a run-time law of its own; smaller sizes draw the "
                   "share's pooled law (default 50; see docs/workloads.md).")
@FIT_FORMATS.option()
def command(workload: str, output: str | None, topology: str | None, timezone: str, seed: int, start: str | None,
            min_jobs_per_size: int | None, output_format: str) -> None:
    """Fit a per-share workload profile from WORKLOAD (a job file or `batch-quota history` output).

    Exit 0 when fitted (and written with -o), 2 for bad input.
    """
    import importlib.util

    if importlib.util.find_spec("scipy") is None:
        fail_input([MISSING_SCIPY])
    problems = refuse_overwriting_inputs({"--output": output}, [workload, topology])
    try:
        zoneinfo.ZoneInfo(timezone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        problems.append(f"--timezone {timezone!r}: not a known IANA time zone (e.g. UTC, Europe/Paris)")
    if output is not None and Path(output).suffix.lower() not in (".yaml", ".yml"):
        problems.append(f"--output {output}: a profile is written as .yaml or .yml")
    origin = start_instant(start, problems)
    if problems:
        fail_input(problems)
    loaded = topology_or_exit(topology) if topology is not None else None
    from policy_engine.simulation.profiles.fitting import (
        MIN_JOBS_PER_SIZE,
        fit_profile,
        plan_column_problems,
        read_columns,
    )
    from policy_engine.simulation.profiles.writing import profile_yaml

    try:
        columns = read_columns(Path(workload), loaded)
    except LoadError as error:
        fail_input(error.problems)
    wrong = plan_column_problems(columns, workload, loaded)
    if wrong:
        fail_input(wrong)
    result = fit_profile(columns, workload, loaded, timezone, seed, origin,
                         MIN_JOBS_PER_SIZE if min_jobs_per_size is None else min_jobs_per_size)
    if not result.shares:
        fail_input([f"{workload}: no usable job ({', '.join(f'{n} {why}' for why, n in result.unused.items())})"
                    if result.unused else f"{workload}: no job to fit"])
    if output is not None:
        header = [f"fitted by batch-quota fit from {Path(workload).name}: {result.span_days:.1f} day(s), "
                  f"{sum(f.jobs for f in result.shares.values()):,} job(s), cycles in {result.timezone}",
                  *result.notes, *(f"{s}: {note}" for s, f in result.shares.items() for note in f.notes)]
        try:
            with atomic_write(output) as handle:
                handle.write(profile_yaml(result.profile(), header))
        except OSError as error:
            fail_input([f"--output {output}: cannot write: {error.strerror or error}"])
    FIT_FORMATS.renderer(output_format)(FitOutput(result, workload, output), sys.stdout)
