"""Reading a template's AWS Batch quota resources: property shapes, intrinsic functions, references.

Every property is checked against the shape CloudFormation's resource schemas give it, and every
place that is not as expected is one problem line (never only the first). ``Ref`` and
``Fn::GetAtt`` among the template's own resources are resolved; anything known only at deploy
(a parameter, ``Fn::Sub``, a condition, an ``Fn::ImportValue`` of no template read alongside) is named as
unresolvable. ``Fn::ImportValue`` of an export another template of the set makes (a CDK app's cross-stack
reference) resolves to the exported resource's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from policy_engine.foundation.diagnostics import DataPath, Problem
from policy_engine.inputs.api_shapes import name_from_arn

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
#: The property holding each resource type's name; without it CloudFormation names the resource at deploy.
NAME_PROPERTIES = {ENVIRONMENT: "ServiceEnvironmentName", POLICY: "Name", QUEUE: "JobQueueName",
                   SHARE: "QuotaShareName"}

#: ``export name -> (resource type, name)``: what an ``Fn::ImportValue`` of another template resolves to.
Exports = Mapping[str, tuple[str, str]]


def is_intrinsic(value: Any) -> bool:
    """A ``{Ref: ..}``, ``{Condition: ..}`` or ``{Fn::...: ..}`` mapping: a value known only at deploy."""
    if not (isinstance(value, dict) and len(value) == 1):
        return False
    key = str(next(iter(value)))
    return key in ("Ref", "Condition") or key.startswith("Fn::")


class TemplateReader:
    """The template's resources, and the problems and skipped queues found while reading them."""


    def __init__(self, template: dict[str, Any], source: str, imports: Exports | None = None) -> None:
        self.template = template
        self.resources: dict[str, Any] = template["Resources"]
        self.parameters = set((template.get("Parameters") or {}).keys())
        self.source = source
        self.imports: Exports = imports or {}
        self.problems: list[Problem] = []
        #: ``(logical id, reason)`` of each queue that is read but not imported (as the account import lists them).
        self.skipped: list[tuple[str, str]] = []
        #: The name standing for each resource CloudFormation names at deploy (its logical ID, see ``stand_in``).
        self.stand_ins: dict[str, str] = {}
        #: Logical IDs of the resources read whose names stand in for the one CloudFormation generates.
        self.named_at_deploy: set[str] = set()

    @property
    def stack(self) -> str:
        """The stack a template file is of, as CDK names the file (``STACK.template.json``)."""
        name = Path(self.source).name
        return name.removesuffix(".template.json") if name.endswith(".template.json") else Path(self.source).stem

    def quota_resources(self) -> list[tuple[str, str, dict[str, Any]]]:
        """``(logical id, type, properties)`` of the template's quota resources whose properties are a mapping."""
        found = []
        for logical_id, resource in self.resources.items():
            if isinstance(resource, dict) and resource.get("Type") in NAME_PROPERTIES:
                properties = resource.get("Properties") or {}
                if isinstance(properties, dict):
                    found.append((logical_id, resource["Type"], properties))
        return found

    def literal_name(self, kind: str, properties: Mapping[str, Any]) -> str | None:
        """The resource's name when the template gives it as a string (``None``: named at deploy, or an intrinsic)."""
        name = properties.get(NAME_PROPERTIES[kind])
        return name if isinstance(name, str) else None

    def name(self, logical_id: str, properties: Mapping[str, Any], key: str, where: DataPath) -> Any:
        """The resource's name; one CloudFormation generates at deploy is stood in for (``stand_ins``) and marked."""
        if key not in properties:
            self.named_at_deploy.add(logical_id)
            return self.stand_ins.get(logical_id, logical_id)
        return self.literal(properties[key], (*where, str(key)))

    def exports(self) -> dict[str, tuple[str, str]]:
        """The template's exports of its quota resources (``Outputs.*.Export.Name`` of a Ref or Fn::GetAtt)."""
        found: dict[str, tuple[str, str]] = {}
        outputs = self.template.get("Outputs")
        for output in (outputs.values() if isinstance(outputs, dict) else ()):
            if not isinstance(output, dict) or not isinstance(output.get("Export"), dict):
                continue
            export = output["Export"].get("Name")
            target = target_of(output.get("Value"))
            if target is None or not isinstance(export, str) or not isinstance(self.resources.get(target), dict):
                continue
            resource = self.resources[target]
            kind = resource.get("Type")
            properties = resource.get("Properties") or {}
            if kind in NAME_PROPERTIES and isinstance(properties, dict):
                name = (self.literal_name(kind, properties) if NAME_PROPERTIES[kind] in properties
                        else self.stand_ins.get(target, target))
                if name is not None:
                    found[export] = (kind, name)
        return found

    def problem(self, where: DataPath, what: str) -> None:
        self.problems.append(Problem(self.source, None, where, what))

    def check_shape(self, value: Any, shape: Any, where: DataPath) -> None:
        """Name every place where ``value`` does not have ``shape`` (never stop at the first one)."""
        if shape == REF:
            if isinstance(value, str):
                return
            if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in ("Ref", "Fn::GetAtt"):
                return  # resolved (or named as unresolvable) when read
            if self._imported(value) is not None:
                return
            if is_intrinsic(value):
                (key, argument), = value.items()
                self.problem(where, self._unresolvable(key, argument))
                return
            self.problem(where, f"expected a name, an ARN, Ref or Fn::GetAtt, got {value!r}")
            return
        if is_intrinsic(value):
            (key, argument), = value.items()
            self.problem(where, self._unresolvable(key, argument))
            return
        if shape == TAGS:
            if isinstance(value, list):
                for index, item in enumerate(value):
                    if not (isinstance(item, dict) and set(item) == {"Key", "Value"}):
                        self.problem((*where, index), f"expected {{Key, Value}}, got {item!r}")
                        continue
                    self.check_shape(item["Key"], str, (*where, index, "Key"))
                    self.check_shape(item["Value"], str, (*where, index, "Value"))
                keys = [item.get("Key") for item in value if isinstance(item, dict)]
                for key in sorted({k for k in keys if isinstance(k, str) and keys.count(k) > 1}):
                    self.problem(where, f"tag {key!r} given more than once")
            elif isinstance(value, dict):
                for key, item in value.items():
                    self.check_shape(item, str, (*where, str(key)))
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
                self.check_shape(item, shape[0], (*where, index))
            units = [item.get("CapacityUnit") for item in value if isinstance(item, dict)]
            for unit in sorted({u for u in units if isinstance(u, str) and units.count(u) > 1}):
                self.problem(where, f"CapacityUnit {unit!r} given more than once")
            return
        if not isinstance(value, dict):
            self.problem(where, f"expected a mapping with {', '.join(shape)}, got {value!r}")
            return
        for key, item in value.items():
            if key not in shape:
                self.problem((*where, str(key)), f"unknown property (known: {', '.join(shape)})")
            else:
                self.check_shape(item, shape[key], (*where, str(key)))
        for key in shape:
            if key in _REQUIRED_KEYS and key not in value:
                self.problem((*where, str(key)), "missing: required")

    def check_resources(self) -> None:
        """Every quota resource's properties against ``_PROPERTIES``: one line per wrong place."""
        for logical_id, resource in self.resources.items():
            where = ("Resources", logical_id)
            if not isinstance(resource, dict):
                self.problem(where, f"a resource must be a mapping, got {resource!r}")
                continue
            kind = resource.get("Type")
            if kind not in _PROPERTIES:
                continue
            properties = resource.get("Properties", {})
            if is_intrinsic(properties):
                (key, argument), = properties.items()
                self.problem((*where, "Properties"), self._unresolvable(key, argument))
                continue
            if not isinstance(properties, dict):
                self.problem((*where, "Properties"), f"must be a mapping, got {properties!r}")
                continue
            for key, value in properties.items():
                if key not in _PROPERTIES[kind]:
                    self.problem((*where, "Properties", key),
                                 f"unknown property of {kind} (known: {', '.join(_PROPERTIES[kind])})")
                else:
                    self.check_shape(value, _PROPERTIES[kind][key], (*where, "Properties", key))
            for key in _REQUIRED[kind]:
                if key not in properties:
                    self.problem((*where, "Properties", key), f"missing: required by {kind}")

    def of_type(self, kind: str) -> list[tuple[str, dict[str, Any]]]:
        found = []
        for logical_id, resource in self.resources.items():
            if isinstance(resource, dict) and resource.get("Type") == kind:
                properties = resource.get("Properties") or {}
                if not isinstance(properties, dict):
                    self.problem(("Resources", logical_id, "Properties"), "must be a mapping")
                    continue
                if "Condition" in resource:
                    self.problem(("Resources", logical_id, "Condition"),
                                 f"condition {resource['Condition']!r} cannot be evaluated here; "
                                 "the resource is read as if it were created")
                found.append((logical_id, properties))
        return found

    def literal(self, value: Any, where: DataPath) -> Any:
        """A value with no intrinsic functions inside, or ``None`` after naming the one found."""
        if isinstance(value, dict):
            if len(value) == 1:
                (key, argument), = value.items()
                if key == "Ref" or key.startswith("Fn::"):
                    self.problem(where, self._unresolvable(key, argument))
                    return None
            out = {key: self.literal(item, (*where, str(key))) for key, item in value.items()}
            return None if any(item is None for item in out.values()) else out
        if isinstance(value, list):
            items = [self.literal(item, (*where, index)) for index, item in enumerate(value)]
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

    def _imported(self, value: Any) -> tuple[str, str] | None:
        """``(type, name)`` of the resource another template exports as ``value``'s ``Fn::ImportValue``."""
        if isinstance(value, dict) and len(value) == 1 and "Fn::ImportValue" in value:
            export = value["Fn::ImportValue"]
            return self.imports.get(export) if isinstance(export, str) else None
        return None

    def reference(self, value: Any, where: DataPath, kind: str) -> str | None:
        """The logical id of a same-template resource of ``kind`` that ``value`` refers to, or a name
        (literal, or of the resource another template exports)."""
        if isinstance(value, str):
            return "name:" + name_from_arn(value)
        imported = self._imported(value)
        if imported is not None:
            imported_kind, name = imported
            if imported_kind != kind:
                self.problem(where, f"imports {value['Fn::ImportValue']!r}, a {imported_kind}; expected a {kind}")
                return None
            return "name:" + name
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


def target_of(value: Any) -> str | None:
    """The logical ID a ``Ref`` or ``Fn::GetAtt`` names (``None`` for anything else)."""
    if not (isinstance(value, dict) and len(value) == 1):
        return None
    (key, argument), = value.items()
    if key == "Ref" and isinstance(argument, str):
        return argument
    if key == "Fn::GetAtt":
        parts = argument.split(".", 1) if isinstance(argument, str) else argument
        if isinstance(parts, list) and parts and isinstance(parts[0], str):
            return parts[0]
    return None
