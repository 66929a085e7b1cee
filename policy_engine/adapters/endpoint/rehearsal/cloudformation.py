"""CloudFormation's API (query protocol) over ``stacks.Stacks``: the operations the CDK CLI calls to deploy,
diff and destroy, and the reads a user rehearses with (DescribeStackResources, ListExports, ...)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from policy_engine.adapters.endpoint.base.errors import ApiError
from policy_engine.adapters.endpoint.rehearsal import template as tpl
from policy_engine.adapters.endpoint.rehearsal.stacks import ChangeSet, Stack, StackResource, Stacks

Params = dict[str, Any]
#: Events per DescribeStackEvents page (CloudFormation's page size is not documented; it returns 100).
EVENTS_PAGE = 100
#: What DescribeStackResources' ``ResourceStatusReason`` says of a resource nothing runs.
STORED_ONLY = "Stored by the batch-quota rehearsal, not run (docs/rehearsal.md)"


def _body(params: Params, read_url: Callable[[str], bytes]) -> tuple[Params, str]:
    if params.get("TemplateBody"):
        text = params["TemplateBody"]
    elif params.get("TemplateURL"):
        text = read_url(params["TemplateURL"]).decode("utf-8", "replace")
    else:
        raise ApiError("Either Template URL or Template Body must be specified.", "ValidationError", 400)
    return tpl.parse(text.encode()), text


def _stack_summary(stack: Stack) -> Params:
    out: Params = {"StackId": stack.id, "StackName": stack.name, "StackStatus": stack.status,
                   "CreationTime": stack.created, "Parameters": [
                       {"ParameterKey": k, "ParameterValue": v if isinstance(v, str) else ",".join(map(str, v))}
                       for k, v in stack.parameters.items()],
                   "Outputs": stack.outputs, "Tags": stack.tags, "Capabilities": stack.capabilities,
                   "EnableTerminationProtection": stack.termination_protection,
                   "DisableRollback": False, "NotificationARNs": [],
                   "DriftInformation": {"StackDriftStatus": "NOT_CHECKED"}}
    if stack.reason:
        out["StackStatusReason"] = stack.reason
    if stack.description:
        out["Description"] = stack.description
    if stack.updated:
        out["LastUpdatedTime"] = stack.updated
    if stack.deleted:
        out["DeletionTime"] = stack.deleted
    return out


def _resource(stack: Stack, resource: StackResource, stored: Callable[[str], bool]) -> Params:
    out: Params = {"StackName": stack.name, "StackId": stack.id, "LogicalResourceId": resource.logical,
                   "PhysicalResourceId": resource.created.physical, "ResourceType": resource.type_name,
                   "Timestamp": resource.updated, "LastUpdatedTimestamp": resource.updated,
                   "ResourceStatus": resource.status, "DriftInformation": {"StackResourceDriftStatus": "NOT_CHECKED"}}
    if stored(resource.type_name):
        out["ResourceStatusReason"] = STORED_ONLY
    return out


def _change_set(change_set: ChangeSet, with_values: bool) -> Params:
    stack = change_set.stack
    out: Params = {"ChangeSetId": change_set.id, "ChangeSetName": change_set.name, "StackId": stack.id,
                   "StackName": stack.name, "CreationTime": change_set.created,
                   "ExecutionStatus": change_set.execution, "Status": change_set.status,
                   "Parameters": change_set.given_parameters, "Capabilities": change_set.capabilities,
                   "Tags": change_set.tags, "NotificationARNs": [], "IncludeNestedStacks": False,
                   "Changes": [c.to_api(with_values) for c in change_set.changes]}
    if change_set.reason:
        out["StatusReason"] = change_set.reason
    if change_set.description:
        out["Description"] = change_set.description
    return out


def handle(stacks: Stacks, operation: str, params: Params, read_url: Callable[[str], bytes],
           stored: Callable[[str], bool]) -> Params:
    """One CloudFormation operation; ``ApiError`` (``ValidationError``, ...) for what CloudFormation refuses."""
    if operation == "DescribeStacks":
        ref = params.get("StackName")
        if ref:
            return {"Stacks": [_stack_summary(stacks.stack(ref))]}
        return {"Stacks": [_stack_summary(s) for s in stacks.by_name.values()]}
    if operation == "ListStacks":
        wanted = set(params.get("StackStatusFilter") or ())
        return {"StackSummaries": [
            {"StackId": s.id, "StackName": s.name, "StackStatus": s.status, "CreationTime": s.created,
             **({"DeletionTime": s.deleted} if s.deleted else {}),
             **({"LastUpdatedTime": s.updated} if s.updated else {})}
            for s in stacks.by_id.values() if not wanted or s.status in wanted]}
    if operation == "DescribeStackEvents":
        stack = stacks.stack(params["StackName"], deleted=True)
        events = list(reversed(stack.events))
        start = int(params.get("NextToken") or 0)
        page = events[start:start + EVENTS_PAGE]
        out: Params = {"StackEvents": page}
        if start + EVENTS_PAGE < len(events):
            out["NextToken"] = str(start + EVENTS_PAGE)
        return out
    if operation in ("DescribeStackResources", "ListStackResources"):
        stack = stacks.stack(params["StackName"], deleted=True)
        records = [_resource(stack, r, stored) for r in stack.resources.values()]
        if params.get("LogicalResourceId"):
            records = [r for r in records if r["LogicalResourceId"] == params["LogicalResourceId"]]
        if operation == "DescribeStackResources":
            return {"StackResources": records}
        return {"StackResourceSummaries": [
            {k: r[k] for k in ("LogicalResourceId", "PhysicalResourceId", "ResourceType", "LastUpdatedTimestamp",
                               "ResourceStatus", "ResourceStatusReason", "DriftInformation") if k in r}
            for r in records]}
    if operation == "DescribeStackResource":
        stack = stacks.stack(params["StackName"])
        resource = stack.resources.get(params["LogicalResourceId"])
        if resource is None:
            raise ApiError(f"Resource {params['LogicalResourceId']} does not exist for stack {stack.name}",
                           "ValidationError", 400)
        return {"StackResourceDetail": _resource(stack, resource, stored)}
    if operation == "GetTemplate":
        if params.get("ChangeSetName"):
            change_set = stacks.change_set(params["ChangeSetName"], params.get("StackName"))
            return {"TemplateBody": change_set.body, "StagesAvailable": ["Original", "Processed"]}
        stack = stacks.stack(params["StackName"], deleted=True)
        return {"TemplateBody": stack.body or "{}", "StagesAvailable": ["Original", "Processed"]}
    if operation == "GetTemplateSummary":
        if params.get("StackName"):
            template = stacks.stack(params["StackName"]).template
        else:
            template, _ = _body(params, read_url)
        return {"Parameters": [{"ParameterKey": k, "DefaultValue": str(v.get("Default", "")),
                                "ParameterType": v.get("Type", "String"), "NoEcho": False,
                                "Description": v.get("Description", "")}
                               for k, v in (template.get("Parameters") or {}).items()],
                "ResourceTypes": sorted({r["Type"] for r in template["Resources"].values()}),
                "Version": template.get("AWSTemplateFormatVersion", "2010-09-09"),
                "Description": template.get("Description", "")}
    if operation == "ValidateTemplate":
        template, _ = _body(params, read_url)
        tpl.dependency_order(template["Resources"])
        return {"Parameters": [{"ParameterKey": k, "DefaultValue": str(v.get("Default", "")), "NoEcho": False,
                                "Description": v.get("Description", "")}
                               for k, v in (template.get("Parameters") or {}).items()]}
    if operation == "CreateChangeSet":
        template, body = _body(params, read_url)
        # ImportExistingResources (cdk bootstrap sets it) adopts named resources that exist outside any stack: the
        # rehearsal's stored types never do, so it changes nothing; an explicit import is not served
        if params.get("ResourcesToImport"):
            raise ApiError("Resource import is not served by the batch-quota rehearsal", "ValidationError", 400)
        change_set = stacks.create_change_set(params, template, body)
        return {"Id": change_set.id, "StackId": change_set.stack.id}
    if operation == "DescribeChangeSet":
        change_set = stacks.change_set(params["ChangeSetName"], params.get("StackName"))
        return _change_set(change_set, bool(params.get("IncludePropertyValues")))
    if operation == "ListChangeSets":
        stack = stacks.stack(params["StackName"])
        return {"Summaries": [{"ChangeSetId": c.id, "ChangeSetName": c.name, "StackId": stack.id,
                               "StackName": stack.name, "Status": c.status, "ExecutionStatus": c.execution,
                               "CreationTime": c.created} for c in stack.change_sets.values()]}
    if operation == "ExecuteChangeSet":
        change_set = stacks.change_set(params["ChangeSetName"], params.get("StackName"))
        stacks.execute(change_set, rollback=not params.get("DisableRollback"))
        return {}
    if operation == "DeleteChangeSet":
        # a change set that is not there: success, as CloudFormation answers (the CDK CLI deletes its previous
        # change set by name before each deploy and expects no error)
        try:
            change_set = stacks.change_set(params["ChangeSetName"], params.get("StackName"))
        except ApiError:
            return {}
        del change_set.stack.change_sets[change_set.name]
        return {}
    if operation == "DeleteStack":
        try:
            stack = stacks.stack(params["StackName"])
        except ApiError:
            return {}  # CloudFormation: deleting a stack that does not exist succeeds
        stacks.delete_stack(stack, params.get("RetainResources") or ())
        return {}
    if operation == "UpdateTerminationProtection":
        stack = stacks.stack(params["StackName"])
        stack.termination_protection = bool(params["EnableTerminationProtection"])
        return {"StackId": stack.id}
    if operation == "ListExports":
        return {"Exports": [{"ExportingStackId": s.id, "Name": name, "Value": value}
                            for name, (s, value) in stacks.exports().items()]}
    if operation == "ListImports":
        users = stacks.importers(params["ExportName"])
        if params["ExportName"] not in stacks.exports():
            raise ApiError(f"Export '{params['ExportName']}' does not exist.", "ValidationError", 400)
        return {"Imports": users}
    if operation == "DescribeStackSet" or operation.startswith("DescribeType"):
        raise ApiError(f"{operation} is not served by the batch-quota rehearsal", "ValidationError", 400)
    raise ApiError(f"CloudFormation {operation} is not served by the batch-quota rehearsal (docs/rehearsal.md)",
                   "ValidationError", 400)

