"""One candidate as the simulator sees it: the scenario with the varied fields set.

Topology fields are set with ``model_copy`` on the frozen records (the values are typed by
the grammar already, and ``check`` runs on the result); settings with ``dataclasses.replace``;
workload transforms build new job tuples, leaving the shared workload untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from policy_engine.foundation import bounds
from policy_engine.foundation.model import JobQueue, Topology, share_id
from policy_engine.simulation.core.engine import Action, SimulationSettings
from policy_engine.simulation.core.jobs import JobSpec
from policy_engine.simulation.scenarios.workload import Scenario
from policy_engine.sweep.grammar import Axis
from policy_engine.sweep.guarantee_policy import GuaranteePolicy
from policy_engine.sweep.guarantee_policy import apply as apply_guarantee_policy


@dataclass(frozen=True)
class Variant:
    topology: Topology
    jobs: Sequence[JobSpec]
    updates: Sequence[Action]
    settings: SimulationSettings


def _set_share(topology: Topology, axis: Axis, value: Any) -> Topology:
    queues: list[JobQueue] = []
    for queue in topology.job_queues:
        shares = []
        for share in queue.shares:
            if share_id(queue, share) == axis.target:
                if axis.field == "capacity":
                    share = share.model_copy(update={"capacity": {**share.capacity, axis.instance_type: value}})
                else:
                    share = share.model_copy(update={axis.field: value})
            shares.append(share)
        queues.append(queue.model_copy(update={"shares": tuple(shares)}))
    return topology.model_copy(update={"job_queues": tuple(queues)})


def _set_environment(topology: Topology, axis: Axis, value: Any) -> Topology:
    environments = tuple(
        env.model_copy(update={"capacity": {**env.capacity, axis.instance_type: value}}) if env.name == axis.target
        else env
        for env in topology.service_environments
    )
    return topology.model_copy(update={"service_environments": environments})


def _transfer(topology: Topology, axis: Axis, count: int) -> Topology:
    """``count`` instances of the axis's type from the giver's limit to the partner's (their sum is kept)."""
    moved = {axis.target: -count, axis.partner: count}
    queues: list[JobQueue] = []
    for queue in topology.job_queues:
        shares = []
        for share in queue.shares:
            delta = moved.get(share_id(queue, share))
            if delta:
                capacity = {**share.capacity, axis.instance_type or "": share.capacity.get(axis.instance_type or "", 0)
                            + delta}
                share = share.model_copy(update={"capacity": capacity})
            shares.append(share)
        queues.append(queue.model_copy(update={"shares": tuple(shares)}))
    return topology.model_copy(update={"job_queues": tuple(queues)})


def topology_for(topology: Topology, axes: Sequence[Axis], values: dict[str, Any],
                 guarantees: GuaranteePolicy = GuaranteePolicy.KEEP) -> Topology:
    """The candidate topology: ``topology`` with every share, transfer and environment axis set, and its
    guarantees as ``guarantees`` says when a share's limit moved."""
    candidate = topology
    for axis in axes:
        if axis.kind == "share":
            candidate = _set_share(candidate, axis, values[axis.path])
        elif axis.kind == "transfer":
            candidate = _transfer(candidate, axis, values[axis.path])
        elif axis.kind == "environment":
            candidate = _set_environment(candidate, axis, values[axis.path])
    return apply_guarantee_policy(guarantees, topology, candidate)


def variant(scenario: Scenario, axes: Sequence[Axis], values: dict[str, Any],
            guarantees: GuaranteePolicy = GuaranteePolicy.KEEP) -> Variant:
    """The scenario as one candidate sees it."""
    topology = topology_for(scenario.topology, axes, values, guarantees)
    settings = scenario.settings
    scale = duration_scale = 1.0
    for axis in axes:
        value = values[axis.path]
        if axis.kind == "settings":
            settings = replace(settings, **{axis.field: value})
        elif axis.kind == "workload" and axis.field == "scale":
            scale = value
        elif axis.kind == "workload":
            duration_scale = value
    jobs: Sequence[JobSpec] = scenario.jobs
    updates: Sequence[Action] = scenario.updates
    team_scales = {axis.target: values[axis.path] for axis in axes if axis.kind == "profile"}
    if team_scales:  # a team's rate changes its draws: the profile draws the candidate's jobs anew
        profiled = scenario.profile.jobs(topology, {share: scenario.profile.scales.get(share, 1.0) * factor
                                                    for share, factor in team_scales.items()})
        jobs = profiled[0]
    if scale != 1.0 or duration_scale != 1.0:
        jobs = [_scaled(spec, scale, duration_scale) for spec in jobs]
        latest = max((max(spec.submit_at, spec.duration) for spec in jobs), default=0.0)
        if latest > bounds.MAX_SECONDS:  # a job past the bound would be dropped or overflow: the candidate is refused
            raise ValueError(f"workload.scale={scale:g} and duration_scale={duration_scale:g} give a job a time of "
                             f"{latest:.3g} s, past the {bounds.MAX_SECONDS:,} s every time is bounded by")
        # an update keeps its place relative to the job it changes: its time scales like the submissions
        updates = [replace(update, at=update.at / scale) for update in updates]
    return Variant(topology, jobs, updates, settings)


def _scaled(spec: JobSpec, scale: float, duration_scale: float) -> JobSpec:
    """Arrival-rate scaling divides submission times; duration scaling multiplies the work (and a failure point)."""
    fail_after = spec.fail_after * duration_scale if spec.fail_after is not None else None
    return spec._replace(submit_at=spec.submit_at / scale, duration=spec.duration * duration_scale,
                         fail_after=fail_after)
