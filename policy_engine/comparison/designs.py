"""Which designs ``compare`` runs, on which workload: a scenario and several topologies, or several scenarios
that share one workload.

Every design runs the same jobs, actions and settings from time 0. The workload names the first design's shares;
``--rename OLD=NEW`` (as ``diff`` reads it) says what a share, queue or environment is called in the later designs,
and the jobs and actions are renamed for them. A job naming a share or instance type a design lacks is one
problem, as is an action naming an object a design lacks: compare never drops a job in silence.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TypeVar

from policy_engine.foundation.model import Topology, share_id
from policy_engine.inputs.loading import LoadError, load_topology
from policy_engine.inputs.renames import Renames, Side, check_renames
from policy_engine.simulation.scenarios.workload import Scenario, load_scenario
from policy_engine.simulation.topology_changes import EnvironmentUpdate, ShareUpdate

T = TypeVar("T")

@dataclass(frozen=True)
class Design:
    """One topology to run, under a unique label, with the names the workload's shares have in it."""

    label: str
    source: str
    topology: Topology
    #: workload share name -> this design's (only the renamed ones)
    shares: dict[str, str] = field(default_factory=dict)
    #: workload environment name -> this design's (only the renamed ones)
    environments: dict[str, str] = field(default_factory=dict)

    def share(self, name: str) -> str:
        return self.shares.get(name, name)


def labels(sources: Sequence[str]) -> list[str]:
    """Each source's file stem, made unique (``A``, ``A#2``): a design compared with itself keeps two columns."""
    out: list[str] = []
    for source in sources:
        stem = Path(source).stem or source
        label, number = stem, 2
        while label in out:
            label, number = f"{stem}#{number}", number + 1
        out.append(label)
    return out


def _renamed(renames: Renames, topology: Topology) -> tuple[dict[str, str], dict[str, str]]:
    shares = {node: renames.share(node) for q, s in topology.shares() if renames.share(node := share_id(q, s)) != node}
    environments = {e.name: renames.environment(e.name) for e in topology.service_environments
                    if renames.environment(e.name) != e.name}
    return shares, environments


def _rename_hint(missing: str, design: Design, named: set[str]) -> str:
    """``--rename OLD=NEW`` for a share the workload names and the design lacks: the design's share the workload
    never names, when it is the only one or the closest in name."""
    unused = [node for q, s in design.topology.shares() if (node := share_id(q, s)) not in named]
    close = difflib.get_close_matches(missing, unused, n=1, cutoff=0.6)
    guess = close[0] if close else unused[0] if len(unused) == 1 else None
    return f"; if it is called otherwise there, say so: --rename {missing}={guess}" if guess else \
        "; declare renames with --rename OLD=NEW"


def workload_problems(scenario: Scenario, design: Design) -> list[str]:
    """What the workload names and ``design`` lacks: one line per missing share (or share's instance type) with
    how many jobs name it and the first, and per action naming a missing object; never one line per job."""
    types = {share_id(q, s): set(s.capacity) for q, s in design.topology.shares()}
    named = {design.share(job.share) for job in scenario.jobs}
    missing: dict[tuple[str, str | None], list[str]] = {}
    for job in scenario.jobs:
        name = design.share(job.share)
        if name not in types:
            missing.setdefault((name, None), []).append(job.name)
        elif job.instance_type not in types[name]:
            missing.setdefault((name, job.instance_type), []).append(job.name)
    problems: list[str] = []
    for (name, instance_type), jobs in missing.items():
        count = f"{len(jobs):,} job(s) name it (the first: {jobs[0]})"
        if instance_type is None:
            problems.append(f"{scenario.source}: jobs: design {design.label} ({design.source}) has no quota share "
                            f"{name}; {count}{_rename_hint(name, design, named)}")
        else:
            problems.append(f"{scenario.source}: jobs: {name} has no {instance_type} in design {design.label} "
                            f"({design.source}); {len(jobs):,} job(s) of that type name it (the first: {jobs[0]})")
    for action in scenario.updates:
        if isinstance(action, ShareUpdate) and design.share(action.share) not in types:
            problems.append(f"{scenario.source}: actions: update_share names {design.share(action.share)}, which "
                            f"design {design.label} lacks")
        if isinstance(action, EnvironmentUpdate) and \
                design.topology.environment(design.environments.get(action.name, action.name)) is None:
            problems.append(f"{scenario.source}: actions: update_environment names {action.name}, which design "
                            f"{design.label} lacks")
    return problems


def _side(design: Design) -> Side:
    return Side(f"design {design.label} ({design.source})", design.topology)


def _with_renames(first: Topology, designs: list[Design], renames: Sequence[str]) -> list[Design]:
    """Each later design with the names the workload's shares have in it; ``LoadError``: one line per bad
    ``--rename``, naming the design (the first, or each later one) that lacks what it names."""
    if not renames:
        return designs
    declared = check_renames(renames, replace(_side(designs[0]), topology=first), [_side(d) for d in designs[1:]])
    out = [designs[0]]
    for design, renamed in zip(designs[1:], declared, strict=True):
        shares, environments = _renamed(renamed, first)
        out.append(replace(design, shares=shares, environments=environments))
    return out


def _load_each(load: Callable[[str], T], paths: Sequence[str], problems: list[str]) -> list[T]:
    """Each path that loads, loaded; the problems of the others added to ``problems`` (every file's, not the
    first failing file's only), each once: a file read twice (the scenario's own topology given as a design too,
    or a design given twice) says its problems once."""
    out: list[T] = []
    for path in paths:
        try:
            out.append(load(path))
        except LoadError as error:
            problems += [line for line in error.problems if line not in problems]
    return out


def from_topologies(scenario_path: str, topologies: Sequence[str], renames: Sequence[str] = (),
                    allow_python: bool = False) -> tuple[Scenario, list[Design]]:
    """``compare SCENARIO --topology A --topology B``: the scenario's workload on each topology."""
    problems: list[str] = []
    scenarios = _load_each(partial(load_scenario, allow_python=allow_python), [scenario_path], problems)
    loaded = _load_each(partial(load_topology, allow_python=allow_python), topologies, problems)
    if problems:
        raise LoadError(problems)
    scenario = scenarios[0]
    designs = [Design(label, path, topology)
               for label, path, topology in zip(labels(topologies), topologies, loaded, strict=True)]
    return scenario, _checked(scenario, _with_renames(designs[0].topology, designs, renames))


def from_scenarios(paths: Sequence[str], renames: Sequence[str] = (),
                   allow_python: bool = False) -> tuple[Scenario, list[Design]]:
    """``compare S1 S2``: each scenario's topology, on the first scenario's workload, which every other scenario
    must hold too (the same jobs, actions and settings; a different workload would not compare designs)."""
    problems: list[str] = []
    scenarios = _load_each(partial(load_scenario, allow_python=allow_python), paths, problems)
    if problems:
        raise LoadError(problems)
    first = scenarios[0]
    for other in scenarios[1:]:
        problems += _workload_differences(first, other, bool(renames))
    if problems:
        raise LoadError(problems)
    designs = [Design(label, s.source, s.topology) for label, s in zip(labels(paths), scenarios, strict=True)]
    return first, _checked(first, _with_renames(first.topology, designs, renames))


def _workload_differences(first: Scenario, other: Scenario, renamed: bool) -> list[str]:
    """What makes ``other``'s workload another one than ``first``'s (job names, sizes, times; settings)."""
    problems = []
    if len(first.jobs) != len(other.jobs):
        problems.append(f"{other.source}: {len(other.jobs):,} job(s), {first.source} {len(first.jobs):,}: compare runs "
                        "the designs on one workload; give one scenario and --topology per design")
    elif not renamed and first.jobs != other.jobs:
        at = next(i for i, (a, b) in enumerate(zip(first.jobs, other.jobs, strict=True)) if a != b)
        problems.append(f"{other.source}: jobs[{at}] ({other.jobs[at].name}) differs from {first.source}'s "
                        "(compare runs the designs on one workload; give one scenario and --topology per design)")
    elif renamed and [j._replace(share="") for j in first.jobs] != [j._replace(share="") for j in other.jobs]:
        problems.append(f"{other.source}: its jobs differ from {first.source}'s beyond their shares' names")
    if first.settings != other.settings:
        problems.append(f"{other.source}: settings differ from {first.source}'s (backfill, victim policy, delays "
                        "are assumptions of the run, not of a design)")
    if len(first.updates) != len(other.updates):
        problems.append(f"{other.source}: {len(other.updates)} action(s), {first.source} {len(first.updates)}")
    if first.live != other.live:
        problems.append(f"{other.source}: jobs on capacity at time 0 differ from {first.source}'s")
    return problems


def _checked(scenario: Scenario, designs: list[Design]) -> list[Design]:
    problems = [problem for design in designs for problem in workload_problems(scenario, design)]
    if problems:
        raise LoadError(problems)
    return designs
