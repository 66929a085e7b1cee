"""The pytest entry point users call: a one-line assertion, and the same as a registered fixture."""

from __future__ import annotations

import subprocess
import sys

import pytest

from policy_engine.inputs.examples import EXAMPLE_YAML
from policy_engine.testing import assert_topology_ok
from tests.builders import share, topology


def test_example_passes_and_returns_the_report(example):
    report = assert_topology_ok(example)
    assert "training/QS1" in report.summaries
    assert_topology_ok(EXAMPLE_YAML)
    assert_topology_ok(str(EXAMPLE_YAML))


def test_errors_fail_listing_every_finding():
    with pytest.raises(AssertionError) as caught:
        assert_topology_ok(topology(share("A", 2), share("B", 2), environment=3))
    assert "BQ201 error service_environments[gpu-env]" in str(caught.value)


def test_warnings_fail_only_when_asked(example):
    with pytest.raises(AssertionError, match="BQ302 warning training/QS1"):
        assert_topology_ok(example, allow_warnings=False)


def test_unloadable_file_fails_with_the_load_problems(write_file):
    with pytest.raises(AssertionError, match="unknown key 'stratgy'"):
        assert_topology_ok(write_file("t.yaml", EXAMPLE_YAML.read_text().replace("strategy:", "stratgy:", 1)))


def test_fixture_is_available_through_the_pytest11_entry_point(tmp_path):
    (tmp_path / "test_user.py").write_text(
        "def test_topology(assert_topology_ok):\n"
        f"    assert_topology_ok({str(EXAMPLE_YAML)!r})\n"
    )
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                            capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_assert_no_regression_passes_an_improvement_and_fails_a_regression(example):
    from policy_engine.testing import assert_no_regression

    bigger = example.model_copy(update={"service_environments": (
        example.service_environments[0].model_copy(update={"capacity": {"ml.g5.xlarge": 3}}),)})
    report = assert_no_regression(example, bigger)
    assert report.failures() == []
    queue = example.job_queues[0]
    reserve = example.model_copy(update={"job_queues": (queue.model_copy(update={"shares": (
        queue.shares[0], queue.shares[1].model_copy(update={"strategy": "RESERVE"}), queue.shares[2])}),)})
    with pytest.raises(AssertionError) as caught:
        assert_no_regression(EXAMPLE_YAML, reserve)
    message = str(caught.value)
    assert "guarantee lost: training/QS1 burst_capacity ml.g5.xlarge" in message
    assert "new finding: BQ402" not in message  # the refuted guarantee is reported once, as lost
    assert_no_regression(EXAMPLE_YAML, reserve, fail_on=("hazard",))


def test_assert_no_regression_reports_unloadable_input():
    from policy_engine.testing import assert_no_regression

    with pytest.raises(AssertionError, match="topology cannot be loaded"):
        assert_no_regression("no-such-file.yaml", EXAMPLE_YAML)
