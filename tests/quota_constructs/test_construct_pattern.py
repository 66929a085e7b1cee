"""Every resource construct follows aws-cdk's Base / concrete / imported pattern (CONTRIBUTING.md, "How to add
a construct"): its base class in ``quota_constructs.base``, props refused at construction with a message naming
construct, field, value and what is allowed, and a ``from_*_arn`` importer that returns the base."""

from __future__ import annotations

import inspect

import pytest
from aws_cdk import Stack

import quota_constructs
from quota_constructs import base
from tests.quota_constructs.conftest import fast_app

ARN = "arn:aws:batch:us-east-1:123456789012:"
#: concrete construct -> (its importer, an ARN it accepts, the name attribute and the name in that ARN)
RESOURCES = {
    quota_constructs.ServiceEnvironment: ("from_service_environment_arn", "service-environment/gpu-env",
                                          "service_environment_name", "gpu-env"),
    quota_constructs.QuotaSchedulingPolicy: ("from_scheduling_policy_arn", "scheduling-policy/training-policy",
                                             "scheduling_policy_name", "training-policy"),
    quota_constructs.TrainingJobQueue: ("from_job_queue_arn", "job-queue/training", "job_queue_name", "training"),
    quota_constructs.QuotaShare: ("from_quota_share_arn", "job-queue/training/quota-share/QS1",
                                  "quota_share_name", "QS1"),
}


def test_every_public_base_class_lives_in_the_base_module():
    bases = {name for name in quota_constructs.__all__ if name.endswith("Base")}
    assert bases == {name for name, value in vars(base).items()
                     if inspect.isclass(value) and value.__module__ == base.__name__ and name.endswith("Base")}
    assert {getattr(quota_constructs, name).__module__ for name in bases} == {"quota_constructs.base"}


@pytest.mark.parametrize("construct", list(RESOURCES), ids=lambda c: c.__name__)
def test_a_construct_has_one_base_and_an_importer_that_returns_it(construct):
    importer, resource, attribute, name = RESOURCES[construct]
    (parent,) = construct.__bases__
    assert parent.__module__ == "quota_constructs.base"
    imported = getattr(construct, importer)(Stack(fast_app(), "Import"), "Imported", ARN + resource)
    assert isinstance(imported, parent) and not isinstance(imported, construct)
    assert getattr(imported, attribute) == name


def test_a_share_on_an_imported_queue_is_not_checked_against_shares_it_cannot_know():
    """A created queue refuses a second share of the same name; an imported one leaves that to AWS."""
    stack = Stack(fast_app(), "Shares")
    queue = quota_constructs.TrainingJobQueue.from_job_queue_arn(stack, "Queue", ARN + "job-queue/training")
    for index in range(2):
        share = quota_constructs.QuotaShare(stack, f"Share{index}", job_queue=queue, quota_share_name="QS1",
                                            capacity={"ml.g5.xlarge": 1}, strategy="RESERVE")
        assert share.share_id == "training/QS1"
