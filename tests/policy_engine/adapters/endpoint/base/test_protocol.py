"""Routing from the botocore model (raw paths for ARNs) and validation from its shapes."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from policy_engine.adapters.endpoint.base.errors import ApiError
from policy_engine.adapters.endpoint.base.protocol import Router, parse_request, service_model
from policy_engine.adapters.endpoint.base.validation import validate

QUEUE_ARN = "arn:aws:batch:us-east-1:123456789012:job-queue/training/quota-share/QS1"


def test_every_operation_of_the_model_routes_to_itself():
    router, model = Router(), service_model()
    for name in model.operation_names:
        operation = model.operation_model(name)
        path = operation.http["requestUri"].replace("{resourceArn}", quote(QUEUE_ARN, safe=""))
        found = router.match(operation.http["method"], path)
        assert found is not None and found[0].name == name


def test_tag_routes_take_the_arn_from_the_raw_path_and_the_keys_from_the_query():
    router = Router()
    path = "/v1/tags/" + quote(QUEUE_ARN, safe="")
    operation, labels = router.match("DELETE", path)
    assert operation.name == "UntagResource" and labels == {"resourceArn": QUEUE_ARN}
    params = parse_request(operation, labels, b"tagKeys=a&tagKeys=b", b"")
    assert params == {"resourceArn": QUEUE_ARN, "tagKeys": ["a", "b"]}
    assert router.match("GET", path)[0].name == "ListTagsForResource"
    assert router.match("POST", path)[0].name == "TagResource"
    assert router.match("PUT", path) is None and router.known_path(path)
    assert router.match("POST", "/v1/nothing") is None


def test_validation_reads_required_types_enums_and_bounds_from_the_shapes():
    shape = service_model().operation_model("CreateQuotaShare").input_shape
    good = {"quotaShareName": "A", "jobQueue": "q", "capacityLimits": [{"maxCapacity": 1, "capacityUnit": "t"}],
            "resourceSharingConfiguration": {"strategy": "LEND"}, "preemptionConfiguration": {
                "inSharePreemption": "ENABLED"}, "tags": {"k": "v"}}
    assert validate(shape, good) == []
    problems = validate(shape, {**good, "quotaShareName": None, "capacityLimits": [{"maxCapacity": "1"}],
                                "resourceSharingConfiguration": {"strategy": "SHARE"},
                                "tags": {f"k{i}": "v" for i in range(51)}, "extra": 1})
    assert problems == [
        "Value null at 'quotaShareName' failed to satisfy constraint: Member must not be null",
        "Value null at 'capacityLimits.1.capacityUnit' failed to satisfy constraint: Member must not be null",
        "Value '1' at 'capacityLimits.1.maxCapacity' failed to satisfy constraint: Member must be an integer",
        "Value 'SHARE' at 'resourceSharingConfiguration.strategy' failed to satisfy constraint: "
        "Member must satisfy enum value set: [RESERVE, LEND, LEND_AND_BORROW]",
        "Value {'k0': 'v', 'k1': 'v', 'k2': 'v', 'k3': 'v', 'k4': 'v', '... at 'tags' failed to satisfy "
        "constraint: Member must have length less than or equal to 50",
        "Unknown member 'extra': CreateQuotaShareRequest has no such member",
    ]


def test_a_bad_body_is_a_client_exception():
    operation = service_model().operation_model("SubmitServiceJob")
    for body, message in ((b"{", "not valid JSON"), (b"[1]", "must be a JSON object"),
                          (b'{"jobName": "j"}', "3 validation errors detected")):
        with pytest.raises(ApiError) as caught:
            parse_request(operation, {}, b"", body)
        assert caught.value.code == "ClientException" and message in caught.value.message


#: A value of each JSON type: every member is sent as each one its shape does not take.
_OF_TYPE = {"string": "x", "integer": 1, "long": 1, "double": 1.5, "float": 1.5, "boolean": True,
            "timestamp": 1_700_000_000, "structure": {}, "list": [], "map": {}}
_JSON_VALUES = [None, "x", 1, 1.5, True, [], {}]


def _members(shape, path: str = "", seen: frozenset[str] = frozenset()):
    """(path, member shape, the structure holding it) of every member at every depth (recursive shapes once)."""
    if shape.type_name != "structure" or shape.name in seen:
        return
    for name, member in shape.members.items():
        if member.serialization.get("location") in ("uri", "querystring", "header", "headers"):
            continue
        at = f"{path}.{name}" if path else name
        yield at, member
        inner = member.member if member.type_name == "list" else member.value if member.type_name == "map" else member
        yield from _members(inner, f"{at}.1" if member.type_name in ("list", "map") else at, seen | {shape.name})


def _nest(path: str, value):
    """A request body holding ``value`` at ``path`` (``a.1.b``: member a is a list whose first item has b)."""
    body: dict = {}
    node = body
    parts = path.split(".")
    for index, part in enumerate(parts[:-1]):
        if part.isdigit():
            continue
        following = parts[index + 1]
        child: dict = {}
        node[part] = [child] if following.isdigit() else child
        node = child
    node[parts[-1]] = value
    return body


def _served_shapes():
    from policy_engine.adapters.endpoint import cloudtrail
    from policy_engine.adapters.endpoint.base import sagemaker
    from policy_engine.adapters.endpoint.operations import HANDLERS

    model = service_model()
    shapes = [(name, model.operation_model(name).input_shape) for name in sorted(HANDLERS)]
    shapes += [(f"SageMaker.{name}", sagemaker.service_model().operation_model(name).input_shape)
               for name in sagemaker.OPERATIONS]
    shapes.append(("CloudTrail.LookupEvents", cloudtrail.service_model().operation_model("LookupEvents").input_shape))
    return [(name, shape) for name, shape in shapes if shape is not None]


@pytest.mark.parametrize(("operation", "shape"), _served_shapes(), ids=lambda value: getattr(value, "name", value))
def test_every_member_of_every_served_operation_is_checked_against_its_type_before_use(operation, shape):
    """One mechanism for every operation: a member sent as null or as a value of another type is a validation
    problem at its path, so no handler ever reads it (``"schedulingPriority": null`` was a 500)."""
    checked = 0
    for path, member in _members(shape):
        kind = member.type_name
        for value in _JSON_VALUES:
            if value is not None and isinstance(value, type(_OF_TYPE[kind])) and not (
                    isinstance(value, bool) and kind != "boolean"):
                continue  # a value of the member's own type
            if kind in ("double", "float", "timestamp") and type(value) in (int, float):
                continue
            problems = validate(shape, _nest(path, value))
            assert any(f"at '{path}'" in problem for problem in problems), (path, value, problems)
            checked += 1
    in_body = [m for m in shape.members.values() if m.serialization.get("location") not in ("uri", "querystring")]
    assert checked > 0 or not in_body


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), 1e308, 253_402_300_800,
                                   -62_135_596_801, "not a date", "10000-01-01T00:00:00Z", "", True, None])
def test_a_timestamp_is_a_date_between_year_1_and_9999(value):
    from policy_engine.adapters.endpoint import cloudtrail
    from policy_engine.adapters.endpoint.base import sagemaker

    for shape, member in ((cloudtrail.service_model().operation_model("LookupEvents").input_shape, "StartTime"),
                          (sagemaker.service_model().operation_model("ListTrainingPlans").input_shape,
                           "StartTimeAfter")):
        problems = validate(shape, {member: value})
        assert len(problems) == 1 and problems[0].endswith(
            "Member must not be null" if value is None else
            "Member must be a timestamp between 0001-01-01 and 9999-12-31T23:59:59Z"), problems
        for good in (0, 1_700_000_000.5, 253_402_300_799, "2026-12-06T10:00:00Z", "2026-12-06"):
            assert validate(shape, {member: good}) == []


def test_patterns_are_checked_at_every_depth_and_compile():
    from policy_engine.adapters.endpoint.base import sagemaker

    shape = sagemaker.service_model().operation_model("DescribeTrainingPlan").input_shape
    assert validate(shape, {"TrainingPlanName": "ok-plan"}) == []
    (problem,) = validate(shape, {"TrainingPlanName": "../x"})
    assert "Member must satisfy regular expression pattern" in problem
