"""A CloudFormation template read as CloudFormation reads it: parameters (SSM parameter types included),
conditions, mappings, rules, and the intrinsic functions the CDK writes, resolved against the stack's
resources (their physical ids and attributes), the pseudo parameters and other stacks' exports.

``references`` lists what a value refers to, which orders the resources (``networkx``'s topological sort).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import yaml

from policy_engine.adapters.endpoint.base.errors import ApiError

#: What ``Ref`` and ``Fn::GetAtt`` give for a resource not created (yet): the change set's "unknown".
UNKNOWN = "{{unknown}}"
_SUB = re.compile(r"\$\{([^}!][^}]*)\}")
NO_VALUE = object()


def validation(message: str) -> ApiError:
    return ApiError(message, "ValidationError", 400)


def parse(text: bytes) -> dict[str, Any]:
    """A template body: JSON, or YAML with the short forms (``!Ref``) read as their long forms."""
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = _yaml(text)
    if not isinstance(parsed, dict) or not isinstance(parsed.get("Resources"), dict) or not parsed["Resources"]:
        raise validation("Template format error: At least one Resources member must be defined.")
    for name, resource in parsed["Resources"].items():
        if not (isinstance(resource, dict) and isinstance(resource.get("Type"), str)
                and isinstance(resource.get("Properties", {}), dict)):
            raise validation(f"Template format error: resource {str(name)[:200]} needs a Type (text) and "
                             "Properties (an object)")
    for section in ("Parameters", "Conditions", "Outputs", "Mappings", "Rules"):
        if not isinstance(parsed.get(section, {}), dict):
            raise validation(f"Template format error: {section} must be an object")
    return parsed


class _Loader(yaml.SafeLoader):
    pass


def _short(tag: str) -> Callable[[yaml.SafeLoader, yaml.Node], dict[str, Any]]:
    name = "Ref" if tag == "Ref" else f"Fn::{tag}"

    def construct(loader: yaml.SafeLoader, node: yaml.Node) -> dict[str, Any]:
        if isinstance(node, yaml.ScalarNode):
            value: Any = loader.construct_scalar(node)
            if tag == "GetAtt":
                value = str(value).split(".", 1)
        elif isinstance(node, yaml.SequenceNode):
            value = loader.construct_sequence(node, deep=True)
        else:
            value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
        return {name: value}

    return construct


for _tag in ("Ref", "GetAtt", "Join", "Sub", "Select", "Split", "If", "Equals", "Not", "And", "Or", "FindInMap",
             "ImportValue", "GetAZs", "Base64", "Condition", "Contains"):
    _Loader.add_constructor(f"!{_tag}", _short(_tag))


def _yaml(text: bytes) -> Any:
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as error:
        raise validation(f"Template format error: {error}") from None


def references(value: Any) -> Iterator[str]:
    """Logical ids (and parameter names) a value refers to: ``Ref``, ``Fn::GetAtt``, ``Fn::Sub``'s ``${X}``."""
    if isinstance(value, dict):
        if len(value) == 1:
            (key, arg), = value.items()
            if key == "Ref" and isinstance(arg, str):
                yield arg
                return
            if key == "Fn::GetAtt":
                target = arg.split(".", 1)[0] if isinstance(arg, str) else arg[0]
                yield str(target)
                return
            if key == "Fn::Sub":
                text, names = (arg, {}) if isinstance(arg, str) else (arg[0], arg[1])
                for match in _SUB.finditer(text):
                    name = match.group(1).split(".", 1)[0]
                    if name not in names:
                        yield name
                yield from references(names)
                return
        for item in value.values():
            yield from references(item)
    elif isinstance(value, list):
        for item in value:
            yield from references(item)


def dependency_order(resources: dict[str, Any]) -> list[str]:
    """Logical ids, each after what it refers to or ``DependsOn`` (ties by id); a cycle is a ``ValidationError``."""
    graph = nx.DiGraph()
    graph.add_nodes_from(resources)
    for logical, resource in resources.items():
        depends = resource.get("DependsOn") or []
        for target in ([depends] if isinstance(depends, str) else depends):
            if target not in resources:
                raise validation(f"Template format error: Unresolved resource dependencies [{target}] in the "
                                 "Resources block of the template")
            graph.add_edge(target, logical)
        for target in references(resource.get("Properties") or {}):
            if target in resources:
                graph.add_edge(target, logical)
    try:
        return list(nx.lexicographical_topological_sort(graph))
    except nx.NetworkXUnfeasible:
        cycle = [edge[0] for edge in nx.find_cycle(graph)]
        raise validation(f"Circular dependency between resources: {sorted(cycle)}") from None


@dataclass
class Context:
    """What a template's values resolve against."""

    region: str
    account: str
    stack_name: str
    stack_id: str
    parameters: dict[str, Any] = field(default_factory=dict)
    #: logical id -> physical id (``Ref``), and its attributes (``Fn::GetAtt``)
    physical: dict[str, str] = field(default_factory=dict)
    attributes: dict[str, dict[str, Any]] = field(default_factory=dict)
    conditions: dict[str, bool] = field(default_factory=dict)
    mappings: dict[str, Any] = field(default_factory=dict)
    exports: Callable[[str], str | None] = lambda name: None
    #: resources of types the rehearsal only stores: any attribute reads as ``PHYSICAL.Attribute`` (AWS's value
    #: is nothing the rehearsal could know, and nothing reads it)
    stored: frozenset[str] = frozenset()
    #: resolving a change set: a resource not created yet gives ``UNKNOWN`` instead of an error
    lenient: bool = False

    def pseudo(self, name: str) -> Any:
        return {
            "AWS::AccountId": self.account, "AWS::Region": self.region, "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com", "AWS::StackName": self.stack_name, "AWS::StackId": self.stack_id,
            "AWS::NoValue": NO_VALUE, "AWS::NotificationARNs": [],
        }.get(name, UNKNOWN)


def resolve(value: Any, ctx: Context) -> Any:
    """``value`` with every intrinsic function applied; ``AWS::NoValue`` members dropped."""
    if isinstance(value, list):
        return [item for item in (resolve(v, ctx) for v in value) if item is not NO_VALUE]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        (key, arg), = value.items()
        if key == "Ref":
            return _ref(str(arg), ctx)
        if key.startswith("Fn::") or key == "Condition":
            return _function(key, arg, ctx)
    return {k: v for k, v in ((k, resolve(v, ctx)) for k, v in value.items()) if v is not NO_VALUE}


def _ref(name: str, ctx: Context) -> Any:
    if name.startswith("AWS::"):
        return ctx.pseudo(name)
    if name in ctx.parameters:
        return ctx.parameters[name]
    if name in ctx.physical:
        return ctx.physical[name]
    if ctx.lenient:
        return UNKNOWN
    raise validation(f"Template format error: Unresolved resource dependencies [{name}] in the Resources block")


def _function(key: str, arg: Any, ctx: Context) -> Any:
    try:
        return _apply(key, arg, ctx)
    except (TypeError, ValueError, IndexError, KeyError, AttributeError):
        shown = repr(arg)
        raise validation(f"Template error: {key} is malformed: {shown[:200]}") from None


def _apply(key: str, arg: Any, ctx: Context) -> Any:
    if key == "Fn::GetAtt":
        logical, attribute = arg.split(".", 1) if isinstance(arg, str) else (arg[0], resolve(arg[1], ctx))
        found = ctx.attributes.get(logical, {})
        if attribute in found:
            return found[attribute]
        if logical in ctx.stored and logical in ctx.physical:
            return f"{ctx.physical[logical]}.{attribute}"
        if ctx.lenient or logical not in ctx.physical:
            if ctx.lenient:
                return UNKNOWN
            raise validation(f"Template error: instance of Fn::GetAtt references undefined resource {logical}")
        raise validation(f"Template error: resource {logical} does not support attribute type {attribute} "
                         "in Fn::GetAtt")
    if key == "Fn::Join":
        sep, items = arg[0], resolve(arg[1], ctx)
        return sep.join(str(item) for item in items)
    if key == "Fn::Sub":
        text, names = (arg, {}) if isinstance(arg, str) else (arg[0], resolve(arg[1], ctx))

        def sub(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in names:
                return str(names[name])
            if "." in name and not name.startswith("AWS::"):
                return str(_function("Fn::GetAtt", name, ctx))
            return str(_ref(name, ctx))

        return _SUB.sub(sub, text).replace("${!", "${")
    if key == "Fn::Select":
        index, items = resolve(arg[0], ctx), resolve(arg[1], ctx)
        return items[int(index)]
    if key == "Fn::Split":
        return str(resolve(arg[1], ctx)).split(arg[0])
    if key == "Fn::If":
        name, yes, no = arg
        return resolve(yes if ctx.conditions.get(name, False) else no, ctx)
    if key == "Fn::Equals":
        return resolve(arg[0], ctx) == resolve(arg[1], ctx)
    if key == "Fn::Not":
        return not resolve(arg[0], ctx)
    if key == "Fn::And":
        return all(resolve(item, ctx) for item in arg)
    if key == "Fn::Or":
        return any(resolve(item, ctx) for item in arg)
    if key == "Condition":
        return ctx.conditions.get(arg, False)
    if key == "Fn::Contains":
        return resolve(arg[1], ctx) in resolve(arg[0], ctx)
    if key == "Fn::FindInMap":
        name, top, second = (resolve(item, ctx) for item in arg[:3])
        try:
            return ctx.mappings[name][top][second]
        except (KeyError, TypeError):
            raise validation(f"Template error: Unable to get mapping for {name}::{top}::{second}") from None
    if key == "Fn::ImportValue":
        name = resolve(arg, ctx)
        exported = ctx.exports(name)
        if exported is None:
            if ctx.lenient:
                return UNKNOWN
            raise validation(f"No export named {name} found.")
        return exported
    if key == "Fn::GetAZs":
        return [f"{ctx.region}{letter}" for letter in "abc"]
    if key == "Fn::Base64":
        return base64.b64encode(str(resolve(arg, ctx)).encode()).decode()
    raise validation(f"Template format error: Unsupported intrinsic function {key}")


def conditions(template: dict[str, Any], ctx: Context) -> dict[str, bool]:
    """Every condition of the template, each evaluated once (a condition may name another)."""
    defined = template.get("Conditions") or {}
    found: dict[str, bool] = {}

    def evaluate(name: str) -> bool:
        if name not in found:
            if name not in defined:
                raise validation(f"Template format error: Unresolved condition dependency {name}")
            ctx.conditions = found
            found[name] = False  # a cycle reads false
            value = defined[name]
            for nested in _named_conditions(value):
                evaluate(nested)
            found[name] = bool(resolve(value, ctx))
        return found[name]

    for name in defined:
        evaluate(name)
    return found


def _named_conditions(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, arg in value.items():
            if key == "Condition" and isinstance(arg, str):
                yield arg
            else:
                yield from _named_conditions(arg)
    elif isinstance(value, list):
        for item in value:
            yield from _named_conditions(item)


def rule_failures(template: dict[str, Any], ctx: Context) -> list[str]:
    """Each ``Rules`` assertion that does not hold, by its description (CloudFormation's ``ValidationError``)."""
    failures = []
    for name, rule in (template.get("Rules") or {}).items():
        if not isinstance(rule, dict):
            raise validation(f"Template format error: rule {name} must be an object")
        applies = resolve(rule.get("RuleCondition", True), ctx)
        if not applies:
            continue
        for assertion in rule.get("Assertions") or ():
            if not isinstance(assertion, dict) or "Assert" not in assertion:
                raise validation(f"Template format error: every assertion of rule {name} needs an Assert")
            if not resolve(assertion["Assert"], ctx):
                failures.append(assertion.get("AssertDescription") or f"Rule {name} failed")
    return failures
