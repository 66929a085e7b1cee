"""The usage log the engine keeps (``simulation.usage.UsageLog``): appended to by the compiled pools through lists
(``Pool.keep_log``), moved into typed arrays every ``spill_at`` changes and before any is read.

Whatever the spill size, the log holds every change once, in the order made: hypothesis runs the simulator's random
scenarios with a log that spills after every 1 to 5 changes and with one that never spills mid-run, and compares
them; and the log read while changes are pending has them all.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.usage import LoggedShare, UsageLog
from tests.policy_engine.simulation.test_properties import PROPERTY_SETTINGS, scenarios


def _logged(scenario, spill_at: int) -> UsageLog:
    topology, jobs, updates, sim_settings = scenario
    engine = Engine(topology, jobs, updates, replace(sim_settings, usage_log=True))
    assert engine.usage is not None
    engine.usage.spill_at = spill_at
    engine.run()
    return engine.usage


@PROPERTY_SETTINGS
@given(scenarios(), st.integers(1, 5))
def test_every_change_is_logged_once_in_order_whatever_the_spill_size(scenario, spill_at):
    small, whole = _logged(scenario, spill_at), _logged(scenario, 10**9)
    assert len(small) == len(whole)
    assert not whole.pending_times or len(whole.pending_times) == len(whole)  # nothing moved before the read below
    for mine, theirs in zip(small.columns(), whole.columns(), strict=True):
        assert mine.tolist() == theirs.tolist()
    assert not small.pending_times and not whole.pending_times  # read: everything moved into the arrays


def test_pending_changes_are_read_with_the_others():
    log = UsageLog([LoggedShare("q/a", "p5.48xlarge", 2, True, 0)])
    log.spill_at = 3
    for step in range(7):
        log.record(float(step), 0, step)
    assert len(log) == 7 and len(log.pending_times) == 1  # two spills of three, one change pending
    times, who, used = log.columns()
    assert times.tolist() == [float(step) for step in range(7)] and used.tolist() == list(range(7))
    assert who.dtype == np.intc and not who.any()
    assert list(log.times) == times.tolist() and list(log.used) == list(range(7))


def test_a_share_changed_twice_at_one_instant_has_one_entry_where_it_first_changed():
    log = UsageLog([LoggedShare("q/a", "p5.48xlarge", 2, True, 0), LoggedShare("q/b", "p5.48xlarge", 2, True, 0)])
    log.record(1.0, 0, 3)
    log.record(1.0, 1, 1)
    log.record(1.0, 0, 5)  # a job ends and the next starts: the share's use as the instant ends
    log.record(2.0, 0, 4)
    times, who, used = log.columns()
    assert list(zip(times.tolist(), who.tolist(), used.tolist(), strict=True)) == [(1.0, 0, 5), (1.0, 1, 1),
                                                                                    (2.0, 0, 4)]
    log.record(2.0, 0, 6)  # read in the middle of an instant: the next change there is an entry of its own
    assert log.columns()[2].tolist() == [5, 1, 4, 6]


@PROPERTY_SETTINGS
@given(scenarios())
def test_the_engine_logs_a_share_once_per_instant(scenario):
    log = _logged(scenario, 2)
    times, who, _ = log.columns()
    pairs = list(zip(times.tolist(), who.tolist(), strict=True))
    assert len(set(pairs)) == len(pairs)
    assert times.tolist() == sorted(times.tolist())


def test_a_log_pickled_with_pending_changes_or_before_they_were_kept_pending_reads_back_whole():
    import pickle
    from array import array

    log = UsageLog([LoggedShare("q/a", "p5.48xlarge", 2, True, 0)])
    for step in range(3):
        log.record(float(step), 0, step)
    copy = pickle.loads(pickle.dumps(log))
    copy.record(2.0, 0, 5)  # the same instant as the last, still pending: overwritten in place
    assert [column.tolist() for column in copy.columns()] == [[0.0, 1.0, 2.0], [0, 0, 0], [0, 1, 5]]
    # what ``pickle`` wrote of a log whose columns were its slots ``times``, ``who`` and ``used``
    old = (None, {"limit_changes": [], "shares": log.shares, "times": array("d", [4.0]), "who": array("i", [0]),
                  "used": array("i", [3])})
    revived = UsageLog.__new__(UsageLog)
    revived.__setstate__(old)
    assert [column.tolist() for column in revived.columns()] == [[4.0], [0], [3]] and len(revived) == 1
    revived.times = array("d", [6.0])  # a column set by hand
    assert revived.columns()[0].tolist() == [6.0]
