"""A CloudFormation template's AWS Batch quota resources -> a topology mapping.

Reads ``AWS::Batch::ServiceEnvironment``, ``SchedulingPolicy``, ``JobQueue`` and ``QuotaShare``
from any template (a CDK app's ``cdk.out``, SAM, hand-written; JSON or YAML with the short
``!Ref``/``!GetAtt`` forms), resolving ``Ref`` and ``Fn::GetAtt`` among the template's own
resources. Anything else (a parameter, ``Fn::ImportValue``, ``Fn::Sub``, a condition) is
named as unresolvable, never guessed: every such place is one problem line.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from policy_engine import input_files, safe_yaml
from policy_engine.aws.shapes import name_from_arn, split_tags
from policy_engine.loading import LoadError

ENVIRONMENT = "AWS::Batch::ServiceEnvironment"
POLICY = "AWS::Batch::SchedulingPolicy"
QUEUE = "AWS::Batch::JobQueue"
SHARE = "AWS::Batch::QuotaShare"


#: The shape each property must have, after CloudFormation's own resource schemas for these types:
#: ``str``/``int`` scalars, ``REF`` (a name, an ARN, or Ref/Fn::GetAtt to this template's resources),
#: ``TAGS`` (a string map or a Key/Value list), a ``[item]`` list, a ``{key: shape}`` mapping.
REF, TAGS = "reference", "tags"
_CAPACITY = [{"CapacityUnit": str, "MaxCapacity": int}]
_PROPERTIES: dict[str, dict[str, Any]] = {
    ENVIRONMENT: {"ServiceEnvironmentName": str, "ServiceEnvironmentType": str, "CapacityLimits": _CAPACITY,
                  "State": str, "Tags": TAGS},
    POLICY: {"Name": str, "QuotaSharePolicy": {"IdleResourceAssignmentStrategy": str},
             "FairsharePolicy": dict, "Tags": TAGS},
    QUEUE: {"JobQueueName": str, "JobQueueType": str, "Priority": int, "State": str, "SchedulingPolicyArn": REF,
            "ComputeEnvironmentOrder": [{"ComputeEnvironment": REF, "Order": int}],
            "ServiceEnvironmentOrder": [{"ServiceEnvironment": REF, "Order": int}],
            "JobStateTimeLimitActions": [{"Action": str, "MaxTimeSeconds": int, "Reason": str, "State": str}],
            "Tags": TAGS},
    SHARE: {"QuotaShareName": str, "JobQueue": REF, "CapacityLimits": _CAPACITY,
            "ResourceSharingConfiguration": {"Strategy": str, "BorrowLimit": int},
            "PreemptionConfiguration": {"InSharePreemption": str}, "State": str, "Tags": TAGS},
}
#: Properties without which the resource cannot be read (CloudFormation's required ones, and the names).
_REQUIRED: dict[str, tuple[str, ...]] = {
    ENVIRONMENT: ("ServiceEnvironmentType", "CapacityLimits"),
    POLICY: (),
    QUEUE: ("Priority",),
    SHARE: ("JobQueue", "CapacityLimits", "ResourceSharingConfiguration"),
}
#: Inside these mappings, these keys are required.
_REQUIRED_KEYS = {"CapacityUnit", "MaxCapacity", "ServiceEnvironment", "ComputeEnvironment", "Order", "Action",
                  "MaxTimeSeconds", "Reason", "State", "Strategy"}
_TYPE_NAMES = {str: "a string", int: "an integer"}


def _is_intrinsic(value: Any) -> bool:
    """A ``{Ref: ..}``, ``{Condition: ..}`` or ``{Fn::...: ..}`` mapping: a value known only at deploy."""
    if not (isinstance(value, dict) and len(value) == 1):
        return False
    key = str(next(iter(value)))
    return key in ("Ref", "Condition") or key.startswith("Fn::")


class _CfnLoader(yaml.SafeLoader):
    """YAML templates' short intrinsic forms (``!Ref X``, ``!GetAtt X.Y``) as their long mappings."""


def _intrinsic(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict:
    name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
        if suffix == "GetAtt":
            value = value.split(".", 1)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    return {name: value}


_CfnLoader.add_multi_constructor("!", _intrinsic)


def is_template(data: Any) -> bool:
    """Whether parsed data looks like a CloudFormation template rather than a topology file."""
    return isinstance(data, dict) and isinstance(data.get("Resources"), dict) and "job_queues" not in data


def read_template_file(path: str | Path) -> dict:
    """A template file read safely (a regular UTF-8 file within its cap; nesting and aliases bounded)."""
    try:
        text = input_files.read_text(path, input_files.TEMPLATE)
    except input_files.InputFileError as error:
        raise LoadError([str(error)]) from None
    path = Path(path)
    try:
        safe_yaml.check_expansion(safe_yaml.compose(text))  # refuses deep nesting and alias bombs first
        data = yaml.load(text, Loader=_CfnLoader)  # JSON is YAML
    except safe_yaml.YamlError as error:
        raise LoadError([f"{path}{f':{error.line}' if error.line else ''}: {error.message}"]) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise LoadError([f"{where}: template syntax error: {getattr(error, 'problem', None) or error}"]) from None
    except (ValueError, RecursionError) as error:  # a value PyYAML cannot convert (a huge integer, a bad date)
        raise LoadError([f"{path}: template value cannot be read: {error}"]) from None
    if not is_template(data):
        raise LoadError([f"{path}: not a CloudFormation template (no Resources mapping)"])
    return data


class _Reader:
    def __init__(self, template: dict, source: str):
        self.resources: dict[str, Any] = template["Resources"]
        self.parameters = set((template.get("Parameters") or {}).keys())
        self.source = source
        self.problems: list[str] = []
        #: ``(logical id, reason)`` of each queue that is read but not imported (as the account import lists them).
        self.skipped: list[tuple[str, str]] = []

    def problem(self, where: str, what: str) -> None:
        self.problems.append(f"{self.source}: {where}: {what}")

    def check_shape(self, value: Any, shape: Any, where: str) -> None:
        """Name every place where ``value`` does not have ``shape`` (never stop at the first one)."""
        if shape == REF:
            if isinstance(value, str):
                return
            if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in ("Ref", "Fn::GetAtt"):
                return  # resolved (or named as unresolvable) when read
            if _is_intrinsic(value):
                (key, argument), = value.items()
                self.problem(where, self._unresolvable(key, argument))
                return
            self.problem(where, f"expected a name, an ARN, Ref or Fn::GetAtt, got {value!r}")
            return
        if _is_intrinsic(value):
            (key, argument), = value.items()
            self.problem(where, self._unresolvable(key, argument))
            return
        if shape == TAGS:
            if isinstance(value, list):
                for index, item in enumerate(value):
                    if not (isinstance(item, dict) and set(item) == {"Key", "Value"}):
                        self.problem(f"{where}[{index}]", f"expected {{Key, Value}}, got {item!r}")
                        continue
                    self.check_shape(item["Key"], str, f"{where}[{index}].Key")
                    self.check_shape(item["Value"], str, f"{where}[{index}].Value")
                keys = [item.get("Key") for item in value if isinstance(item, dict)]
                for key in sorted({k for k in keys if isinstance(k, str) and keys.count(k) > 1}):
                    self.problem(where, f"tag {key!r} given more than once")
            elif isinstance(value, dict):
                for key, item in value.items():
                    self.check_shape(item, str, f"{where}.{key}")
            else:
                self.problem(where, f"expected a mapping of tag names to values, got {value!r}")
            return
        if shape is str or shape is int:
            ok = isinstance(value, str) if shape is str else (isinstance(value, int) and not isinstance(value, bool))
            if shape is int and isinstance(value, str) and value.strip().lstrip("-").isdigit():
                ok = True  # CloudFormation passes numbers as strings too
            if not ok:
                self.problem(where, f"expected {_TYPE_NAMES[shape]}, got {value!r}")
            return
        if shape is dict:
            if not isinstance(value, dict):
                self.problem(where, f"expected a mapping, got {value!r}")
            return
        if isinstance(shape, list):
            if not isinstance(value, list):
                self.problem(where, f"expected a list, got {value!r}")
                return
            for index, item in enumerate(value):
                self.check_shape(item, shape[0], f"{where}[{index}]")
            units = [item.get("CapacityUnit") for item in value if isinstance(item, dict)]
            for unit in sorted({u for u in units if isinstance(u, str) and units.count(u) > 1}):
                self.problem(where, f"CapacityUnit {unit!r} given more than once")
            return
        if not isinstance(value, dict):
            self.problem(where, f"expected a mapping with {', '.join(shape)}, got {value!r}")
            return
        for key, item in value.items():
            if key not in shape:
                self.problem(f"{where}.{key}", f"unknown property (known: {', '.join(shape)})")
            else:
                self.check_shape(item, shape[key], f"{where}.{key}")
        for key in shape:
            if key in _REQUIRED_KEYS and key not in value:
                self.problem(f"{where}.{key}", "missing: required")

    def check_resources(self) -> None:
        """Every quota resource's properties against ``_PROPERTIES``: one line per wrong place."""
        for logical_id, resource in self.resources.items():
            where = f"Resources.{logical_id}"
            if not isinstance(resource, dict):
                self.problem(where, f"a resource must be a mapping, got {resource!r}")
                continue
            kind = resource.get("Type")
            if kind not in _PROPERTIES:
                continue
            properties = resource.get("Properties", {})
            if _is_intrinsic(properties):
                (key, argument), = properties.items()
                self.problem(f"{where}.Properties", self._unresolvable(key, argument))
                continue
            if not isinstance(properties, dict):
                self.problem(f"{where}.Properties", f"must be a mapping, got {properties!r}")
                continue
            for key, value in properties.items():
                if key not in _PROPERTIES[kind]:
                    self.problem(f"{where}.Properties.{key}",
                                 f"unknown property of {kind} (known: {', '.join(_PROPERTIES[kind])})")
                else:
                    self.check_shape(value, _PROPERTIES[kind][key], f"{where}.Properties.{key}")
            for key in _REQUIRED[kind]:
                if key not in properties:
                    self.problem(f"{where}.Properties.{key}", f"missing: required by {kind}")

    def of_type(self, kind: str) -> list[tuple[str, dict]]:
        found = []
        for logical_id, resource in self.resources.items():
            if isinstance(resource, dict) and resource.get("Type") == kind:
                properties = resource.get("Properties") or {}
                if not isinstance(properties, dict):
                    self.problem(f"Resources.{logical_id}.Properties", "must be a mapping")
                    continue
                if "Condition" in resource:
                    self.problem(f"Resources.{logical_id}.Condition",
                                 f"condition {resource['Condition']!r} cannot be evaluated here; "
                                 "the resource is read as if it were created")
                found.append((logical_id, properties))
        return found

    def literal(self, value: Any, where: str) -> Any:
        """A value with no intrinsic functions inside, or ``None`` after naming the one found."""
        if isinstance(value, dict):
            if len(value) == 1:
                (key, argument), = value.items()
                if key == "Ref" or key.startswith("Fn::"):
                    self.problem(where, self._unresolvable(key, argument))
                    return None
            out = {key: self.literal(item, f"{where}.{key}") for key, item in value.items()}
            return None if any(item is None for item in out.values()) else out
        if isinstance(value, list):
            items = [self.literal(item, f"{where}[{index}]") for index, item in enumerate(value)]
            return None if any(item is None for item in items) else items
        return value

    def _unresolvable(self, key: str, argument: Any) -> str:
        if key == "Ref" and argument in self.parameters:
            return f"unresolvable: Ref to parameter {argument!r} (its value is known only at deploy)"
        if key == "Ref" and isinstance(argument, str) and argument.startswith("AWS::"):
            return f"unresolvable: Ref to pseudo parameter {argument!r}"
        if key == "Fn::ImportValue":
            return f"unresolvable: Fn::ImportValue {argument!r} (another stack's export)"
        return f"unresolvable: {key} {argument!r}"

    def reference(self, value: Any, where: str, kind: str) -> str | None:
        """The logical id of a same-template resource of ``kind`` that ``value`` refers to, or a literal name."""
        if isinstance(value, str):
            return "name:" + name_from_arn(value)
        if isinstance(value, dict) and len(value) == 1:
            (key, argument), = value.items()
            target = None
            if key == "Ref" and isinstance(argument, str):
                target = argument
            elif key == "Fn::GetAtt":
                parts = argument.split(".", 1) if isinstance(argument, str) else argument
                if isinstance(parts, list) and parts and isinstance(parts[0], str):
                    target = parts[0]
            if target is not None and target in self.resources:
                found = self.resources[target].get("Type") if isinstance(self.resources[target], dict) else None
                if found != kind:
                    self.problem(where, f"refers to {target} ({found}), expected a {kind}")
                    return None
                return "id:" + target
            if target is not None and target not in self.parameters:
                self.problem(where, f"refers to {target!r}, which is not a resource of this template")
                return None
            self.problem(where, self._unresolvable(key, argument))
            return None
        self.problem(where, f"expected a name, an ARN, Ref or Fn::GetAtt, got {value!r}")
        return None


def _tags(reader: _Reader, properties: dict, where: str) -> tuple[dict[str, str], dict[str, str]]:
    raw = properties.get("Tags")
    if raw is None:
        return {}, {}
    if isinstance(raw, list):  # the list form some resource types use
        raw = {item.get("Key"): item.get("Value") for item in raw if isinstance(item, dict)}
    tags = reader.literal(raw, f"{where}.Tags")
    return split_tags(tags if isinstance(tags, dict) else {})


def _with_tags(data: dict, tags: tuple[dict[str, str], dict[str, str]]) -> dict:
    if tags[0]:
        data["tags"] = tags[0]
    if tags[1]:
        data["system_tags"] = tags[1]
    return data


def _capacity(reader: _Reader, value: Any, where: str) -> dict:
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


def _mapping(reader: _Reader, value: Any, where: str) -> dict:
    """A property that must be a mapping (``{}`` when absent); anything else is one problem."""
    found = reader.literal(value or {}, where) or {}
    if not isinstance(found, dict):
        reader.problem(where, f"must be a mapping, got {found!r}")
        return {}
    return found


def _name(reader: _Reader, properties: dict, key: str, where: str) -> str | None:
    if key not in properties:
        reader.problem(f"{where}.{key}", "missing: CloudFormation would generate a name at deploy; "
                                         "name the resource so that it can be checked")
        return None
    return reader.literal(properties[key], f"{where}.{key}")


def template_data(template: dict, source: str, skipped: list[tuple[str, str]] | None = None) -> dict:
    """The topology mapping the template's quota resources describe; ``LoadError`` lists every problem.

    Queues that are not quota-managed SAGEMAKER_TRAINING queues are appended to ``skipped`` with the reason.
    """
    reader = _Reader(template, source)
    reader.check_resources()
    if reader.problems:  # the reading below relies on every property having its shape
        raise LoadError(reader.problems)
    envs: dict[str, dict] = {}
    for logical_id, props in reader.of_type(ENVIRONMENT):
        where = f"Resources.{logical_id}.Properties"
        name = _name(reader, props, "ServiceEnvironmentName", where)
        kind = props.get("ServiceEnvironmentType", "SAGEMAKER_TRAINING")
        if kind != "SAGEMAKER_TRAINING":
            reader.problem(f"{where}.ServiceEnvironmentType", f"{kind!r}: only SAGEMAKER_TRAINING is read")
        data = {"name": name, "capacity": _capacity(reader, props.get("CapacityLimits"), f"{where}.CapacityLimits")}
        if "State" in props:
            data["state"] = reader.literal(props["State"], f"{where}.State")
        envs[logical_id] = _with_tags(data, _tags(reader, props, where))
    policies: dict[str, tuple[str | None, dict]] = {}
    for logical_id, props in reader.of_type(POLICY):
        where = f"Resources.{logical_id}.Properties"
        if "QuotaSharePolicy" not in props:
            continue  # a fair-share policy: its queues are skipped below
        policies[logical_id] = (_name(reader, props, "Name", where), props)
    queues: dict[str, dict] = {}
    for logical_id, props in reader.of_type(QUEUE):
        where = f"Resources.{logical_id}.Properties"
        if props.get("JobQueueType") != "SAGEMAKER_TRAINING":
            reader.skipped.append((logical_id, f"JobQueueType {props.get('JobQueueType', 'ECS (the default)')}: "
                                               "only SAGEMAKER_TRAINING queues have quota shares"))
            continue
        name = _name(reader, props, "JobQueueName", where)
        policy_ref = reader.reference(props.get("SchedulingPolicyArn"), f"{where}.SchedulingPolicyArn", POLICY) \
            if "SchedulingPolicyArn" in props else None
        if policy_ref is None and "SchedulingPolicyArn" not in props:
            reader.skipped.append((logical_id, "no SchedulingPolicyArn: a FIFO queue, not quota-managed"))
            continue
        if policy_ref is None:
            continue  # already named as a problem
        if policy_ref.startswith("id:") and policy_ref[3:] not in policies:
            reader.skipped.append((logical_id, f"scheduling policy {policy_ref[3:]} is not a quota-share policy"))
            continue
        raw_order = props.get("ServiceEnvironmentOrder") or []
        env_name = None
        if len(raw_order) != 1:
            reader.problem(f"{where}.ServiceEnvironmentOrder",
                           f"{len(raw_order)} service environments; a quota-managed queue has exactly one")
        else:
            env_ref = reader.reference(raw_order[0].get("ServiceEnvironment"),
                                       f"{where}.ServiceEnvironmentOrder[0].ServiceEnvironment", ENVIRONMENT)
            if env_ref and env_ref.startswith("id:"):
                env_name = envs[env_ref[3:]]["name"]
            elif env_ref:
                env_name = env_ref[5:]
        data: dict[str, Any] = {"name": name, "service_environment": env_name}
        for key, field_name in (("Priority", "priority"), ("State", "state")):
            if key in props:
                data[field_name] = reader.literal(props[key], f"{where}.{key}")
        actions = reader.literal(props.get("JobStateTimeLimitActions") or [], f"{where}.JobStateTimeLimitActions")
        if actions:
            data["job_state_time_limit_actions"] = [
                {"max_time_seconds": a.get("MaxTimeSeconds"), "reason": a.get("Reason"), "action": a.get("Action"),
                 "state": a.get("State")} for a in actions]
        policy_name = policies[policy_ref[3:]][0] if policy_ref.startswith("id:") else policy_ref[5:]
        if policy_name and policy_name != f"{name}-quota-policy":
            data["scheduling_policy"] = policy_name
        data["shares"] = []
        queues[logical_id] = _with_tags(data, _tags(reader, props, where))
    by_name = {q["name"]: q for q in queues.values() if isinstance(q["name"], str)}
    for logical_id, props in reader.of_type(SHARE):
        where = f"Resources.{logical_id}.Properties"
        queue_ref = reader.reference(props.get("JobQueue"), f"{where}.JobQueue", QUEUE)
        if queue_ref is None:
            continue
        queue = queues.get(queue_ref[3:]) if queue_ref.startswith("id:") else by_name.get(queue_ref[5:])
        if queue is None:
            named = queue_ref[3:] if queue_ref.startswith("id:") else queue_ref[5:]
            reader.problem(f"{where}.JobQueue",
                           f"job queue {named!r} is not a quota-managed SAGEMAKER_TRAINING queue of this template")
            continue
        sharing = _mapping(reader, props.get("ResourceSharingConfiguration"), f"{where}.ResourceSharingConfiguration")
        data = {"name": _name(reader, props, "QuotaShareName", where),
                "capacity": _capacity(reader, props.get("CapacityLimits"), f"{where}.CapacityLimits"),
                "strategy": sharing.get("Strategy")}
        if "BorrowLimit" in sharing:
            data["borrow_limit"] = sharing["BorrowLimit"]
        preemption = _mapping(reader, props.get("PreemptionConfiguration"), f"{where}.PreemptionConfiguration")
        if preemption.get("InSharePreemption") == "ENABLED":
            data["in_share_preemption"] = True
        if "State" in props:
            data["state"] = reader.literal(props["State"], f"{where}.State")
        queue["shares"].append(_with_tags(data, _tags(reader, props, where)))
    if reader.problems:
        raise LoadError(reader.problems)
    if skipped is not None:
        skipped += reader.skipped
    return {"service_environments": list(envs.values()), "job_queues": list(queues.values())}


def load_template(path: str | Path, template: Mapping | None = None):
    """The ``Topology`` of a template file (``template`` when already parsed)."""
    from policy_engine.loading import topology_from_data

    template = dict(template) if template is not None else read_template_file(path)
    skipped: list[tuple[str, str]] = []
    try:
        data = template_data(template, str(path), skipped)
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as error:  # a shape no rule names yet
        raise LoadError([f"{path}: the template's AWS::Batch resources have an unexpected shape "
                         f"({type(error).__name__}: {error}); cfn-lint names the property"]) from None
    for logical_id, reason in skipped:  # listed, never silently dropped (as the account import does)
        sys.stderr.write(f"{path}: skipped job queue Resources.{logical_id}: {reason}\n")
    return topology_from_data(data, f"{path} (CloudFormation template)")
