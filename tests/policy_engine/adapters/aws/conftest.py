"""Stubbed Batch clients for connector tests: botocore's Stubber validates every request and response."""

from __future__ import annotations

import pytest
from botocore.stub import Stubber

from policy_engine.cli.commands import aws_options as cli_options
from tests.policy_engine.adapters.aws.fake_account import batch_client, sagemaker_client


def _no_plans(options):
    """A SageMaker client of an account without training plans: one empty ListTrainingPlans, per command run."""
    client = sagemaker_client()
    stubber = Stubber(client)
    stubber.add_response("list_training_plans", {"TrainingPlanSummaries": []}, {})
    stubber.activate()
    return client


@pytest.fixture
def stubbed(monkeypatch):
    """``(client, stubber)``; commands get this client; every queued response must have been used. The account has
    no training plans (``plans_stubbed`` gives it some)."""
    client = batch_client()
    stubber = Stubber(client)
    monkeypatch.setattr(cli_options, "client_factory", lambda options: client)
    monkeypatch.setattr(cli_options, "sagemaker_factory", _no_plans)
    with stubber:
        yield client, stubber
    stubber.assert_no_pending_responses()  # a queued answer nobody asked for: a call the command did not make


@pytest.fixture
def plans_stubbed(monkeypatch, stubbed):
    """``(client, stubber)`` of SageMaker beside ``stubbed``'s Batch: commands read training plans through it."""
    client = sagemaker_client()
    stubber = Stubber(client)
    monkeypatch.setattr(cli_options, "sagemaker_factory", lambda options: client)
    with stubber:
        yield client, stubber
    stubber.assert_no_pending_responses()
