"""Which designs ``compare`` runs, on which workload: a scenario and several topologies, or several scenarios
that share one workload.

Every design runs the same jobs, actions and settings from time 0. The workload names the first design's shares;
``--rename OLD=NEW`` (as ``diff`` reads it) says what a share, queue or environment is called in the later designs,
and the jobs and actions are renamed for them. A job naming a share or instance type a design lacks is one
problem, as is an action naming an object a design lacks: compare never drops a job in silence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TypeVar

from policy_engine.changes.renames import Renames, Side, check_renames
from policy_engine.loading import LoadError, load_topology
from policy_engine.model import Topology, share_id
from policy_engine.simulation.inputs.workload import Scenario, load_scenario
from policy_engine.simulation.topology_changes import EnvironmentUpdate, ShareUpdate

T = TypeVar("T")

#: Problems listed per design before the rest are counted (a workload of a million jobs against the wrong design).
MAX_PROBLEMS = 20


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


def workload_problems(scenario: Scenario, design: Design) -> list[str]:
    """Jobs and actions of the workload that name what ``design`` lacks, one line each (the first few)."""
    types = {share_id(q, s): set(s.capacity) for q, s in design.topology.shares()}
    problems: list[str] = []
    count = 0
    for job in scenario.jobs:
        name = design.share(job.share)
        if name not in types:
            problem = f"jobs[{job.name}].share: design {design.label} ({design.source}) has no quota share {name}"
        elif job.instance_type not in types[name]:
            problem = (f"jobs[{job.name}].instance_type: {name} has no {job.instance_type} in design "
                       f"{design.label} ({design.source})")
        else:
            continue
        count += 1
        if count <= MAX_PROBLEMS:
            problems.append(f"{scenario.source}: {problem}")
    if count > MAX_PROBLEMS:
        problems.append(f"{scenario.source}: ... and {count - MAX_PROBLEMS} more job(s) design {design.label} cannot "
                        "run (declare renames with --rename OLD=NEW)")
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
