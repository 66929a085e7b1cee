"""CloudFormation's stacks, change sets and their execution, as the CDK CLI drives them.

AWS's semantics (docs/rehearsal.md): resources are created in dependency order and deleted in reverse; a
change set lists each change as CloudFormation does (``Modify`` with ``Replacement: True | False |
Conditional`` from the type's create-only properties, ``policy_engine/data/create_only_properties.json``);
an update that needs replacement creates the new resource first and deletes the old one at cleanup, after
every other change succeeded; a resource the endpoint refuses fails the operation with CloudFormation's
event and rolls back (a new stack: everything created is deleted; an update: in-place changes are put back
and new resources deleted, so the old ones were never touched). Everything runs synchronously inside the
call that starts it: the stack is in its final state when the call returns.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Any

from policy_engine.adapters.endpoint.base.errors import ApiError
from policy_engine.adapters.endpoint.rehearsal import template as tpl
from policy_engine.adapters.endpoint.rehearsal.providers import Created, Provider, shown

Params = dict[str, Any]
#: What CloudFormation answers when a change set would change nothing (the CDK CLI reads this text).
NO_CHANGES = ("The submitted information didn't contain changes. Submit different information to create a "
              "change set.")
#: Parameter types whose value is read from the SSM parameter store by name.
SSM_TYPE_PREFIX = "AWS::SSM::Parameter::Value<"


class Replacement(Enum):
    TRUE = "True"
    FALSE = "False"
    CONDITIONAL = "Conditional"


_last: list[datetime] = []


def now() -> datetime:
    """The wall clock, each reading at least a millisecond after the previous one: events sort as they happened
    (the CLI orders them by time, and the query protocol's times carry milliseconds)."""
    current = datetime.now(UTC)
    stamp = current.replace(microsecond=current.microsecond // 1000 * 1000)
    if _last and stamp <= _last[0]:
        stamp = _last[0] + timedelta(milliseconds=1)
    _last[:] = [stamp]
    return stamp


@dataclass
class StackResource:
    logical: str
    type_name: str
    created: Created
    #: the properties as resolved when created or last updated
    properties: Params
    status: str
    reason: str = ""
    updated: datetime = field(default_factory=now)


@dataclass
class ResourceChange:
    action: str  # Add | Modify | Remove
    logical: str
    type_name: str
    physical: str | None = None
    replacement: Replacement | None = None
    details: list[Params] = field(default_factory=list)
    before: Params | None = None
    after: Params | None = None

    def to_api(self, with_values: bool) -> Params:
        change: Params = {"Action": self.action, "LogicalResourceId": self.logical, "ResourceType": self.type_name}
        if self.physical is not None:
            change["PhysicalResourceId"] = self.physical
        if self.action == "Modify":
            change["Replacement"] = self.replacement.value if self.replacement else "False"
            change["Scope"] = ["Properties"]
            change["Details"] = self.details
        if with_values:
            if self.before is not None:
                change["BeforeContext"] = shown({"Properties": self.before})
            if self.after is not None:
                change["AfterContext"] = shown({"Properties": self.after})
        return {"Type": "Resource", "ResourceChange": change}


@dataclass
class ChangeSet:
    id: str
    name: str
    stack: Stack
    kind: str  # CREATE | UPDATE
    template: Params
    body: str
    parameters: Params
    given_parameters: list[Params]
    tags: list[Params]
    capabilities: list[str]
    description: str | None
    changes: list[ResourceChange]
    raw_parameters: Params = field(default_factory=dict)
    status: str = "CREATE_COMPLETE"
    execution: str = "AVAILABLE"
    reason: str = ""
    created: datetime = field(default_factory=now)


@dataclass
class Stack:
    id: str
    name: str
    status: str
    template: Params = field(default_factory=dict)
    body: str = ""
    parameters: Params = field(default_factory=dict)
    #: the parameters as given (an SSM parameter type: the parameter's name), what ``UsePreviousValue`` reads
    raw_parameters: Params = field(default_factory=dict)
    given_parameters: list[Params] = field(default_factory=list)
    tags: list[Params] = field(default_factory=list)
    capabilities: list[str] = field(default_factory=list)
    description: str | None = None
    reason: str = ""
    resources: dict[str, StackResource] = field(default_factory=dict)
    outputs: list[Params] = field(default_factory=list)
    events: list[Params] = field(default_factory=list)
    change_sets: dict[str, ChangeSet] = field(default_factory=dict)
    created: datetime = field(default_factory=now)
    updated: datetime | None = None
    deleted: datetime | None = None
    termination_protection: bool = False


class Failed(Exception):
    """A resource operation failed: the logical id and CloudFormation's reason."""

    def __init__(self, logical: str, reason: str) -> None:
        super().__init__(reason)
        self.logical = logical
        self.reason = reason


def handler_message(error: ApiError) -> str:
    """CloudFormation's wording of a resource handler's failure (what the stack event's reason says)."""
    code = "InvalidRequest" if error.status < 500 else "ServiceInternalError"
    return (f'Resource handler returned message: "{error.message} (Service: Batch, Status Code: {error.status}, '
            f'Request ID: {uuid.uuid4()})" (RequestToken: {uuid.uuid4()}, HandlerErrorCode: {code})')


class Stacks:
    """Every stack of the account, its change sets and its exports."""

    def __init__(self, region: str, account: str, providers: Callable[[str], Provider],
                 create_only: dict[str, list[str]], parameter: Callable[[str], str | None],
                 runs: Callable[[str], bool] = lambda type_name: True) -> None:
        self.region = region
        self.runs = runs
        self.account = account
        self.providers = providers
        self.create_only = create_only
        self.parameter = parameter
        #: live stacks by name; every stack (deleted ones too) by id
        self.by_name: dict[str, Stack] = {}
        self.by_id: dict[str, Stack] = {}

    # --- lookups ----------------------------------------------------------------------------

    def stack(self, ref: str, deleted: bool = False) -> Stack:
        found = self.by_name.get(ref) or (self.by_id.get(ref) if ref.startswith("arn:") else None)
        if found is None or (found.deleted is not None and not deleted and not ref.startswith("arn:")):
            raise ApiError(f"Stack with id {ref} does not exist", "ValidationError", 400)
        return found

    def change_set(self, name: str, stack_ref: str | None) -> ChangeSet:
        if name.startswith("arn:"):
            for stack in self.by_id.values():
                for change_set in stack.change_sets.values():
                    if change_set.id == name:
                        return change_set
        elif stack_ref:
            owner = self.by_name.get(stack_ref) or self.by_id.get(stack_ref)
            if owner is not None and name in owner.change_sets:
                return owner.change_sets[name]
        raise ApiError(f"ChangeSet [{name}] does not exist", "ChangeSetNotFound", 404)

    def exports(self) -> dict[str, tuple[Stack, str]]:
        found: dict[str, tuple[Stack, str]] = {}
        for stack in self.by_name.values():
            if stack.deleted is None and stack.status not in ("REVIEW_IN_PROGRESS", "ROLLBACK_COMPLETE"):
                for output in stack.outputs:
                    if "ExportName" in output:
                        found[output["ExportName"]] = (stack, output["OutputValue"])
        return found

    def importers(self, export: str) -> list[str]:
        """Names of the stacks whose template imports ``export``."""
        return sorted(stack.name for stack in self.by_name.values() if stack.deleted is None
                      and stack.status != "REVIEW_IN_PROGRESS" and export in set(_imports(stack.template)))

    # --- events -----------------------------------------------------------------------------

    def event(self, stack: Stack, logical: str, type_name: str, physical: str, status: str,
              reason: str = "", properties: Params | None = None) -> None:
        record: Params = {"StackId": stack.id, "EventId": str(uuid.uuid4()), "StackName": stack.name,
                          "LogicalResourceId": logical, "PhysicalResourceId": physical,
                          "ResourceType": type_name, "Timestamp": now(), "ResourceStatus": status}
        if reason:
            record["ResourceStatusReason"] = reason
        if properties is not None:
            record["ResourceProperties"] = shown(properties)
        stack.events.append(record)

    def stack_event(self, stack: Stack, status: str, reason: str = "") -> None:
        stack.status = status
        stack.reason = reason
        self.event(stack, stack.name, "AWS::CloudFormation::Stack", stack.id, status, reason)

    # --- change sets --------------------------------------------------------------------------

    def context(self, stack: Stack, parameters: Params, lenient: bool = False) -> tpl.Context:
        exports = self.exports()
        return tpl.Context(self.region, self.account, stack.name, stack.id, dict(parameters),
                           {k: r.created.physical for k, r in stack.resources.items()},
                           {k: dict(r.created.attributes) for k, r in stack.resources.items()},
                           mappings=stack.template.get("Mappings") or {},
                           exports=lambda name: exports[name][1] if name in exports else None, lenient=lenient,
                           stored=frozenset(k for k, r in stack.resources.items() if not self.runs(r.type_name)))

    def _parameters(self, template: Params, given: list[Params], previous: Params) -> tuple[Params, Params]:
        """The parameters' values (SSM parameter types read from the store) and their values as given (what
        ``UsePreviousValue`` reads next time)."""
        values: Params = {}
        raw: Params = {}
        declared = template.get("Parameters") or {}
        by_key = {str(p.get("ParameterKey")): p for p in given}
        unknown = sorted(set(by_key) - set(declared))
        if unknown:
            raise ApiError(f"Parameters: {unknown} do not exist in the template", "ValidationError", 400)
        missing = []
        for name, spec in declared.items():
            entry = by_key.get(name)
            if entry is not None and entry.get("UsePreviousValue"):
                value = previous.get(name)
            elif entry is not None and "ParameterValue" in entry:
                value = entry["ParameterValue"]
            else:
                value = spec.get("Default")
            if value is None:
                missing.append(name)
                continue
            raw[name] = value
            kind = str(spec.get("Type", "String"))
            if kind.startswith(SSM_TYPE_PREFIX):
                resolved = self.parameter(str(value))
                if resolved is None:
                    raise ApiError(f"Unable to fetch parameters [{value}] from parameter store for this account.",
                                   "ValidationError", 400)
                value = resolved
            elif kind == "Number":
                value = str(value)
            elif kind.startswith("List<") or kind == "CommaDelimitedList":
                value = str(value).split(",")
            values[name] = value
        if missing:
            raise ApiError(f"Parameters: {missing} must have values", "ValidationError", 400)
        return values, raw

    def create_change_set(self, params: Params, template: Params, body: str) -> ChangeSet:
        name = params["StackName"]
        kind = params.get("ChangeSetType", "UPDATE")
        stack = self.by_name.get(name)
        if stack is not None and stack.deleted is not None:
            stack = None
        if kind == "CREATE":
            if stack is not None and stack.status != "REVIEW_IN_PROGRESS":
                raise ApiError(f"Stack [{name}] already exists and cannot be created again with the changeSet "
                               f"[{params['ChangeSetName']}].", "AlreadyExistsException", 400)
            if stack is None:
                stack = Stack(f"arn:aws:cloudformation:{self.region}:{self.account}:stack/{name}/{uuid.uuid4()}",
                              name, "REVIEW_IN_PROGRESS")
                self.by_name[name] = stack
                self.by_id[stack.id] = stack
                self.stack_event(stack, "REVIEW_IN_PROGRESS", "User Initiated")
        elif stack is None or stack.status == "REVIEW_IN_PROGRESS":
            raise ApiError(f"Stack [{name}] does not exist", "ValidationError", 400)
        elif stack.status.endswith("_IN_PROGRESS") or stack.status in ("ROLLBACK_COMPLETE", "ROLLBACK_FAILED",
                                                                         "DELETE_FAILED"):
            raise ApiError(f"Stack:{stack.id} is in {stack.status} state and can not be updated.",
                           "ValidationError", 400)
        if params["ChangeSetName"] in stack.change_sets:
            raise ApiError(f"ChangeSet {params['ChangeSetName']} already exists", "AlreadyExistsException", 400)
        given = params.get("Parameters") or []
        values, raw = self._parameters(template, given, stack.raw_parameters)
        ctx = self.context(stack, values, lenient=True)
        ctx.conditions = tpl.conditions(template, ctx)
        failures = tpl.rule_failures(template, ctx)
        if failures:
            raise ApiError("Template error: " + "; ".join(failures), "ValidationError", 400)
        tpl.dependency_order(self._wanted(template, ctx))
        change_set = ChangeSet(
            f"arn:aws:cloudformation:{self.region}:{self.account}:changeSet/{params['ChangeSetName']}/"
            f"{uuid.uuid4()}", params["ChangeSetName"], stack, kind, template, body, values, given,
            params.get("Tags") or [], params.get("Capabilities") or [], params.get("Description"),
            self._changes(stack, template, values), raw_parameters=raw)
        same_template = stack.status != "REVIEW_IN_PROGRESS" and template == stack.template
        if not change_set.changes and same_template and values == stack.parameters and (
                change_set.tags == stack.tags or not change_set.tags):
            change_set.status, change_set.execution, change_set.reason = "FAILED", "UNAVAILABLE", NO_CHANGES
        stack.change_sets[change_set.name] = change_set
        return change_set

    def _wanted(self, template: Params, ctx: tpl.Context) -> dict[str, Params]:
        """The template's resources whose ``Condition`` holds."""
        return {k: r for k, r in template["Resources"].items()
                if not r.get("Condition") or ctx.conditions.get(r["Condition"], False)}

    def _changes(self, stack: Stack, template: Params, values: Params) -> list[ResourceChange]:
        ctx = self.context(stack, values, lenient=True)
        ctx.conditions = tpl.conditions(template, ctx)
        wanted = self._wanted(template, ctx)
        changes = []
        for logical in tpl.dependency_order(wanted):
            resource = wanted[logical]
            type_name = resource["Type"]
            current = stack.resources.get(logical)
            after = tpl.resolve(resource.get("Properties") or {}, ctx)
            if current is None or current.type_name != type_name:
                if current is not None:  # a new type under an old id: CloudFormation replaces
                    changes.append(ResourceChange("Remove", logical, current.type_name, current.created.physical,
                                                  before=current.properties))
                changes.append(ResourceChange("Add", logical, type_name, after=after))
                ctx.physical.pop(logical, None)
                ctx.attributes.pop(logical, None)
                continue
            details, replacement = self._details(type_name, current.properties, after, resource)
            if details:
                changes.append(ResourceChange("Modify", logical, type_name, current.created.physical, replacement,
                                              details, current.properties, after))
                if replacement is Replacement.TRUE:  # what refers to it sees a new id
                    ctx.physical.pop(logical, None)
                    ctx.attributes.pop(logical, None)
        for logical, current in stack.resources.items():
            if logical not in wanted:
                changes.append(ResourceChange("Remove", logical, current.type_name, current.created.physical,
                                              before=current.properties))
        return changes

    def _details(self, type_name: str, before: Params, after: Params,
                 resource: Params) -> tuple[list[Params], Replacement]:
        create_only = set(self.create_only.get(type_name, ()))
        details = []
        replacement = Replacement.FALSE
        raw = resource.get("Properties") or {}
        for name in sorted(set(before) | set(after)):
            if before.get(name) == after.get(name):
                continue
            dynamic = tpl.UNKNOWN in shown(after.get(name))
            recreation = "Never"
            if name in create_only:
                recreation = "Conditionally" if dynamic else "Always"
                found = Replacement.CONDITIONAL if dynamic else Replacement.TRUE
                if found is Replacement.TRUE or replacement is Replacement.FALSE:
                    replacement = found
            detail: Params = {"Target": {"Attribute": "Properties", "Name": name, "RequiresRecreation": recreation},
                              "Evaluation": "Dynamic" if dynamic else "Static",
                              "ChangeSource": "ResourceReference" if dynamic else "DirectModification"}
            if dynamic:
                refs = sorted(set(tpl.references(raw.get(name))))
                if refs:
                    detail["CausingEntity"] = refs[0]
            details.append(detail)
        return details, replacement

    # --- execution --------------------------------------------------------------------------

    def execute(self, change_set: ChangeSet, rollback: bool = True) -> None:
        stack = change_set.stack
        if change_set.execution != "AVAILABLE":
            raise ApiError(f"ChangeSet [{change_set.id}] cannot be executed in its current status of "
                           f"[{change_set.status}]", "InvalidChangeSetStatus", 400)
        change_set.execution = "EXECUTE_IN_PROGRESS"
        creating = stack.status == "REVIEW_IN_PROGRESS"
        previous = (copy.deepcopy(stack.template), stack.body, dict(stack.parameters), list(stack.tags),
                    stack.description, dict(stack.raw_parameters))
        stack.template, stack.body, stack.parameters = change_set.template, change_set.body, change_set.parameters
        stack.raw_parameters = change_set.raw_parameters
        stack.given_parameters, stack.capabilities = change_set.given_parameters, change_set.capabilities
        stack.tags = change_set.tags or stack.tags
        stack.description = change_set.template.get("Description")
        stack.change_sets.clear()  # CloudFormation drops a stack's change sets once one runs
        self.stack_event(stack, "CREATE_IN_PROGRESS" if creating else "UPDATE_IN_PROGRESS", "User Initiated")
        journal: list[tuple[str, str, StackResource | None]] = []  # (action, logical, what it replaced/was)
        cleanup: list[StackResource] = []
        try:
            self._apply(stack, change_set, journal, cleanup)
            stack.outputs = self._outputs(stack)
        except Failed as failure:
            change_set.execution = "EXECUTE_FAILED"
            self._roll_back(stack, creating, failure, journal, previous, rollback)
            return
        change_set.execution = "EXECUTE_COMPLETE"
        if creating:
            self.stack_event(stack, "CREATE_COMPLETE")
        else:
            self.stack_event(stack, "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS")
            removed = [stack.resources[c.logical] for c in change_set.changes
                       if c.action == "Remove" and c.logical in stack.resources
                       and stack.resources[c.logical].created.physical == c.physical]
            for resource in self._reverse(previous[0], cleanup + removed):
                # a removed resource's DeletionPolicy is the old template's; a replaced one is always deleted
                self._delete(stack, resource, previous[0] if resource in removed else None)
                if stack.resources.get(resource.logical) is resource:
                    del stack.resources[resource.logical]
            self.stack_event(stack, "UPDATE_COMPLETE")
        stack.updated = now() if not creating else None

    def _apply(self, stack: Stack, change_set: ChangeSet, journal: list[tuple[str, str, StackResource | None]],
               cleanup: list[StackResource]) -> None:
        template = change_set.template
        ctx = self.context(stack, change_set.parameters)
        ctx.conditions = tpl.conditions(template, ctx)
        wanted = self._wanted(template, ctx)
        planned = {c.logical: c for c in change_set.changes if c.action != "Remove"}
        for logical in tpl.dependency_order(wanted):
            change = planned.get(logical)
            resource = wanted[logical]
            type_name = resource["Type"]
            current = stack.resources.get(logical)
            try:
                properties = tpl.resolve(resource.get("Properties") or {}, ctx)
            except ApiError as error:
                self.event(stack, logical, type_name, "", "CREATE_FAILED" if current is None else "UPDATE_FAILED",
                           error.message)
                raise Failed(logical, error.message) from None
            if current is not None and current.type_name == type_name:
                if current.properties == properties:
                    continue
                replace = (change is not None and change.replacement is Replacement.TRUE) or any(
                    name in self.create_only.get(type_name, ()) and current.properties.get(name) != properties.get(name)
                    for name in set(current.properties) | set(properties))
                if replace:
                    self._replace(stack, logical, type_name, current, properties, resource, journal, cleanup)
                else:
                    self._update(stack, logical, current, properties, journal)
            else:
                if current is not None:  # another type: the old one goes at cleanup
                    cleanup.append(current)
                self._create(stack, logical, type_name, properties, journal, replaced=current)
            record = stack.resources[logical]
            ctx.physical[logical] = record.created.physical
            ctx.attributes[logical] = dict(record.created.attributes)

    def _create(self, stack: Stack, logical: str, type_name: str, properties: Params,
                journal: list[tuple[str, str, StackResource | None]], replaced: StackResource | None = None,
                reason: str = "") -> None:
        self.event(stack, logical, type_name, "", "CREATE_IN_PROGRESS", reason, properties)
        try:
            created = self.providers(type_name).create(stack.name, logical, properties)
        except ApiError as error:
            message = handler_message(error)
            self.event(stack, logical, type_name, "", "CREATE_FAILED", message, properties)
            raise Failed(logical, message) from None
        stack.resources[logical] = StackResource(logical, type_name, created, properties, "CREATE_COMPLETE")
        journal.append(("create", logical, replaced))
        self.event(stack, logical, type_name, created.physical, "CREATE_COMPLETE", "", properties)

    def _update(self, stack: Stack, logical: str, current: StackResource, properties: Params,
                journal: list[tuple[str, str, StackResource | None]]) -> None:
        physical = current.created.physical
        self.event(stack, logical, current.type_name, physical, "UPDATE_IN_PROGRESS", "", properties)
        try:
            created = self.providers(current.type_name).update(current.created, current.properties, properties)
        except ApiError as error:
            message = handler_message(error)
            self.event(stack, logical, current.type_name, physical, "UPDATE_FAILED", message, properties)
            raise Failed(logical, message) from None
        journal.append(("update", logical, copy.deepcopy(current)))
        current.created, current.properties, current.status = created, properties, "UPDATE_COMPLETE"
        current.updated = now()
        self.event(stack, logical, current.type_name, physical, "UPDATE_COMPLETE", "", properties)

    def _replace(self, stack: Stack, logical: str, type_name: str, current: StackResource, properties: Params,
                 resource: Params, journal: list[tuple[str, str, StackResource | None]],
                 cleanup: list[StackResource]) -> None:
        physical = current.created.physical
        name_property = _name_property(type_name)
        if name_property and properties.get(name_property) and \
                _same_identity(type_name, current.properties, properties, name_property):
            message = (f"CloudFormation cannot update a stack when a custom-named resource requires replacing. "
                       f"Rename {properties[name_property]} and update the stack again.")
            self.event(stack, logical, type_name, physical, "UPDATE_FAILED", message, properties)
            raise Failed(logical, message)
        self.event(stack, logical, type_name, physical, "UPDATE_IN_PROGRESS",
                   "Requested update requires the creation of a new physical resource; hence creating one.",
                   properties)
        try:
            created = self.providers(type_name).create(stack.name, logical, properties)
        except ApiError as error:
            message = handler_message(error)
            self.event(stack, logical, type_name, physical, "UPDATE_FAILED", message, properties)
            raise Failed(logical, message) from None
        stack.resources[logical] = StackResource(logical, type_name, created, properties, "UPDATE_COMPLETE")
        journal.append(("create", logical, current))
        cleanup.append(current)
        self.event(stack, logical, type_name, created.physical, "UPDATE_COMPLETE", "", properties)

    def _delete(self, stack: Stack, resource: StackResource, template: Params | None = None) -> None:
        """Delete one resource (``DeletionPolicy: Retain`` in ``template``, the stack's by default, keeps the
        current one); a failure raises ``Failed``."""
        declared = ((template or stack.template).get("Resources") or {}).get(resource.logical) or {}
        physical = resource.created.physical
        if declared.get("DeletionPolicy") == "Retain" and resource is stack.resources.get(resource.logical):
            self.event(stack, resource.logical, resource.type_name, physical, "DELETE_SKIPPED")
            return
        self.event(stack, resource.logical, resource.type_name, physical, "DELETE_IN_PROGRESS")
        try:
            self.providers(resource.type_name).delete(resource.created, resource.properties)
        except ApiError as error:
            message = handler_message(error)
            self.event(stack, resource.logical, resource.type_name, physical, "DELETE_FAILED", message)
            raise Failed(resource.logical, message) from None
        self.event(stack, resource.logical, resource.type_name, physical, "DELETE_COMPLETE")

    def _reverse(self, template: Params, resources: Iterable[StackResource]) -> list[StackResource]:
        """``resources`` in reverse dependency order of ``template`` (what refers to a resource goes first)."""
        order = {logical: index for index, logical in
                 enumerate(tpl.dependency_order(template.get("Resources") or {}))} if template else {}
        return sorted(resources, key=lambda r: order.get(r.logical, -1), reverse=True)

    def _roll_back(self, stack: Stack, creating: bool, failure: Failed,
                   journal: list[tuple[str, str, StackResource | None]],
                   previous: tuple[Params, str, Params, list[Params], str | None, Params], rollback: bool) -> None:
        reason = f"The following resource(s) failed to {'create' if creating else 'update'}: [{failure.logical}]. "
        if not rollback:
            self.stack_event(stack, "CREATE_FAILED" if creating else "UPDATE_FAILED", reason)
            return
        self.stack_event(stack, "ROLLBACK_IN_PROGRESS" if creating else "UPDATE_ROLLBACK_IN_PROGRESS",
                         reason + "Rollback requested by user.")
        problems = []
        for action, logical, before in reversed(journal):
            record = stack.resources.get(logical)
            if record is None:
                continue
            try:
                if action == "create":
                    self._delete(stack, record)
                    if before is None:
                        del stack.resources[logical]
                    else:
                        stack.resources[logical] = before
                elif before is not None:  # put an in-place update back
                    self.event(stack, logical, record.type_name, record.created.physical, "UPDATE_IN_PROGRESS")
                    self.providers(record.type_name).update(record.created, record.properties, before.properties)
                    stack.resources[logical] = before
                    self.event(stack, logical, record.type_name, record.created.physical, "UPDATE_COMPLETE")
            except (Failed, ApiError) as error:
                problems.append(str(error))
        if not creating:
            (stack.template, stack.body, stack.parameters, stack.tags, stack.description,
             stack.raw_parameters) = previous
        if creating:
            self.stack_event(stack, "ROLLBACK_FAILED" if problems else "ROLLBACK_COMPLETE", "; ".join(problems))
        else:
            self.stack_event(stack, "UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS")
            self.stack_event(stack, "UPDATE_ROLLBACK_FAILED" if problems else "UPDATE_ROLLBACK_COMPLETE",
                             "; ".join(problems))

    def _outputs(self, stack: Stack) -> list[Params]:
        ctx = self.context(stack, stack.parameters)
        ctx.conditions = tpl.conditions(stack.template, ctx)
        outputs = []
        exports = self.exports()
        for key, output in (stack.template.get("Outputs") or {}).items():
            if output.get("Condition") and not ctx.conditions.get(output["Condition"], False):
                continue
            try:
                if not isinstance(output, dict) or "Value" not in output:
                    raise ApiError(f"Template format error: output {key} needs a Value", "ValidationError", 400)
                value = tpl.resolve(output["Value"], ctx)
                entry: Params = {"OutputKey": key, "OutputValue": str(value)}
                if output.get("Description"):
                    entry["Description"] = output["Description"]
                if output.get("Export"):
                    name = str(tpl.resolve(output["Export"]["Name"], ctx))
                    owner = exports.get(name)
                    if owner is not None and owner[0] is not stack:
                        raise ApiError(f"Export with name {name} is already exported by stack {owner[0].name}",
                                       "ValidationError", 400)
                    entry["ExportName"] = name
            except ApiError as error:
                self.stack_event(stack, stack.status, error.message)
                raise Failed(stack.name, error.message) from None
            outputs.append(entry)
        old = {o["ExportName"] for o in stack.outputs if "ExportName" in o}
        new = {o["ExportName"] for o in outputs if "ExportName" in o}
        for name in sorted(old - new):
            users = [s for s in self.importers(name) if s != stack.name]
            if users:
                message = f"Cannot delete export {name} as it is in use by {', '.join(users)}."
                raise Failed(stack.name, message)
        return outputs

    def delete_stack(self, stack: Stack, retain: Iterable[str] = ()) -> None:
        """DeleteStack: every resource in reverse dependency order, synchronously."""
        if stack.status == "DELETE_COMPLETE":
            return
        if stack.termination_protection:
            raise ApiError(f"Stack [{stack.name}] cannot be deleted while TerminationProtection is enabled",
                           "ValidationError", 400)
        self.stack_event(stack, "DELETE_IN_PROGRESS", "User Initiated")
        for output in stack.outputs:
            users = [s for s in self.importers(output.get("ExportName", "")) if s != stack.name] \
                if "ExportName" in output else []
            if users:
                self.stack_event(stack, "DELETE_FAILED", f"Export {output['ExportName']} cannot be deleted as it is "
                                                         f"in use by {', '.join(users)}")
                return
        kept = set(retain)
        for resource in self._reverse(stack.template, list(stack.resources.values())):
            if resource.logical in kept:
                self.event(stack, resource.logical, resource.type_name, resource.created.physical, "DELETE_SKIPPED")
                continue
            try:
                self._delete(stack, resource)
            except Failed as failure:
                self.stack_event(stack, "DELETE_FAILED", f"The following resource(s) failed to delete: "
                                                         f"[{failure.logical}]. ")
                return
            del stack.resources[resource.logical]
        self.stack_event(stack, "DELETE_COMPLETE")
        stack.deleted = now()
        stack.outputs = []
        stack.change_sets.clear()
        del self.by_name[stack.name]


def _imports(template: Params) -> Iterable[str]:
    def walk(value: Any) -> Iterable[str]:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "Fn::ImportValue" and isinstance(item, str):
                    yield item
                else:
                    yield from walk(item)
        elif isinstance(value, list):
            for item in value:
                yield from walk(item)

    return walk(template.get("Resources") or {})


def _name_property(type_name: str) -> str | None:
    from policy_engine.adapters.endpoint.rehearsal.providers import BATCH_TYPES, STORED

    if type_name in BATCH_TYPES:
        return BATCH_TYPES[type_name].name_property
    return STORED.get(type_name, (None, "", ""))[0]


def _same_identity(type_name: str, before: Params, after: Params, name_property: str) -> bool:
    """Whether the replacement would take the old resource's identity: the same name (for a quota share, the
    same name in the same job queue, since its ARN holds both)."""
    if before.get(name_property) != after.get(name_property):
        return False
    if type_name == "AWS::Batch::QuotaShare":
        return before.get("JobQueue") == after.get("JobQueue")
    return True
