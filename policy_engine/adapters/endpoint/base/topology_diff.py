"""Which scenario actions take the running engine from the account's last topology to its new one.

A resource change is applied to the live engine as the simulator applies the same change in
a scenario (``update_share``, ``update_environment``), so the endpoint's state after the call
is the state of a simulation with that action at that time. A change no action expresses (a
resource created or deleted, an instance type added or removed, a queue's settings) needs a
new engine that adopts every unfinished job (``Scheduler.set_topology``). A change the engine
cannot see (scheduling policies, tags, an environment's state) needs neither.
"""

from __future__ import annotations

from policy_engine.foundation.model import JobQueue, Topology
from policy_engine.simulation.topology_changes import SHARE_FIELDS, EnvironmentUpdate, ShareUpdate

#: What a live change is made of.
LiveAction = ShareUpdate | EnvironmentUpdate


def _queue_settings(queue: JobQueue) -> JobQueue:
    """The queue without its shares and what the engine ignores: what only a new engine can change."""
    return queue.model_copy(update={"shares": (), "tags": {}, "scheduling_policy": None})


def live_actions(old: Topology, new: Topology, at: float) -> list[LiveAction] | None:
    """The actions at ``at`` that turn ``old`` into ``new`` for the engine, or ``None`` when it needs a new one."""
    if old == new:
        return []
    if [e.name for e in old.service_environments] != [e.name for e in new.service_environments]:
        return None
    if [q.name for q in old.job_queues] != [q.name for q in new.job_queues]:
        return None
    actions: list[LiveAction] = []
    for before, after in zip(old.service_environments, new.service_environments, strict=True):
        if before.capacity != after.capacity:
            if before.capacity.keys() != after.capacity.keys():
                return None
            actions.append(EnvironmentUpdate(at, after.name, dict(after.capacity)))
    for queue_before, queue_after in zip(old.job_queues, new.job_queues, strict=True):
        if _queue_settings(queue_before) != _queue_settings(queue_after):
            return None
        if [s.name for s in queue_before.shares] != [s.name for s in queue_after.shares]:
            return None
        for share_before, share_after in zip(queue_before.shares, queue_after.shares, strict=True):
            if share_before.capacity.keys() != share_after.capacity.keys():
                return None
            changes = {name: getattr(share_after, name) for name in SHARE_FIELDS
                       if getattr(share_before, name) != getattr(share_after, name)}
            if changes:
                actions.append(ShareUpdate(at, f"{queue_after.name}/{share_after.name}", changes))
    return actions
