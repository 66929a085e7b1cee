"""``batch-quota generate``: write a synthetic workload (CSV or JSON Lines) for ``simulate``."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TextIO
from zoneinfo import ZoneInfo

import click

from policy_engine.cli.commands.shared import (
    FiniteFloatRange,
    SafePath,
    fail_input,
    python_topologies,
    start_instant,
    topology_or_exit,
)
from policy_engine.foundation.diagnostics import LoadError
from policy_engine.foundation.limits import JOB_PRIORITY
from policy_engine.foundation.model import Topology, plan_time_text
from policy_engine.inputs import safe_yaml
from policy_engine.inputs.input_files import refuse_overwriting_inputs, same_file
from policy_engine.reports.kit.subjects import GenerateOutput
from policy_engine.reports.registry import GENERATE_FORMATS
from policy_engine.simulation.inputs.generate import (
    DURATION_DISTRIBUTIONS,
    GenerateOptions,
    Reach,
    ShareMix,
    drawable,
    generate_jobs,
    parse_weights,
    share_priority_mixes,
    share_reach,
    write_jobs,
)
from policy_engine.simulation.profiles.plan_timing import default_origin
from policy_engine.simulation.scenarios.workload import MAX_SECONDS

#: Most jobs one run writes: the largest job file ``simulate`` is sized for.
MAX_JOBS = 10_000_000
#: Longest span ``--days`` accepts (ten years): far beyond any planning question, well within the simulator's clock.
MAX_DAYS = 3650.0


@python_topologies()
@click.command("generate")
@click.argument("topology", required=False, type=SafePath(dir_okay=False))
@click.option("-o", "--output", required=True, type=SafePath(dir_okay=False), help="Jobs file: .csv or .jsonl.")
@click.option("--jobs", "count", type=click.IntRange(min=1, max=MAX_JOBS),
              help="How many jobs (default 1000); exclusive with --days.")
@click.option("--days", type=FiniteFloatRange(min=0, min_open=True, max=MAX_DAYS), metavar="DAYS",
              help="Submit for DAYS days instead of a number of jobs (needed with --workload-profile).")
@click.option("--workload-profile", "profile_path", type=SafePath(dir_okay=False), metavar="PROFILE",
              help="Per-team arrivals, cycles, sizes and run times (YAML; batch-quota fit writes one). Shares it "
                   "does not name follow the options below.")
@click.option("--scale", "scales", multiple=True, metavar="SHARE=FACTOR",
              help="Multiply a profiled share's arrival rate, e.g. vision=2 (repeatable; needs --workload-profile).")
@click.option("--add-share", "added", multiple=True, metavar="NEW=FROM",
              help="Model a new team NEW (a share of the topology) like FROM (repeatable; needs --workload-profile).")
@click.option("--share-mix", type=click.Choice([m.value for m in ShareMix]), default=ShareMix.LIMIT.value,
              show_default=True,
              help="Without a profile, a job's share and instance type: in proportion to the share's limit of "
                   "that type (limit), or every share equally likely (uniform, as generate drew before --share-mix).")
@click.option("--rate", type=FiniteFloatRange(min=0, min_open=True), default=60.0, show_default=True,
              help="Mean arrivals per hour over the whole topology (Poisson).")
@click.option("--sizes", default="1:1", show_default=True, help="Instances per job, VALUE:WEIGHT,...")
@click.option("--duration-mean", type=FiniteFloatRange(min=1, max=MAX_SECONDS / 1000), default=3600.0,
              show_default=True, help="Seconds.")
@click.option("--duration-distribution", type=click.Choice(DURATION_DISTRIBUTIONS), default="exponential",
              show_default=True)
@click.option("--duration-shape", type=FiniteFloatRange(), metavar="SHAPE",
              help="Tail of the durations: lognormal sigma (default 1.0; 2.5 spans seconds to weeks) or "
                   "pareto alpha (> 1, default 1.5; closer to 1 = heavier tail).")
@click.option("--duration-max", type=FiniteFloatRange(min=1, max=MAX_SECONDS), metavar="SECONDS",
              help="Cap every drawn duration at SECONDS (e.g. 1209600 for two weeks).")
@click.option("--burst-mean", type=FiniteFloatRange(min=1, max=MAX_JOBS), default=1.0, show_default=True,
              metavar="JOBS",
              help="Submit in bursts of JOBS jobs on average (geometric), each to one share and instance type; "
                   "1 = independent Poisson arrivals. --rate stays the mean job rate.")
@click.option("--burst-spread", type=FiniteFloatRange(min=0, max=MAX_SECONDS), default=60.0, show_default=True,
              metavar="SECONDS",
              help="A burst's jobs are submitted within SECONDS of its start.")
@click.option("--priorities", default="1:1", show_default=True, help="Priority mix, VALUE:WEIGHT,...")
@click.option("--share-priorities", multiple=True, metavar="SHARE=MIX",
              help="Priority mix of one share, e.g. training/QS1=1:0.8,5:0.2 (repeatable).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--scenario", type=SafePath(dir_okay=False), help="Also write a scenario YAML using the jobs file.")
@click.option("--start", metavar="ISO8601",
              help="The instant generated second 0 stands for (with a time zone, e.g. 2026-12-07T00:00:00Z): what "
                   "training plan windows written as dates count from; written as the scenario's start:. Default: "
                   "the Monday 00:00 (the profile's time zone) on or before the first dated window.")
@GENERATE_FORMATS.option()
def command(topology: str | None, output: str, count: int | None, days: float | None, profile_path: str | None,
            scales: tuple[str, ...], added: tuple[str, ...], share_mix: str, rate: float, sizes: str,
            duration_mean: float,
            duration_distribution: str, duration_shape: float | None, duration_max: float | None,
            burst_mean: float, burst_spread: float, priorities: str, share_priorities: tuple[str, ...], seed: int,
            scenario: str | None, start: str | None, output_format: str) -> None:
    """Generate a seeded synthetic workload for TOPOLOGY (default: the embedded example).

    Exit 0 when the file is written; 2 for bad input (one line per problem).
    """
    loaded = topology_or_exit(topology)
    problems: list[str] = refuse_overwriting_inputs({"--output": output, "--scenario": scenario},
                                                    [topology if topology != "-" else None, profile_path])
    if count is not None and days is not None:
        problems.append("--jobs and --days are exclusive: give a number of jobs or a number of days")
    if profile_path is not None and days is None:
        problems.append("--workload-profile: give --days (a profile's rates say how many jobs a day)")
    if profile_path is None and (scales or added):
        problems.append(f"{'--scale' if scales else '--add-share'}: only with --workload-profile")
    if count is None:
        count = min(MAX_JOBS, max(1, round(rate * 24 * days))) if days is not None else 1000
    if scenario is not None and same_file(output, scenario):
        problems.append(f"--scenario {scenario}: is the same file as --output; write them to two files")
    out = Path(output)
    if out.suffix.lower() not in (".csv", ".jsonl"):
        problems.append(f"--output {output}: use a .csv or .jsonl file name")
    if count * 3600 / rate > MAX_SECONDS / 100:
        problems.append(f"--rate {rate:g}: {count:,} job(s) at {rate:g} per hour would arrive over about "
                        f"{count * 3600 / rate:.3g} s, more than a workload may span ({MAX_SECONDS:.0e} s)")
    try:
        size_weights = parse_weights(sizes, "--sizes")
        if min(size_weights) < 1:
            problems.append("--sizes: instances must be at least 1")
    except ValueError as error:
        problems.append(str(error))
        size_weights = {}
    if duration_shape is not None:
        if duration_distribution == "pareto" and not (1 < duration_shape < math.inf):
            problems.append(f"--duration-shape {duration_shape:g}: a pareto alpha must be a number > 1 "
                            "(the mean is infinite at 1 and below)")
        elif duration_distribution == "lognormal" and not (0 < duration_shape < math.inf):
            problems.append(f"--duration-shape {duration_shape:g}: a lognormal sigma must be a number > 0")
        elif duration_distribution not in ("pareto", "lognormal"):
            problems.append(f"--duration-shape: only lognormal and pareto durations have a shape, "
                            f"not {duration_distribution}")
    try:
        priority_weights = parse_weights(priorities, "--priorities")
    except ValueError as error:
        problems.append(str(error))
        priority_weights = {}
    per_share, wrong_mixes = share_priority_mixes(loaded, share_priorities)
    problems += wrong_mixes
    mixes = [("--priorities", priority_weights), *((f"--share-priorities {sid}", w) for sid, w in per_share.items())]
    for what, weights in mixes:
        wrong = sorted(p for p in weights if not JOB_PRIORITY.allows(p))
        if wrong:
            problems.append(f"{what}: priorities must be integers {JOB_PRIORITY.range_text()}, "
                            f"got {', '.join(map(str, wrong))}")
    origin = start_instant(start, problems)
    if problems:
        fail_input(problems)
    profile = GenerateOptions(jobs=count, arrival_rate=rate, sizes=size_weights, duration_mean=duration_mean,
                              duration_distribution=duration_distribution, priorities=priority_weights,
                              share_priorities=per_share, seed=seed, duration_shape=duration_shape,
                              duration_max=duration_max, burst_mean=burst_mean, burst_spread=burst_spread,
                              share_mix=ShareMix(share_mix))
    reach = share_reach(loaded)  # one computation for the notes and the jobs
    render = GENERATE_FORMATS.renderer(output_format)
    if profile_path is not None:
        assert days is not None
        written, said, origin = _from_profile(loaded, profile_path, profile, days, scales, added, reach, out, output,
                                              origin)
        _finish(render, GenerateOutput(written, output, notes=tuple(said)), scenario, topology, loaded, out, origin)
        return
    if origin is None:
        origin = default_origin(loaded, "UTC")
    enabled, notes = drawable(loaded, profile, reach)
    if not enabled:
        fail_input([f"--sizes: {note}" for note in notes] or ["no ENABLED quota share to draw jobs for"])
    for note in notes:  # said, not silent: these shares get only the sizes they can ever run
        click.echo(f"note: --sizes: {note}", err=True)
    try:
        written = write_jobs(out, generate_jobs(loaded, profile, reach))
    except OSError as error:
        fail_input([f"{output}: cannot write: {error.strerror or error}"])
    _finish(render, GenerateOutput(written, output, notes=tuple(notes)), scenario, topology, loaded, out, origin)


def _from_profile(loaded: Topology, profile_path: str, options: GenerateOptions, days: float,
                  scales: tuple[str, ...], added: tuple[str, ...], reach: Reach, out: Path,
                  output: str, origin: datetime | None) -> tuple[int, list[str], datetime | None]:
    """``--workload-profile``: the profile's shares (scaled, added), the others from ``options``; write them.

    Also the instant second 0 stands for: ``origin`` (``--start``), else the default for dated plan windows."""
    from policy_engine.simulation.profiles.loading import load_profile
    from policy_engine.simulation.profiles.planning import add_shares, parse_scales, with_defaults
    from policy_engine.simulation.profiles.sampling import draw_workload, expected_jobs, write_columns

    try:
        resolved = load_profile(profile_path, loaded)
    except LoadError as error:
        fail_input(error.problems)
    resolved, problems = add_shares(resolved, loaded, added)
    factors, wrong = parse_scales(resolved, loaded, scales)
    if problems or wrong:
        fail_input(problems + wrong)
    resolved, notes = with_defaults(resolved, loaded, options)
    expected = expected_jobs(resolved, days, factors)
    if expected > MAX_JOBS:
        fail_input([f"--workload-profile {profile_path}: about {expected:,.0f} job(s) over {days:g} day(s), more "
                    f"than a workload may hold ({MAX_JOBS:,}); lower the rates, --scale or --days"])
    zone = ZoneInfo(resolved.timezone)
    if origin is None and (origin := default_origin(loaded, resolved.timezone)) is not None:
        notes.append(f"generated second 0 is {plan_time_text(origin)} (the Monday 00:00 in {resolved.timezone} on "
                     "or before the first training plan window; --start to choose another)")
    elif origin is not None and (local := origin.astimezone(zone)).weekday() + local.hour + local.minute \
            + local.second + local.microsecond:
        notes.append(f"--start {plan_time_text(origin)} is not a Monday 00:00 in {resolved.timezone}: the profile's "
                     "daily and weekly cycles are still counted from second 0 as if it were")
    columns = draw_workload(loaded, resolved, days, options.seed, reach, factors, origin)
    for note in notes + columns.notes:  # said, not silent
        click.echo(f"note: {note}", err=True)
    try:
        written = write_columns(out, columns)
    except OSError as error:
        fail_input([f"{output}: cannot write: {error.strerror or error}"])
    return written, notes + columns.notes, origin


def _finish(render: Callable[[GenerateOutput, TextIO], None], done: GenerateOutput, scenario: str | None,
            topology: str | None, loaded: Topology, out: Path, origin: datetime | None) -> None:
    """Write the scenario beside the jobs (when asked for, with ``start:`` when second 0 stands for an instant),
    then say what was written."""
    if scenario:
        target = Path(scenario)
        # relative to the scenario as the user named it: resolving symlinks would climb out of the project
        base = os.path.dirname(os.path.abspath(target))
        topo_value = (Path(os.path.relpath(os.path.abspath(topology), base)).as_posix() if topology not in (None, "-")
                      else loaded.model_dump(mode="json", exclude_defaults=True))  # stdin cannot be named: inline
        jobs_value = Path(os.path.relpath(os.path.abspath(out), base)).as_posix()
        try:
            document: dict[str, object] = {"topology": topo_value, "jobs": jobs_value}
            if origin is not None:
                document["start"] = plan_time_text(origin)
            target.write_text(safe_yaml.dump(document), encoding="utf-8")
        except OSError as error:
            render(done, sys.stdout)  # the jobs file was written
            fail_input([f"--scenario {scenario}: cannot write: {error.strerror or error}"])
        done = replace(done, scenario=scenario)
    render(done, sys.stdout)
