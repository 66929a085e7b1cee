"""The EventBridge pattern matcher, on the cases the EventBridge user guide spells out ("Event patterns")."""

from __future__ import annotations

import pytest

from policy_engine.event_matching import PatternError, matches

EVENT = {
    "source": "aws.batch",
    "detail-type": "Batch Service Job State Change",
    "resources": ["arn:aws:batch:us-east-1:123456789012:service-job/1", "arn:other"],
    "detail": {"status": "RUNNABLE", "jobQueue": "arn:aws:batch:us-east-1:123456789012:job-queue/training",
               "schedulingPriority": 3, "isTerminated": False, "statusReason": None,
               "capacityUsage": [{"capacityUnit": "ml.g5.xlarge", "quantity": 1.0}]},
}


@pytest.mark.parametrize(("pattern", "expected"), [
    ({"source": ["aws.batch"]}, True),
    ({"source": ["aws.ec2"]}, False),
    ({"source": ["aws.ec2", "aws.batch"]}, True),  # alternatives: OR
    ({"source": ["aws.batch"], "detail-type": ["Batch Service Job Queue Blocked"]}, False),  # fields: AND
    ({"source": ["AWS.BATCH"]}, False),  # case-sensitive
    ({"detail": {"status": ["RUNNABLE"]}}, True),
    ({"detail": {"status": ["RUNNING"]}}, False),
    ({"detail": {"missing": ["x"]}}, False),  # a field the event lacks matches nothing
    ({"detail": {"schedulingPriority": [3]}}, True),
    ({"detail": {"schedulingPriority": [3.0]}}, True),  # numbers compare as numbers
    ({"detail": {"schedulingPriority": ["3"]}}, False),  # ... never as strings
    ({"detail": {"isTerminated": [False]}}, True),
    ({"detail": {"isTerminated": [0]}}, False),  # a boolean is not a number
    ({"detail": {"statusReason": [None]}}, True),
    ({"resources": ["arn:other"]}, True),  # an array in the event: any element
    ({"detail": {"capacityUsage": {"capacityUnit": ["ml.g5.xlarge"]}}}, True),  # objects inside an array
    ({"detail": {"capacityUsage": {"capacityUnit": ["ml.p5.48xlarge"]}}}, False),
    ({"detail": {"jobQueue": [{"prefix": "arn:aws:batch:us-east-1:"}]}}, True),
    ({"detail": {"jobQueue": [{"prefix": "arn:aws:batch:eu-west-1:"}]}}, False),
    ({"detail": {"jobQueue": [{"suffix": "/training"}]}}, True),
    ({"detail": {"status": [{"anything-but": "RUNNING"}]}}, True),
    ({"detail": {"status": [{"anything-but": ["RUNNABLE", "RUNNING"]}]}}, False),
    ({"detail": {"status": [{"anything-but": {"prefix": "RUN"}}]}}, False),
    ({"detail": {"missing": [{"anything-but": "x"}]}}, False),  # anything-but needs the field
    ({"detail": {"status": [{"exists": True}]}}, True),
    ({"detail": {"missing": [{"exists": False}]}}, True),
    ({"detail": {"status": [{"exists": False}]}}, False),
    ({"detail": {"missing": [{"exists": True}]}}, False),
])
def test_documented_semantics(pattern, expected):
    assert matches(pattern, EVENT) is expected


@pytest.mark.parametrize("pattern", [
    {},
    {"source": "aws.batch"},  # a value must be a list of alternatives
    {"source": []},
    {"detail": {"status": [{"numeric": [">", 0]}]}},  # not implemented: refused, never guessed
    {"detail": {"status": [{"prefix": 1}]}},
    {"detail": {"status": [{"prefix": "a", "suffix": "b"}]}},
])
def test_unsupported_or_invalid_patterns_are_refused(pattern):
    with pytest.raises(PatternError):
        matches(pattern, EVENT)
