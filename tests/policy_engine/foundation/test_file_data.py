"""What every written topology states explicitly: each queue's priority, each LEND_AND_BORROW share's borrow limit."""

from __future__ import annotations

import pytest

from policy_engine.foundation.aws_rules import written_borrow_limit
from policy_engine.foundation.file_data import topology_file_data
from tests.builders import share, topology


@pytest.mark.parametrize(("strategy", "given", "written"), [
    ("LEND_AND_BORROW", None, -1), ("LEND_AND_BORROW", 0, 0), ("LEND_AND_BORROW", 50, 50),
    ("LEND", None, None), ("RESERVE", None, None)])
def test_written_borrow_limit(strategy, given, written):
    assert written_borrow_limit(strategy, given) == written


def test_file_data_states_priorities_and_borrow_limits():
    data = topology_file_data(topology(share("a", 1, "LEND_AND_BORROW"), share("b", 1, "LEND"),
                                       share("c", 1, "LEND_AND_BORROW", borrow_limit=0)))
    queue = data["job_queues"][0]
    assert queue["priority"] == 1  # the model's default, written anyway
    assert [s.get("borrow_limit") for s in queue["shares"]] == [-1, None, 0]
