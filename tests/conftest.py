"""Shared fixtures: the embedded example and a helper to write topology files."""

from __future__ import annotations

from pathlib import Path

import pytest

from policy_engine.foundation.model import Topology
from policy_engine.inputs.examples import example_topology


@pytest.fixture
def example() -> Topology:
    return example_topology()


@pytest.fixture
def write_file(tmp_path: Path):
    """Write ``text`` to ``tmp_path/name`` and return the path."""

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.fixture(autouse=True)
def _no_aws(monkeypatch):
    """No test can reach AWS: dummy credentials, a fixed Region, Batch and SageMaker sent to a closed loopback port."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_ROLE_ARN",
                 "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                 "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ENDPOINT_URL_BATCH", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER", "http://127.0.0.1:9")


def pytest_collection_modifyitems(config, items):
    """With the compiled simulator, tests that replace its internals run in a pure-Python process instead.

    A compiled class cannot be subclassed or patched from Python, and compiled callers never see a
    patched module function; ``test_compiled`` runs the ``interpreted`` tests from source.
    """
    from policy_engine.simulation import compiled

    if compiled.runs_compiled:
        kept = [item for item in items if item.get_closest_marker("interpreted") is None]
        left_out = [item for item in items if item.get_closest_marker("interpreted") is not None]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            config.stash[_INTERPRETED_LEFT_OUT] = len(left_out)
        items[:] = kept


_INTERPRETED_LEFT_OUT = pytest.StashKey[int]()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    left_out = config.stash.get(_INTERPRETED_LEFT_OUT, 0)
    if left_out:
        terminalreporter.write_line(
            f"{left_out} tests that replace simulator internals were deselected (the simulator runs compiled): "
            "test_compiled.py runs them from source, or run them with BATCH_QUOTA_PURE_PYTHON=1")
