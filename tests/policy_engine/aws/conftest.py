"""Stubbed Batch clients for connector tests: botocore's Stubber validates every request and response."""

from __future__ import annotations

import pytest
from botocore.stub import Stubber

from policy_engine.aws import cli_options
from tests.policy_engine.aws.fake_account import batch_client


@pytest.fixture
def stubbed(monkeypatch):
    """``(client, stubber)``; commands get this client; every queued response must have been used."""
    client = batch_client()
    stubber = Stubber(client)
    monkeypatch.setattr(cli_options, "client_factory", lambda options: client)
    with stubber:
        yield client, stubber
    stubber.assert_no_pending_responses()  # a queued answer nobody asked for: a call the command did not make
