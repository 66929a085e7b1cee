"""CloudFormation templates' AWS Batch quota resources -> a topology mapping.

Reads ``AWS::Batch::ServiceEnvironment``, ``SchedulingPolicy``, ``JobQueue`` and ``QuotaShare``
from any template (a CDK app's ``cdk.out``, SAM, hand-written; JSON or YAML with the short
``!Ref``/``!GetAtt`` forms), resolving ``Ref`` and ``Fn::GetAtt`` among the template's own
resources (``template_reader``) and, when several templates are read as one (a CDK app's
stacks), ``Fn::ImportValue`` against the others' exports. Anything else is named as
unresolvable, never guessed: every such place is one problem line.

A resource without a name property (CloudFormation names it at deploy) is read under its
logical ID (``STACK-ID`` when two templates' unnamed resources share one); ``TemplateRead``
records which objects are so named, and where every object came from.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from policy_engine.foundation.diagnostics import DataPath, LoadError
from policy_engine.foundation.model import Topology
from policy_engine.inputs.api_shapes import split_tags
from policy_engine.inputs.template_file import is_template, read_template_file
from policy_engine.inputs.template_reader import (
    ENVIRONMENT,
    NAME_PROPERTIES,
    POLICY,
    QUEUE,
    SHARE,
    TemplateReader,
    target_of,
)
from policy_engine.inputs.topology_data import topology_from_data

__all__ = ["Origin", "TemplateRead", "fair_share_policies", "is_template", "load_template", "read_template_file",
           "read_templates", "template_data"]

Data = dict[str, Any]

#: Which object an origin is of: ``("environment", NAME)``, ``("queue", NAME)``, ``("share", QUEUE, SHARE)`` or
#: ``("policy", QUEUE)`` (a queue's scheduling policy, recorded only when named at deploy).
ObjectKey = tuple[str, ...]

#: How every output marks an object whose name stands in for the one CloudFormation generates.
NAMED_AT_DEPLOY = "named at deploy"


@dataclass(frozen=True)
class Origin:
    """Where an object of the topology was read: its template and resource."""

    source: str
    logical_id: str
    #: The template gives no name: the object's name is its logical ID (CloudFormation names it at deploy).
    named_at_deploy: bool = False


@dataclass
class TemplateRead:
    """The topology mapping read from templates, where each object came from, and the queues skipped."""

    data: Data
    origins: dict[ObjectKey, Origin] = field(default_factory=dict)
    #: ``(source, logical id, reason)`` of each queue read but not imported.
    skipped: list[tuple[str, str, str]] = field(default_factory=list)

    def named_at_deploy(self) -> list[str]:
        """The objects named at deploy, as outputs name them (``job_queues[Q]``, ``Q/S``, ...), in reading order."""
        return [_object_label(key) for key, origin in self.origins.items() if origin.named_at_deploy]


def _object_label(key: ObjectKey) -> str:
    if key[0] == "share":
        return f"{key[1]}/{key[2]}"
    if key[0] == "policy":
        return f"job_queues[{key[1]}].scheduling_policy"
    return f"{'service_environments' if key[0] == 'environment' else 'job_queues'}[{key[1]}]"


def _tags(reader: TemplateReader, properties: Data, where: DataPath) -> tuple[dict[str, str], dict[str, str]]:
    raw = properties.get("Tags")
    if raw is None:
        return {}, {}
    if isinstance(raw, list):  # the list form some resource types use
        raw = {item.get("Key"): item.get("Value") for item in raw if isinstance(item, dict)}
    tags = reader.literal(raw, (*where, "Tags"))
    return split_tags(tags if isinstance(tags, dict) else {})


def _with_tags(data: Data, tags: tuple[dict[str, str], dict[str, str]]) -> Data:
    if tags[0]:
        data["tags"] = tags[0]
    if tags[1]:
        data["system_tags"] = tags[1]
    return data


def _capacity(reader: TemplateReader, value: Any, where: DataPath) -> dict[str, Any]:
    items = reader.literal(value, where)
    if not isinstance(items, list):
        if items is not None:
            reader.problem(where, "must be a list of {CapacityUnit, MaxCapacity}")
        return {}
    capacity = {}
    for item in items:
        unit = item.get("CapacityUnit") if isinstance(item, dict) else None
        if not isinstance(unit, str):
            reader.problem(where, f"each item must be {{CapacityUnit: TYPE, MaxCapacity: N}}, got {item!r}")
            continue
        capacity[unit] = item.get("MaxCapacity")
    return capacity


def _mapping(reader: TemplateReader, value: Any, where: DataPath) -> Data:
    """A property that must be a mapping (``{}`` when absent); anything else is one problem."""
    found = reader.literal(value or {}, where) or {}
    if not isinstance(found, dict):
        reader.problem(where, f"must be a mapping, got {found!r}")
        return {}
    return found


def _environments(reader: TemplateReader) -> dict[str, Data]:
    """Service environments by logical id."""
    envs: dict[str, Data] = {}
    for logical_id, props in reader.of_type(ENVIRONMENT):
        where = ("Resources", logical_id, "Properties")
        name = reader.name(logical_id, props, "ServiceEnvironmentName", where)
        kind = props.get("ServiceEnvironmentType", "SAGEMAKER_TRAINING")
        if kind != "SAGEMAKER_TRAINING":
            reader.problem((*where, "ServiceEnvironmentType"), f"{kind!r}: only SAGEMAKER_TRAINING is read")
        data = {"name": name, "capacity": _capacity(reader, props.get("CapacityLimits"), (*where, "CapacityLimits"))}
        if "State" in props:
            data["state"] = reader.literal(props["State"], (*where, "State"))
        envs[logical_id] = _with_tags(data, _tags(reader, props, where))
    return envs


def _quota_policies(reader: TemplateReader) -> dict[str, Any]:
    """Quota share policies' names by logical id (fair-share policies are left out: their queues are skipped)."""
    policies: dict[str, Any] = {}
    for logical_id, props in reader.of_type(POLICY):
        if "QuotaSharePolicy" in props:
            policies[logical_id] = reader.name(logical_id, props, "Name", ("Resources", logical_id, "Properties"))
    return policies


def _queue(reader: TemplateReader, logical_id: str, props: Data, envs: dict[str, Data],
           policies: dict[str, Any]) -> Data | None:
    """One quota-managed queue without its shares; ``None`` when skipped (listed) or not readable (a problem)."""
    where = ("Resources", logical_id, "Properties")
    if props.get("JobQueueType") != "SAGEMAKER_TRAINING":
        reader.skipped.append((logical_id, f"JobQueueType {props.get('JobQueueType', 'ECS (the default)')}: "
                                           "only SAGEMAKER_TRAINING queues have quota shares"))
        return None
    name = reader.name(logical_id, props, "JobQueueName", where)
    if "SchedulingPolicyArn" not in props:
        reader.skipped.append((logical_id, "no SchedulingPolicyArn: a FIFO queue, not quota-managed"))
        return None
    policy_ref = reader.reference(props["SchedulingPolicyArn"], (*where, "SchedulingPolicyArn"), POLICY)
    if policy_ref is None:
        return None  # already named as a problem
    if policy_ref.startswith("id:") and policy_ref[3:] not in policies:
        reader.skipped.append((logical_id, f"scheduling policy {policy_ref[3:]} is not a quota-share policy"))
        return None
    raw_order = props.get("ServiceEnvironmentOrder") or []
    env_name = None
    if len(raw_order) != 1:
        reader.problem((*where, "ServiceEnvironmentOrder"),
                       f"{len(raw_order)} service environments; a quota-managed queue has exactly one")
    else:
        env_ref = reader.reference(raw_order[0].get("ServiceEnvironment"),
                                   (*where, "ServiceEnvironmentOrder", 0, "ServiceEnvironment"), ENVIRONMENT)
        if env_ref and env_ref.startswith("id:"):
            env_name = envs[env_ref[3:]]["name"]
        elif env_ref:
            env_name = env_ref[5:]
    data: Data = {"name": name, "service_environment": env_name}
    for key, field_name in (("Priority", "priority"), ("State", "state")):
        if key in props:
            data[field_name] = reader.literal(props[key], (*where, key))
    actions = reader.literal(props.get("JobStateTimeLimitActions") or [], (*where, "JobStateTimeLimitActions"))
    if actions:
        data["job_state_time_limit_actions"] = [
            {"max_time_seconds": a.get("MaxTimeSeconds"), "reason": a.get("Reason"), "action": a.get("Action"),
             "state": a.get("State")} for a in actions]
    policy_name = policies[policy_ref[3:]] if policy_ref.startswith("id:") else policy_ref[5:]
    if policy_name and policy_name != f"{name}-quota-policy":
        data["scheduling_policy"] = policy_name
    data["shares"] = []
    return _with_tags(data, _tags(reader, props, where))


def _share(reader: TemplateReader, logical_id: str, props: Data, queues: dict[str, Data],
           by_name: dict[str, Data]) -> Data | None:
    """One quota share, appended to its queue's ``shares`` (``queues``: this template's, by logical ID;
    ``by_name``: every template's)."""
    where = ("Resources", logical_id, "Properties")
    queue_ref = reader.reference(props.get("JobQueue"), (*where, "JobQueue"), QUEUE)
    if queue_ref is None:
        return None
    queue = queues.get(queue_ref[3:]) if queue_ref.startswith("id:") else by_name.get(queue_ref[5:])
    if queue is None:
        named = queue_ref[3:] if queue_ref.startswith("id:") else queue_ref[5:]
        reader.problem((*where, "JobQueue"),
                       f"job queue {named!r} is not a quota-managed SAGEMAKER_TRAINING queue of this template")
        return None
    sharing = _mapping(reader, props.get("ResourceSharingConfiguration"), (*where, "ResourceSharingConfiguration"))
    data: Data = {"name": reader.name(logical_id, props, "QuotaShareName", where),
                  "capacity": _capacity(reader, props.get("CapacityLimits"), (*where, "CapacityLimits")),
                  "strategy": sharing.get("Strategy")}
    if "BorrowLimit" in sharing:
        data["borrow_limit"] = sharing["BorrowLimit"]
    preemption = _mapping(reader, props.get("PreemptionConfiguration"), (*where, "PreemptionConfiguration"))
    if preemption.get("InSharePreemption") == "ENABLED":
        data["in_share_preemption"] = True
    if "State" in props:
        data["state"] = reader.literal(props["State"], (*where, "State"))
    queue["shares"].append(_with_tags(data, _tags(reader, props, where)))
    return queue


def _stand_in_names(readers: Sequence[TemplateReader]) -> None:
    """Each unnamed environment, policy and queue's name: its logical ID, or ``STACK-ID`` when that is taken by
    another template's object of its type (names are per account and Region; shares' only per queue)."""
    taken: Counter[tuple[str, str]] = Counter()
    for reader in readers:
        for logical_id, kind, props in reader.quota_resources():
            taken[(kind, reader.literal_name(kind, props) or logical_id)] += 1
    for reader in readers:
        for logical_id, kind, props in reader.quota_resources():
            if props.get(NAME_PROPERTIES[kind]) is None:
                clash = kind != SHARE and taken[(kind, logical_id)] > 1
                reader.stand_ins[logical_id] = f"{reader.stack}-{logical_id}" if clash else logical_id


def read_templates(templates: Sequence[tuple[str, Data]]) -> TemplateRead:
    """The topology mapping the templates' quota resources describe, as one account; ``LoadError`` lists every
    problem of every template. ``templates`` are ``(source, parsed template)``; ``source`` prefixes problems."""
    readers = [TemplateReader(template, source) for source, template in templates]
    _stand_in_names(readers)
    exports: dict[str, tuple[str, str]] = {}
    for reader in readers:
        exports.update(reader.exports())
    for reader in readers:
        reader.imports = exports
        reader.check_resources()
    if any(reader.problems for reader in readers):  # the reading below relies on every property having its shape
        raise LoadError([problem for reader in readers for problem in reader.problems])
    read = TemplateRead({"service_environments": [], "job_queues": []})
    per_template: list[dict[str, Data]] = []
    for reader in readers:
        envs = _environments(reader)
        for logical_id, env in envs.items():
            read.data["service_environments"].append(env)
            _record(read, reader, ("environment", env["name"]), logical_id)
        policies = _quota_policies(reader)
        queues: dict[str, Data] = {}
        for logical_id, props in reader.of_type(QUEUE):
            queue = _queue(reader, logical_id, props, envs, policies)
            if queue is not None:
                queues[logical_id] = queue
                read.data["job_queues"].append(queue)
                _record(read, reader, ("queue", queue["name"]), logical_id)
                policy = target_of(props["SchedulingPolicyArn"])
                if policy is not None and policy in reader.named_at_deploy:
                    read.origins[("policy", queue["name"])] = Origin(reader.source, policy, True)
        per_template.append(queues)
    by_name = {q["name"]: q for q in read.data["job_queues"] if isinstance(q["name"], str)}
    for reader, queues in zip(readers, per_template, strict=True):
        for logical_id, props in reader.of_type(SHARE):
            queue = _share(reader, logical_id, props, queues, by_name)
            if queue is not None:
                _record(read, reader, ("share", queue["name"], queue["shares"][-1]["name"]), logical_id)
        read.skipped += [(reader.source, logical_id, reason) for logical_id, reason in reader.skipped]
    if any(reader.problems for reader in readers):
        raise LoadError([problem for reader in readers for problem in reader.problems])
    return read


def _record(read: TemplateRead, reader: TemplateReader, key: tuple[Any, ...], logical_id: str) -> None:
    """Where an object came from (the first object of a name keeps it: BQ001 names the duplicate)."""
    read.origins.setdefault(tuple(map(str, key)), Origin(reader.source, logical_id,
                                                        logical_id in reader.named_at_deploy))


def template_data(template: Data, source: str, skipped: list[tuple[str, str]] | None = None) -> Data:
    """The topology mapping one template's quota resources describe; ``LoadError`` lists every problem.

    Queues that are not quota-managed SAGEMAKER_TRAINING queues are appended to ``skipped`` with the reason.
    """
    read = read_templates([(source, template)])
    if skipped is not None:
        skipped += [(logical_id, reason) for _, logical_id, reason in read.skipped]
    return read.data


def load_template(path: str | Path, template: Mapping[str, Any] | None = None) -> Topology:
    """The ``Topology`` of a template file (``template`` when already parsed)."""
    data_in = dict(template) if template is not None else read_template_file(path)
    try:
        read = read_templates([(str(path), data_in)])
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as error:  # a shape no rule names yet
        raise LoadError([f"{path}: the template's AWS::Batch resources have an unexpected shape "
                         f"({type(error).__name__}: {error}); cfn-lint names the property"]) from None
    for _, logical_id, reason in read.skipped:  # listed, never silently dropped (as the account import does)
        sys.stderr.write(f"{path}: skipped job queue Resources.{logical_id}: {reason}\n")
    return topology_of(read, f"{path} (CloudFormation template)")


def topology_of(read: TemplateRead, source: str) -> Topology:
    """The ``Topology`` of templates read together, its objects named at deploy noted."""
    named = read.named_at_deploy()
    return topology_from_data({**read.data, **({"named_at_deploy": named} if named else {})}, source)


def fair_share_policies(template: Data, source: str) -> dict[str, tuple[str, ...]]:
    """The template's fair-share scheduling policies (``FairsharePolicy``) by name, with the names of the job
    queues using them: not part of a topology, but ``diff`` must see a policy that changes type."""
    reader = TemplateReader(template, source)
    named: dict[str, str] = {}
    for logical_id, props in reader.of_type(POLICY):
        name = props.get("Name")
        if "FairsharePolicy" in props and isinstance(name, str):
            named[logical_id] = name
    found: dict[str, list[str]] = {name: [] for name in named.values()}
    for logical_id, props in reader.of_type(QUEUE):
        arn, queue = props.get("SchedulingPolicyArn"), props.get("JobQueueName")
        if arn is None or not isinstance(queue, str):
            continue
        ref = reader.reference(arn, ("Resources", logical_id, "Properties", "SchedulingPolicyArn"), POLICY)
        policy = named.get(ref[3:]) if ref and ref.startswith("id:") else ref[5:] if ref else None
        if policy in found:
            found[policy].append(queue)
    return {name: tuple(queues) for name, queues in found.items()}
