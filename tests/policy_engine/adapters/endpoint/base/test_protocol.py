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
