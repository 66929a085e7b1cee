"""The attribution of waits against its oracle (``wait_oracle``: the implementation before it was made columnar).

Every per-share, per-cause and per-job figure must agree within 1e-9 relative (of the share's waiting seconds
for a cause's seconds, which are differences of sums taken in another order), on the simulator's random
scenarios and on the benchmarks' 20,000-job workloads (``benchmarks/workloads.py``), in every attribution order.
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policy_engine.simulation.causes import WAIT_CAUSES
from policy_engine.simulation.core.engine import Engine, SimulationSettings
from policy_engine.simulation.results.records import build_result
from policy_engine.simulation.results.wait_causes import attribute
from policy_engine.simulation.results.wait_orders import ORDERS
from tests.policy_engine.simulation.results.wait_oracle import wait_causes as oracle
from tests.policy_engine.simulation.test_properties import PROPERTY_SETTINGS, scenarios

RELATIVE = 1e-9


def _close(mine: float, theirs: float, scale: float) -> bool:
    return math.isclose(mine, theirs, rel_tol=RELATIVE, abs_tol=RELATIVE * max(abs(scale), 1.0))


def _same_figures(mine: dict, theirs: dict, scale: float, what: str) -> None:
    """Two dicts of seconds (or of tuples of figures) by cause: the same causes in the same order, each close."""
    assert list(mine) == list(theirs), what
    for cause, value in mine.items():
        expected = theirs[cause]
        values = value if isinstance(value, tuple) else (value,)
        expected_values = expected if isinstance(expected, tuple) else (expected,)
        assert len(values) == len(expected_values), (what, cause)
        for got, want in zip(values, expected_values, strict=True):
            assert _close(got, want, max(scale, abs(want))), (what, cause, value, expected)


def assert_same_attribution(mine, theirs) -> None:
    """Every figure of two attributions of one run (``wait_causes.WaitCauses``, the oracle's)."""
    assert mine.order == theirs.order
    assert list(mine.job_causes) == list(theirs.job_causes)
    assert len(mine.shares) == len(theirs.shares)
    for got, want in zip(mine.shares, theirs.shares, strict=True):
        what = f"{got.share} {got.instance_type}"
        for name in ("share", "instance_type", "strategy", "limit", "ceiling", "jobs_waited", "preempted_borrowed",
                     "preempted_own", "misconfigured_jobs", "largest_misconfigured", "time_limited_jobs"):
            assert getattr(got, name) == getattr(want, name), (what, name)
        scale = want.wait_seconds
        assert _close(got.wait_seconds, want.wait_seconds, scale), what
        # a cause charged a residue of a subtraction in one and nothing in the other is within the tolerance
        charged = {cause: got.by_cause.get(cause, 0.0) for cause in WAIT_CAUSES}
        expected = {cause: want.by_cause.get(cause, 0.0) for cause in WAIT_CAUSES}
        _same_figures(charged, expected, scale, f"{what} by_cause")
        assert {c for c, s in got.by_cause.items() if s > RELATIVE * max(scale, 1.0)} == {
            c for c, s in want.by_cause.items() if s > RELATIVE * max(scale, 1.0)}, what
        assert {c: n for c, n in got.jobs_by_cause.items() if c in want.by_cause} == {
            c: n for c, n in want.jobs_by_cause.items() if c in got.by_cause}, what
        _same_figures(got.behind_by_head_cause, want.behind_by_head_cause, scale, f"{what} behind")
        _same_figures({c: tuple(v) for c, v in got.context.items()},
                      {c: tuple(v) for c, v in want.context.items()}, scale, f"{what} context")
        assert (got.blocker is None) == (want.blocker is None), what
        if want.blocker is not None:
            assert (got.blocker.name, got.blocker.instances, got.blocker.cause) == (
                want.blocker.name, want.blocker.instances, want.blocker.cause), what
            assert _close(got.blocker.seconds, want.blocker.seconds, scale), what
            _same_figures({0: tuple(got.blocker.context)}, {0: tuple(want.blocker.context)}, scale,
                          f"{what} blocker")


def _result(topology, jobs, updates=(), settings=None, until=None):
    engine = Engine(topology, jobs, updates, replace(settings or SimulationSettings(), usage_log=True))
    engine.run(until)
    return build_result(engine)


@PROPERTY_SETTINGS
@given(scenarios())
def test_the_attribution_matches_its_oracle_on_random_scenarios(scenario):
    topology, jobs, updates, sim_settings = scenario
    result = _result(topology, jobs, updates, sim_settings)
    for order in ORDERS:
        assert_same_attribution(attribute(result, topology, order), oracle.attribute(result, topology, order))
    # a report time before the end: jobs still waiting and running
    cut = _result(topology, jobs, updates, sim_settings, until=30.0)
    assert_same_attribution(attribute(cut, topology), oracle.attribute(cut, topology))


@PROPERTY_SETTINGS
@given(scenarios(), st.data())
def test_the_attribution_matches_its_oracle_when_limits_and_strategies_change_mid_run(scenario, data):
    from policy_engine.simulation.topology_changes import ShareUpdate

    topology, jobs, updates, sim_settings = scenario
    shares = topology.job_queues[0].shares
    changes = []
    for _ in range(data.draw(st.integers(1, 3))):
        changed = data.draw(st.sampled_from(shares))
        at = float(data.draw(st.integers(0, 60)))  # some at an instant of a submission or a placement
        if data.draw(st.booleans()):
            fields = {"capacity": {kind: data.draw(st.integers(0, 4)) for kind in sorted(changed.capacity)}}
        else:
            fields = {"strategy": data.draw(st.sampled_from(["RESERVE", "LEND"])), "borrow_limit": None}
        changes.append(ShareUpdate(at, f"{topology.job_queues[0].name}/{changed.name}", fields))
    result = _result(topology, jobs, [*updates, *changes], sim_settings)
    assert result.usage is not None and result.usage.limit_changes
    assert_same_attribution(attribute(result, topology), oracle.attribute(result, topology))


@PROPERTY_SETTINGS
@given(scenarios(), st.data())
def test_a_share_logged_twice_at_an_instant_is_attributed_as_once(scenario, data):
    """A log read in the middle of an instant gets a share's next change there as an entry of its own
    (``UsageLog.spill``): the sweep applies an instant's changes before it reads any, so the figures are the same."""
    from policy_engine.simulation.usage import UsageLog

    topology, jobs, updates, sim_settings = scenario
    result = _result(topology, jobs, updates, sim_settings)
    assert result.usage is not None
    times, who, used = (column.tolist() for column in result.usage.columns())
    doubled = UsageLog(result.usage.shares)
    doubled.limit_changes = result.usage.limit_changes
    for time, number, value in zip(times, who, used, strict=True):
        if data.draw(st.booleans()):  # an earlier use at the same instant, in an entry of its own
            doubled.record(time, number, data.draw(st.integers(0, 6)))
            doubled.spill()
        doubled.record(time, number, value)
    assert len(doubled) >= len(times)
    assert_same_attribution(attribute(replace(result, usage=doubled), topology), attribute(result, topology))


def _workloads():
    """``benchmarks/workloads.py``, the benchmarks' workloads (not a package: loaded from its file)."""
    path = Path(__file__).resolve().parents[4] / "benchmarks" / "workloads.py"
    spec = importlib.util.spec_from_file_location("benchmark_workloads", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("shape", ["heavy", "steady95"])
def test_the_attribution_matches_its_oracle_on_the_benchmark_workloads(shape, tmp_path):
    from policy_engine.simulation.scenarios.workload import load_jobs

    workloads = _workloads()
    topology = workloads.topology(shape)
    result = _result(topology, load_jobs(workloads.workload_csv(shape, 20_000, tmp_path), topology))
    expected = oracle.attribute(result, topology)
    assert sum(share.wait_seconds for share in expected.shares) > 0
    assert_same_attribution(attribute(result, topology), expected)
