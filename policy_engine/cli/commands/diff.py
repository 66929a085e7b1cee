"""``batch-quota diff BASE HEAD``: what a topology change does, for the pull request that makes it.

BASE and HEAD are files, ``REF:PATH`` read from git, or ``/dev/null``. Exit 0 when nothing got
worse, 1 when a guarantee was lost, a declared guarantee weakened or dropped (unless a suppression of
BQ501/BQ502 in HEAD accepts it), a finding was added or a deploy hazard found (``--fail-on``), 2 on
bad input.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from policy_engine.changes.report import FAIL_ON
from policy_engine.cli.commands.cost_options import convention, cost_options, note_unused, period_or_exit
from policy_engine.cli.commands.shared import EXIT_FINDINGS, EXIT_OK, FiniteFloatRange, fail_input, python_topologies
from policy_engine.inputs.loading import LoadError
from policy_engine.reports.kit.subjects import DiffLoadFailure, DiffOutput
from policy_engine.reports.registry import DIFF_FORMATS
from policy_engine.simulation.scenarios.workload import MAX_SECONDS

_FAIL_ON = (*FAIL_ON, "never")


def _load_failure(output_format: str, problems: list[str], base: str, head: str) -> NoReturn:
    """CI reads stdout: a document saying the inputs did not load, then the usual lines on stderr, exit 2."""
    write = DIFF_FORMATS.renderer(output_format).load_failure
    if write is not None:
        write(DiffLoadFailure(problems, base, head), sys.stdout)
    fail_input(problems)


@python_topologies("read from git (REF:PATH: another revision's code) or named by the --scenario's topology:")
@click.command("diff")
@click.argument("base")
@click.argument("head")
@click.option("--rename", "renames", multiple=True, metavar="OLD=NEW",
              help="Declare a rename (repeatable): QUEUE/SHARE=QUEUE/SHARE for a share (or a move between "
                   "queues), NAME=NAME for a job queue or service environment. Renames are never guessed.")
@DIFF_FORMATS.option()
@click.option("--fail-on", "fail_on", multiple=True, type=click.Choice(_FAIL_ON),
              help="What makes the exit code 1 (repeatable; default: all of guarantee (a proof lost), "
                   "guarantee-weakened, guarantee-dropped (a declared promise lowered or removed), finding and "
                   "hazard; never: always 0 unless the input is bad).")
@click.option("--scenario", type=click.Path(dir_okay=False), default=None,
              help="Replay this scenario's jobs on BASE and apply HEAD at --at: jobs preempted, waits, hours lost.")
@click.option("--at", "at", type=FiniteFloatRange(min=0, max=MAX_SECONDS), default=None, metavar="SECONDS",
              help="When HEAD is deployed in the --scenario replay (default 0).")
@cost_options
def command(base: str, head: str, renames: tuple[str, ...], output_format: str, fail_on: tuple[str, ...],
            scenario: str | None, at: float | None, prices_path: str | None, chargeback: str | None,
            period_text: str | None, allow_python: bool = False) -> None:
    """What changes from BASE to HEAD: per team, per guarantee, per finding, and what a deploy replaces."""
    from policy_engine.changes.compare import compare
    from policy_engine.changes.sources import load_side
    from policy_engine.inputs.renames import parse_renames

    if "never" in fail_on and len(set(fail_on)) > 1:
        raise click.UsageError("--fail-on never cannot be combined with other --fail-on values")
    if at is not None and scenario is None:
        raise click.UsageError("--at needs --scenario (the workload to replay)")
    if (prices_path or chargeback or period_text) and scenario is None:
        raise click.UsageError("--prices/--chargeback/--period price the --scenario replay: add --scenario")
    effective = () if "never" in fail_on else (tuple(dict.fromkeys(fail_on)) or FAIL_ON)
    problems: list[str] = []
    sides = []
    for argument in (base, head):
        try:
            sides.append(load_side(argument, allow_python))
        except LoadError as error:
            problems += error.problems
    if problems:
        _load_failure(output_format, problems, base, head)
    base_side, head_side = sides
    try:
        declared = parse_renames(renames, base_side.topology, head_side.topology)
    except LoadError as error:
        _load_failure(output_format, error.problems, base, head)
    report = compare(base_side.topology, head_side.topology, declared, base_label=base_side.label,
                     head_label=head_side.label, policies=(base_side.policies, head_side.policies))
    if scenario is not None:
        from policy_engine.changes.impact import replay
        from policy_engine.inputs.prices import load_prices
        from policy_engine.simulation.scenarios.workload import load_scenario

        try:
            loaded = load_scenario(scenario, allow_python=allow_python)
            prices = load_prices(prices_path, [base_side.topology, head_side.topology]) if prices_path else None
            period = period_or_exit(period_text, loaded.settings.start)
            impact = replay(loaded, base_side.topology, head_side.topology, declared, at or 0.0, prices,
                            convention(chargeback), period)
        except LoadError as error:
            _load_failure(output_format, error.problems, base, head)
        if prices is not None:
            note_unused(prices, 2)
        report = report.with_impact(impact)
    DIFF_FORMATS.renderer(output_format).render(DiffOutput(report, effective), sys.stdout)
    raise SystemExit(EXIT_FINDINGS if report.failures(effective) else EXIT_OK)
