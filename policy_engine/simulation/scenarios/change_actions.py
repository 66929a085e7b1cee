"""Scenario ``actions`` that change the topology: ``update_share``, ``create_share``, ``delete_share`` and
``update_environment``, validated.

    actions:
      - {at: 3600, update_share: {share: training/QS1, capacity: {ml.g5.xlarge: 1}, strategy: LEND}}
      - {at: 5400, create_share: {share: training/QS4, capacity: {ml.g5.xlarge: 1}, strategy: LEND}}
      - {at: 6000, delete_share: {share: training/QS4}}
      - {at: 7200, update_environment: {name: gpu-env, capacity: {ml.g5.xlarge: 2}}}

A share created mid-run is in the engine's topology from the start as a *placeholder* that holds,
lends and accepts nothing (capacity 0 of the types it will have, RESERVE, DISABLED); its creation is
an update to its real settings, and a deletion an update back to the placeholder's. So every change
goes through ``ShareUpdate``, and the engine needs no share to appear or vanish mid-run.

Every problem is one line naming the action and the field; the values follow AWS's rules
(``maxCapacity`` >= 1 for a share, ``borrowLimit`` >= -1 and only with LEND_AND_BORROW).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_args

from policy_engine.foundation import limits
from policy_engine.foundation.aws_rules import SharingProblem, sharing_problems
from policy_engine.foundation.diagnostics import DataPath
from policy_engine.foundation.model import UNLIMITED_BORROW, QuotaShare, State, Strategy, Topology
from policy_engine.simulation.inputs.input_problems import unknown_key
from policy_engine.simulation.topology_changes import SHARE_FIELDS, EnvironmentUpdate, ShareUpdate

STRATEGIES: tuple[str, ...] = get_args(Strategy)
STATES: tuple[str, ...] = get_args(State)

#: ``report(path, message)``: one problem at ``path`` (the action's data path, then the field's keys)
Report = Callable[[DataPath, str], None]
#: A share reference -> ``(QUEUE/SHARE, its instance types)``, or the one-line problem with it.
Resolve = Callable[[str], "tuple[str, tuple[str, ...]] | str"]


class _Noted:
    """A ``Report`` that notes whether it was called: a check goes on past a problem (to report them all), then
    builds nothing."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.failed = False

    def __call__(self, where: DataPath, text: str) -> None:
        self.failed = True
        self.report(where, text)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _capacity(value: Any, known: tuple[str, ...], minimum: int, where: DataPath, owner: str,
              report: Report) -> dict[str, int] | None:
    if not isinstance(value, dict) or not value:
        report(where, f"must be a non-empty mapping of instance type -> instances, got {value!r}")
        return None
    good = True
    for instance_type, count in value.items():
        if instance_type not in known:
            report((*where, str(instance_type)), f"{owner} has no {instance_type!r} in the topology (it has: "
                                               f"{', '.join(known) or 'none'}); a new instance type cannot appear "
                                               f"mid-run: declare it in the topology")
            good = False
        elif not _is_int(count) or count < minimum:
            report((*where, str(instance_type)), f"must be an integer >= {minimum}, got {count!r}")
            good = False
    return dict(value) if good else None


def share_update(at: float, body: Any, where: DataPath, topology: Topology, resolve: Resolve,
                 report: Report) -> ShareUpdate | None:
    """``update_share: {share, capacity, strategy, borrow_limit, in_share_preemption, state}``."""
    if not isinstance(body, dict):
        report(where, "must be a mapping {share: NAME, capacity: {...}, strategy: ..., ...}")
        return None
    allowed = ("share", *SHARE_FIELDS)
    start = problems = 0

    def problem(loc: DataPath, text: str) -> None:
        nonlocal problems
        problems += 1
        report(loc, text)

    for key in body:
        if key not in allowed:
            problem(where, unknown_key(key, allowed))
    ref = body.get("share")
    resolved = resolve(ref) if isinstance(ref, str) and ref else f"missing: the share to update, got {ref!r}"
    if isinstance(resolved, str):
        problem((*where, "share"), resolved)
        return None
    node, types = resolved
    share = topology.resolve_share(node)[0][1]
    changes: dict[str, Any] = {}
    if "capacity" in body:
        capacity = _capacity(body["capacity"], types, 1, (*where, "capacity"), f"share {node}", problem)
        if capacity is not None:
            changes["capacity"] = capacity
    if "strategy" in body:
        if body["strategy"] not in STRATEGIES:
            problem((*where, "strategy"), f"must be one of {', '.join(STRATEGIES)}, got {body['strategy']!r}")
        else:
            changes["strategy"] = body["strategy"]
    if "in_share_preemption" in body:
        if not isinstance(body["in_share_preemption"], bool):
            problem((*where, "in_share_preemption"), f"must be true or false, got {body['in_share_preemption']!r}")
        else:
            changes["in_share_preemption"] = body["in_share_preemption"]
    if "state" in body:
        if body["state"] not in STATES:
            problem((*where, "state"), f"must be one of {', '.join(STATES)}, got {body['state']!r}")
        else:
            changes["state"] = body["state"]
    strategy = changes.get("strategy", share.strategy)
    if "borrow_limit" in body:
        limit = body["borrow_limit"]
        sharing = sharing_problems(strategy, limit)
        if limit is not None and (not _is_int(limit) or SharingProblem.OUT_OF_RANGE in sharing):
            bound = limits.BORROW_LIMIT
            within = f">= {bound.minimum}" if not _is_int(limit) or bound.below(limit) else bound.range_text()
            problem((*where, "borrow_limit"), f"must be an integer {within} ({UNLIMITED_BORROW} = unlimited) or null, "
                    f"got {limit!r}")
        elif SharingProblem.NOT_BORROWING in sharing:
            problem((*where, "borrow_limit"), f"only valid with strategy LEND_AND_BORROW (the share is {strategy})")
        else:
            changes["borrow_limit"] = limit
    elif strategy != "LEND_AND_BORROW" and share.borrow_limit is not None:
        changes["borrow_limit"] = None  # AWS: borrowLimit only exists for LEND_AND_BORROW
    if len(changes) == 0 and problems == start:
        problem(where, f"changes nothing: give at least one of {', '.join(SHARE_FIELDS)}")
    return ShareUpdate(at, node, changes) if problems == start else None


def environment_update(at: float, body: Any, where: DataPath, topology: Topology,
                       report: Report) -> EnvironmentUpdate | None:
    """``update_environment: {name, capacity}``."""
    if not isinstance(body, dict):
        report(where, "must be a mapping {name: ENVIRONMENT, capacity: {instance type: instances}}")
        return None
    problem = _Noted(report)
    for key in body:
        if key not in ("name", "capacity"):
            problem(where, unknown_key(key, ("name", "capacity")))
    name = body.get("name")
    environment = topology.environment(name) if isinstance(name, str) else None
    if environment is None or not isinstance(name, str):
        known = ", ".join(e.name for e in topology.service_environments) or "none defined"
        problem((*where, "name"), f"no service environment {name!r} in the topology (known: {known})")
        return None
    types = list(environment.capacity)
    for queue in topology.job_queues:
        if queue.service_environment == name:
            types += [t for share in queue.shares for t in share.capacity if t not in types]
    capacity = _capacity(body.get("capacity"), tuple(types), 0, (*where, "capacity"), f"environment {name}", problem)
    return None if problem.failed or capacity is None else EnvironmentUpdate(at, name, capacity)


#: Fields ``create_share`` must give (the rest default as CreateQuotaShare's do).
CREATE_REQUIRED = ("capacity", "strategy")


def placeholder(name: str, instance_types: tuple[str, ...]) -> QuotaShare:
    """A share before its creation or after its deletion: it holds, lends and accepts nothing."""
    return QuotaShare.model_construct(name=name, capacity=dict.fromkeys(instance_types, 0), strategy="RESERVE",
                                      borrow_limit=None, in_share_preemption=False, state="DISABLED", tags={},
                                      system_tags={})


def placeholder_changes(instance_types: tuple[str, ...]) -> dict[str, Any]:
    """The ``ShareUpdate`` changes that make a share its placeholder again (``delete_share``)."""
    return {"capacity": dict.fromkeys(instance_types, 0), "strategy": "RESERVE", "borrow_limit": None,
            "in_share_preemption": False, "state": "DISABLED"}


def with_created_shares(topology: Topology, actions: Any) -> tuple[Topology, set[str]]:
    """``topology`` plus a placeholder for every share a ``create_share`` action names (well-formed ones:
    the full check reports the others), and the ids of those shares."""
    created: dict[str, dict[str, set[str]]] = {}
    for action in actions if isinstance(actions, list) else ():
        body = action.get("create_share") if isinstance(action, dict) else None
        ref = body.get("share") if isinstance(body, dict) else None
        if not isinstance(body, dict) or not isinstance(ref, str) or ref.count("/") != 1:
            continue
        queue_name, name = ref.split("/")
        queue = topology.queue(queue_name)
        if queue is None or queue.share(name) is not None:
            continue
        environment = topology.environment(queue.service_environment)
        known = set(environment.capacity) if environment is not None else set()
        capacity = body.get("capacity")
        types = {t for t in capacity if t in known} if isinstance(capacity, dict) else set()
        created.setdefault(queue_name, {}).setdefault(name, set()).update(types)
    if not created:
        return topology, set()
    queues = []
    for queue in topology.job_queues:
        extra = created.get(queue.name, {})
        shares = queue.shares + tuple(placeholder(name, tuple(sorted(types))) for name, types in extra.items())
        queues.append(queue.model_copy(update={"shares": shares}) if extra else queue)
    ids = {f"{queue}/{name}" for queue, names in created.items() for name in names}
    return topology.model_copy(update={"job_queues": tuple(queues)}), ids


def share_creation(at: float, body: Any, where: DataPath, topology: Topology, created: set[str], resolve: Resolve,
                   report: Report) -> ShareUpdate | None:
    """``create_share: {share: QUEUE/NAME, capacity, strategy, borrow_limit, in_share_preemption, state}``:
    a share the topology does not have yet (``with_created_shares`` made its placeholder)."""
    if not isinstance(body, dict):
        report(where, "must be a mapping {share: QUEUE/NAME, capacity: {...}, strategy: ...}")
        return None
    ref = body.get("share")
    if not isinstance(ref, str) or ref.count("/") != 1:
        report((*where, "share"), f"must be QUEUE/NAME of the share to create, got {ref!r}")
        return None
    queue = topology.queue(ref.split("/")[0])
    if queue is None:
        known = ", ".join(q.name for q in topology.job_queues) or "none defined"
        report((*where, "share"), f"no job queue {ref.split('/')[0]!r} in the topology (known: {known})")
        return None
    if ref not in created:
        report((*where, "share"), f"quota share {ref} is already in the topology (update_share changes it)")
        return None
    missing = [key for key in CREATE_REQUIRED if key not in body]
    if missing:
        report(where, f"missing: {', '.join(missing)} (CreateQuotaShare requires them)")
        return None
    problem = _Noted(report)
    update = share_update(at, body, where, topology, resolve, problem)
    if problem.failed or update is None:
        return None
    defaults = {"borrow_limit": None, "in_share_preemption": False, "state": "ENABLED"}
    return ShareUpdate(at, update.share, defaults | dict(update.changes))


def share_deletion(at: float, body: Any, where: DataPath, resolve: Resolve, report: Report) -> ShareUpdate | None:
    """``delete_share: {share}``: the share becomes its placeholder (AWS deletes only a DISABLED share whose jobs
    have all finished; here its unfinished jobs, if any, keep running)."""
    if not isinstance(body, dict) or set(body) != {"share"} or not isinstance(body["share"], str):
        report(where, f"must be a mapping {{share: NAME}}, got {body!r}")
        return None
    resolved = resolve(body["share"])
    if isinstance(resolved, str):
        report((*where, "share"), resolved)
        return None
    node, types = resolved
    return ShareUpdate(at, node, placeholder_changes(types))
