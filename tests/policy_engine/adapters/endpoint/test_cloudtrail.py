"""``serve`` answers CloudTrail's ``LookupEvents`` for its own calls (JSON 1.1 on the same port), as CloudTrail does."""

from __future__ import annotations

import json
import urllib.request
from datetime import UTC, datetime

import boto3
import pytest
from botocore.exceptions import ClientError

from policy_engine.adapters.endpoint import cloudtrail
from policy_engine.adapters.endpoint.base.validation import validate
from tests.policy_engine.adapters.endpoint.conftest import SIGNED, client, submit


def trail_client(endpoint):
    return boto3.client("cloudtrail", endpoint_url=endpoint.url, region_name="us-east-1",
                        aws_access_key_id="testing", aws_secret_access_key="testing")


def test_every_change_is_an_event_newest_first_with_its_request_as_cloudtrail_records_it(walkthrough_endpoint):
    batch, trail = client(walkthrough_endpoint), trail_client(walkthrough_endpoint)
    walkthrough_endpoint.advance(10)
    job = submit(batch, "high", "QS1", priority=3)
    batch.describe_service_job(jobId=job)  # read-only: not recorded
    walkthrough_endpoint.advance(5)
    batch.update_service_job(jobId=job, schedulingPriority=9)
    events = [e for page in trail.get_paginator("lookup_events").paginate() for e in page["Events"]]
    assert [e["EventName"] for e in events] == [
        "UpdateServiceJob", "SubmitServiceJob", "CreateQuotaShare", "CreateQuotaShare", "CreateQuotaShare",
        "CreateJobQueue", "CreateSchedulingPolicy", "CreateServiceEnvironment"]  # the startup topology, at 0
    update, submitted = events[0], events[1]
    origin = walkthrough_endpoint.service.origin_ms
    assert update["EventTime"] == datetime.fromtimestamp((origin + 15_000) / 1000, UTC)
    record = json.loads(update["CloudTrailEvent"])
    assert record["eventName"] == "UpdateServiceJob" and record["eventSource"] == "batch.amazonaws.com"
    assert record["requestParameters"] == {"jobId": job, "schedulingPriority": 9}
    assert record["eventTime"] == datetime.fromtimestamp((origin + 15_000) // 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert json.loads(submitted["CloudTrailEvent"])["responseElements"]["jobId"] == job
    assert {"ResourceType": "AWS::Batch::ServiceJob", "ResourceName": job} in update["Resources"]
    share = json.loads(events[2]["CloudTrailEvent"])["requestParameters"]
    assert share["capacityLimits"] == [{"maxCapacity": 1, "capacityUnit": "ml.g5.xlarge"}]


def test_lookup_attributes_time_ranges_and_pages(walkthrough_endpoint):
    batch, trail = client(walkthrough_endpoint), trail_client(walkthrough_endpoint)
    jobs = []
    for index in range(7):
        walkthrough_endpoint.advance(1)
        jobs.append(submit(batch, f"j{index}", "QS2"))
    pages = list(trail.get_paginator("lookup_events").paginate(
        LookupAttributes=[{"AttributeKey": "EventName", "AttributeValue": "SubmitServiceJob"}],
        PaginationConfig={"PageSize": 3}))
    assert [len(page["Events"]) for page in pages] == [3, 3, 1]
    listed = [json.loads(e["CloudTrailEvent"])["responseElements"]["jobId"] for page in pages for e in page["Events"]]
    assert listed == jobs[::-1]
    origin = walkthrough_endpoint.service.origin_ms
    ranged = trail.lookup_events(StartTime=datetime.fromtimestamp((origin + 3000) / 1000, UTC),
                                 EndTime=datetime.fromtimestamp((origin + 5000) / 1000, UTC))["Events"]
    assert len(ranged) == 3
    by_resource = trail.lookup_events(LookupAttributes=[{"AttributeKey": "ResourceName", "AttributeValue": jobs[2]}])
    assert [e["EventName"] for e in by_resource["Events"]] == ["SubmitServiceJob"]


@pytest.mark.parametrize(("request_params", "code"), [
    ({"LookupAttributes": [{"AttributeKey": "EventName", "AttributeValue": "A"},
                           {"AttributeKey": "EventName", "AttributeValue": "B"}]}, "InvalidLookupAttributesException"),
    ({"MaxResults": 51}, "InvalidMaxResultsException"),
    ({"StartTime": datetime(2030, 1, 1, tzinfo=UTC), "EndTime": datetime(2029, 1, 1, tzinfo=UTC)},
     "InvalidTimeRangeException"),
    ({"NextToken": "nonsense"}, "InvalidNextTokenException"),
])
def test_bad_lookups_are_cloudtrail_errors(walkthrough_endpoint, request_params, code):
    with pytest.raises(ClientError) as caught:
        trail_client(walkthrough_endpoint).lookup_events(**request_params)
    assert caught.value.response["Error"]["Code"] == code
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def _raw(endpoint, operation: str, body: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(endpoint.url + "/", data=body, method="POST", headers={
        "X-Amz-Target": cloudtrail.TARGET_PREFIX + operation, "Content-Type": "application/x-amz-json-1.1", **SIGNED})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_responses_conform_to_the_cloudtrail_model_and_other_operations_are_refused(walkthrough_endpoint):
    status, body = _raw(walkthrough_endpoint, "LookupEvents", b"{}")
    assert status == 200
    shape = cloudtrail.service_model().operation_model("LookupEvents").output_shape
    assert validate(shape, body) == []
    assert _raw(walkthrough_endpoint, "DescribeTrails", b"{}") == (400, {
        "__type": "UnsupportedOperationException",
        "message": "Operation DescribeTrails is not supported by batch-quota serve (it answers LookupEvents)"})
    assert _raw(walkthrough_endpoint, "LookupEvents", b"[")[1]["__type"] == "SerializationException"
    assert _raw(walkthrough_endpoint, "LookupEvents", b'{"MaxResults": "x"}')[1]["__type"] == "ValidationException"
