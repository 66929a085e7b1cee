"""Numbers read the same in every output: JSON keeps them exact, people read durations, never e-notation."""

from __future__ import annotations

import pytest

from policy_engine.reports.page.html_report import render_page
from policy_engine.reports.simulate.markdown import render as render_simulation
from policy_engine.simulation.results.numbers import as_number, plain
from tests.builders import job, share
from tests.builders import simulate as run
from tests.builders import simulated_topology as topology

BIG = 1234567


def test_json_numbers_are_ints_when_integral():
    assert as_number(600.0) == 600 and type(as_number(600.0)) is int and as_number(0.25) == 0.25
    assert plain({"a": [1.0, 0.5, (2.0,)]}) == {"a": [1, 0.5, [2]]}


def test_a_waiting_reason_at_a_large_time_has_no_e_notation():
    topo = topology(3, share("S0", 2, "LEND", in_share_preemption=True),
                    share("S1", 1, "LEND_AND_BORROW", borrow_limit=200))
    jobs = [job("low", "S0", priority=1, duration=BIG * 2), job("hi", "S0", priority=5, instances=2, at=BIG),
            job("bor", "S1", priority=0, instances=2, at=BIG)]
    reason = run(topo, jobs, until=BIG, min_runtime=0.25).job("hi").reason
    assert reason.endswith(f"preemption waits for bor (placed at {BIG}, protected until {BIG}.25 by min_runtime)")


@pytest.mark.parametrize(("until", "text"), [(BIG, "14d 7h"), (0.25, "0.2s"), (7200 + 185, "2h 03m")])
def test_markdown_and_html_times_read_as_durations(until, text):
    topo = topology(1, share("A", 1, "LEND"))
    result = run(topo, [job("a", "A", duration=BIG * 2), job("b", "A")], until=until, usage_log=True)
    markdown = render_simulation(result)
    html = render_page(result, topo)
    assert f"| {text} |" in markdown and "e+" not in markdown
    # b waited the whole run: its wait is the run's time, sortable by its seconds
    assert f"simulated time {text}" in html and f'data-value="{float(until)!r}">{text}</td>' in html
