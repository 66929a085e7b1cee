"""``batch-quota explain SHARE [TOPOLOGY]``: what one share can count on, in plain sentences.

``explain TOPOLOGY SHARE`` is accepted too (a file name is told apart from a share by its suffix).
SHARE is ``QUEUE/SHARE``, or ``SHARE`` when the name is unique. An unknown or ambiguous
share is one line on stderr and exit 2. ``--format`` chooses a renderer from
``reports.registry.EXPLAIN_FORMATS``.
"""

from __future__ import annotations

import shlex
import sys
from typing import TYPE_CHECKING, NoReturn

import click

from policy_engine.analysis.checks import check_topology
from policy_engine.cli.commands.shared import (
    EXIT_OK,
    FiniteFloatRange,
    LocalWorkers,
    SafePath,
    fail_input,
    python_topologies,
    scenario_or_exit,
    topology_or_exit,
)
from policy_engine.comparison.parallel import IN_PROCESS_JOB_RUNS
from policy_engine.foundation.model import Topology, share_id
from policy_engine.reports.kit.subjects import ExplainOutput
from policy_engine.reports.registry import EXPLAIN_FORMATS
from policy_engine.simulation.results.wait_orders import DEFAULT_ORDER, ORDERS
from policy_engine.sweep.advice import Advice, HelpsRule

if TYPE_CHECKING:
    from policy_engine.simulation.results.records import SimulationResult
    from policy_engine.simulation.results.wait_causes import WaitCauses
    from policy_engine.simulation.scenarios.workload import Scenario

_TOPOLOGY_SUFFIXES = (".yaml", ".yml", ".json", ".py")


def _looks_like_topology(argument: str) -> bool:
    return argument == "-" or argument.lower().endswith(_TOPOLOGY_SUFFIXES)


@python_topologies("named by a --scenario's topology:")
@click.command("explain")
@click.argument("share")
@click.argument("topology", required=False, type=SafePath(dir_okay=False, allow_dash=True))
@click.option("--scenario", type=SafePath(dir_okay=False), metavar="SCENARIO",
              help="Also simulate SCENARIO (its topology is the one explained) and say why SHARE's jobs waited.")
@click.option("--wait-attribution", type=click.Choice(sorted(ORDERS)), default=DEFAULT_ORDER, show_default=True,
              help="With --scenario: which cause a waiting second is charged to when several hold.")
@click.option("--helps-above", type=FiniteFloatRange(0, 1, max_open=True), default=HelpsRule.fraction,
              show_default=True, metavar="FRACTION",
              help=f"With --scenario: a knob helps when its replay cuts the share's wait p50 (p95 where the p50 "
                   f"is 0) by more than FRACTION of it (and by at least {HelpsRule.seconds:g} s); "
                   f"docs/simulator.md \"Advice\".")
@click.option("--scheduler", metavar="ADDRESS",
              help="With --scenario: replay the knobs on the Dask cluster at ADDRESS (tcp://HOST:8786); default "
                   "$DASK_SCHEDULER_ADDRESS, else as compare: a local cluster, or in this process when that is "
                   f"sooner (the replays beyond the first round times the jobs at most {IN_PROCESS_JOB_RUNS:,}).")
@click.option("--workers", type=LocalWorkers(), metavar="N",
              help="With --scenario: replay on a local cluster of N worker processes; 1 replays in-process.")
@EXPLAIN_FORMATS.option()
def command(share: str, topology: str | None, scenario: str | None, wait_attribution: str, helps_above: float,
            scheduler: str | None, workers: int | None, allow_python: bool, output_format: str) -> None:
    """Explain SHARE (QUEUE/SHARE or a unique SHARE name) of TOPOLOGY (default: the embedded example).

    'explain TOPOLOGY SHARE', the order other commands put the file in, works too. With --scenario S the
    topology is the scenario's (giving TOPOLOGY too is exit 2), and the sentences also say why the share's
    jobs waited in a simulation of S.
    """
    if topology is not None and _looks_like_topology(share) and not _looks_like_topology(topology):
        share, topology = topology, share  # 'explain TOPOLOGY SHARE'
    if scenario is not None:
        if topology is not None:
            fail_input([_scenario_and_topology(share, topology, scenario)])
        _explain_scenario(share, scenario, wait_attribution, HelpsRule(fraction=helps_above), (scheduler, workers),
                          allow_python, output_format)
    if topology is None and _looks_like_topology(share):
        fail_input([f"explain takes SHARE [TOPOLOGY]: {share!r} looks like a topology file; "
                    f"name the share too, e.g. batch-quota explain QUEUE/SHARE {share}"])
    loaded = topology_or_exit(topology)
    node = _share_or_exit(loaded, share, topology or "the embedded example")
    output = ExplainOutput(loaded, node, check_topology(loaded))
    EXPLAIN_FORMATS.renderer(output_format)(output, sys.stdout)
    raise SystemExit(EXIT_OK)


def _scenario_and_topology(share: str, topology: str, scenario: str) -> str:
    """The one line for a topology given beside ``--scenario``, with the command that works instead (the share as
    given, in either order: ``explain a.yaml vision --scenario m.yaml`` -> ``explain vision --scenario m.yaml``)."""
    said = f"explain --scenario {scenario}: the topology is the scenario's; drop {topology!r}"
    if _looks_like_topology(share):  # two file names and no share: a working command needs the share's name
        return f"{said} and name the share: batch-quota explain QUEUE/SHARE --scenario {shlex.quote(scenario)}"
    return f"{said} (batch-quota explain {shlex.quote(share)} --scenario {shlex.quote(scenario)})"


def _share_or_exit(loaded: Topology, share: str, where: str) -> str:
    """The canonical ``QUEUE/SHARE`` of ``share``, or one line and exit 2 (ambiguous, or unknown with what is known)."""
    match = loaded.find_share(share)
    node = match.share_id
    if node is None:  # ambiguous: the resolver's words; unknown: also the file and the shares it has
        known = ", ".join(share_id(q, s) for q, s in loaded.shares()[:10]) or "none defined"
        unknown = f"no quota share {share!r} in {where} (known: {known})"
        fail_input([match.error if match.candidates and match.error else unknown])
    return node


def _explain_scenario(share: str, scenario: str, wait_attribution: str, rule: HelpsRule,
                      where: tuple[str | None, int | None], allow_python: bool, output_format: str) -> NoReturn:
    """Simulate the scenario (with the usage log the attribution reads), replay it once per knob the advice
    considers, and explain the share with its waits and what each replay showed."""
    from dataclasses import replace

    from policy_engine.simulation.core.engine import Engine
    from policy_engine.simulation.gcpause import gc_paused
    from policy_engine.simulation.results.plan_account import account
    from policy_engine.simulation.results.records import build_result
    from policy_engine.simulation.results.wait_causes import attribute

    with gc_paused():
        loaded = scenario_or_exit(scenario, allow_python)
        node = _share_or_exit(loaded.topology, share, scenario)
        engine = Engine(loaded.topology, loaded.jobs, loaded.updates, replace(loaded.settings, usage_log=True),
                        loaded.live)
        engine.run(loaded.until)
        result = build_result(engine)
        waits = attribute(result, loaded.topology, wait_attribution)
        plans = account(result, loaded.topology)  # ``None`` without plans
    advice = _replayed(loaded, node, waits, result, rule, *where)
    output = ExplainOutput(loaded.topology, node, check_topology(loaded.topology), waits, loaded.settings.backfill,
                           plan_account=plans, advice=advice, helps=rule)
    EXPLAIN_FORMATS.renderer(output_format)(output, sys.stdout)
    raise SystemExit(EXIT_OK)


def _replayed(scenario: Scenario, node: str, waits: WaitCauses, result: SimulationResult, rule: HelpsRule,
              scheduler: str | None = None, workers: int | None = None) -> tuple[Advice, ...]:
    """Each knob the advice considers, replayed on the scenario's workload with that one change, on the executor
    ``compare`` uses (in-process when a local cluster would not pay for its start), and judged by ``rule``."""
    from policy_engine.cli.commands.compare import run_designs
    from policy_engine.comparison.designs import Design
    from policy_engine.sweep.advice import judged, one_change, trials

    mine = [w for w in waits.shares if w.share == node]
    waited = {w.instance_type for w in mine if w.wait_seconds > 0}
    tried = trials(scenario.topology, node, [w for w in mine if w.wait_seconds > 0], result.shares)
    if not tried:
        return ()
    designs = []
    errors = []
    for trial in tried:
        topology = one_change(scenario.topology, trial)
        designs.append(Design(trial.vary, scenario.source, topology))
        errors.append(tuple(sorted({f.rule for f in check_topology(topology).errors})))
    runs, _ = run_designs(scenario, designs, scenario.until, False, scheduler, workers)
    return tuple(advice for trial, run, rules in zip(tried, runs, errors, strict=True)
                 for advice in judged(trial, node, waited, result.shares, run.shares, (result.time, run.time), rule,
                                     rules))
