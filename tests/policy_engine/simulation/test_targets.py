"""Targets: the model (Python and files), the schema's refusals, the judgement of a run against hand-worked
figures, and ``simulate --fail-on-target``'s exit codes and formats."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from policy_engine.cli import main
from policy_engine.loading import LoadError, topology_from_data
from policy_engine.model import Target
from policy_engine.simulation.outputs.targets import Criterion, evaluate_targets
from tests import gfm
from tests.builders import job, share, simulate, simulated_topology

TOPOLOGY = {
    "service_environments": [{"name": "env", "capacity": {"ml.g5.xlarge": 2, "ml.p4d.24xlarge": 1}}],
    "job_queues": [{"name": "q", "service_environment": "env", "shares": [
        {"name": "A", "capacity": {"ml.g5.xlarge": 1, "ml.p4d.24xlarge": 1}, "strategy": "LEND_AND_BORROW"},
        {"name": "B", "capacity": {"ml.g5.xlarge": 1}, "strategy": "LEND"}]}],
}


def test_durations_read_as_history_since_reads_them_and_numbers_as_seconds():
    target = Target(share="q/A", wait_p95="1h", wait_p50="10m")
    assert (target.wait_p95, target.wait_p50) == (3600.0, 600.0)
    assert Target(share="q/A", wait_p95=90).wait_p95 == 90.0
    loaded = topology_from_data({**TOPOLOGY, "targets": [{"share": "A", "wait_p95": "30d", "wait_p50": "3600s",
                                                          "max_preemptions_per_job": 2, "min_utilisation": 0.6}]})
    (target,) = loaded.targets
    assert (target.wait_p95, target.wait_p50, target.max_preemptions_per_job, target.min_utilisation) == (
        30 * 86400, 3600, 2, 0.6)


@pytest.mark.parametrize(("entry", "expected"), [
    ({"share": "q/C", "wait_p95": "1h"}, "targets[0].share: no quota share 'q/C'"),
    ({"share": "A", "instance_type": "ml.p5.48xlarge", "wait_p95": "1h"},
     "targets[0].instance_type: q/A has no limit for instance type 'ml.p5.48xlarge' (its types: ml.g5.xlarge, "
     "ml.p4d.24xlarge)"),
    ({"share": "A", "wait_p95": "ten"}, "targets[0].wait_p95: bad duration"),
    ({"share": "A", "wait_p50": "1w"}, "targets[0].wait_p50: bad duration"),
    ({"share": "A", "wait_p50": 0}, "targets[0].wait_p50: bad duration"),
    ({"share": "A", "min_utilisation": 1.5}, "targets[0].min_utilisation: utilisation outside 0..1"),
    ({"share": "A", "min_utilisation": -0.1}, "targets[0].min_utilisation: utilisation outside 0..1"),
    ({"share": "A", "max_preemptions_per_job": -1},
     "targets[0].max_preemptions_per_job: a number of preemptions is 0 or more, got -1"),
    ({"share": "A", "wait_p95": True}, "targets[0].wait_p95: input should be a valid number"),
    ({"share": "A"}, "targets[0]: holds the share to nothing"),
    ({"share": "A", "wait_p59": "1h"}, "targets[0].wait_p59: unknown key 'wait_p59' (did you mean 'wait_p95'?)"),
])
def test_each_problem_is_one_line_naming_the_target_and_the_rule(entry, expected):
    with pytest.raises(LoadError) as caught:
        topology_from_data({**TOPOLOGY, "targets": [entry]}, "t.yaml")
    lines = [line for line in caught.value.problems if "targets[0]" in line]
    assert len(lines) == 1 and expected in lines[0], caught.value.problems


def test_every_problem_of_every_target_is_reported_at_once():
    with pytest.raises(LoadError) as caught:
        topology_from_data({**TOPOLOGY, "targets": [{"share": "X", "wait_p95": "1h"}, {"share": "A", "wait_p50": "x"},
                                                    {"share": "B", "min_utilisation": 2}]}, "t.yaml")
    assert sorted(line.split(": ")[1] for line in caught.value.problems) == [
        "targets[0].share", "targets[1].wait_p50", "targets[2].min_utilisation"]


def test_a_run_is_judged_against_hand_worked_figures():
    # one instance; a, b, c of one hour each, queued at 0: waits 0, 1 h and 2 h; p50 = 1 h, p95 = 2 h
    topo = simulated_topology(1, share("A", 1)).model_copy(update={"targets": (
        Target(share="q/A", wait_p95="2h", wait_p50="30m", max_preemptions_per_job=0, min_utilisation=0.9),)})
    result = simulate(topo, [job("a", "A"), job("b", "A"), job("c", "A")])
    found = {r.criterion: r for r in evaluate_targets(topo, result)}
    assert (found[Criterion.WAIT_P95].actual, found[Criterion.WAIT_P95].met, found[Criterion.WAIT_P95].margin) == (
        7200, True, 0)
    assert (found[Criterion.WAIT_P50].actual, found[Criterion.WAIT_P50].met, found[Criterion.WAIT_P50].margin) == (
        3600, False, -1800)
    assert found[Criterion.MAX_PREEMPTIONS].met and found[Criterion.MAX_PREEMPTIONS].jobs == 3
    # busy for the whole three hours: own utilisation 1.0, 0.1 above the goal
    assert found[Criterion.MIN_UTILISATION].actual == 1.0
    assert found[Criterion.MIN_UTILISATION].margin == pytest.approx(0.1)


def test_a_utilisation_target_without_a_type_is_judged_per_type_never_summed():
    topo = topology_from_data({**TOPOLOGY, "targets": [{"share": "A", "min_utilisation": 0.5}]})
    result = simulate(topo, [job("a", "A", duration=100, instance_type="ml.p4d.24xlarge"),
                             job("g", "A", duration=10)])
    found = {r.instance_type: r for r in evaluate_targets(topo, result)}
    assert set(found) == {"ml.g5.xlarge", "ml.p4d.24xlarge"}
    assert found["ml.p4d.24xlarge"].met and not found["ml.g5.xlarge"].met


SCENARIO = """topology:
  service_environments: [{name: env, capacity: {ml.g5.xlarge: 1}}]
  job_queues:
    - name: q
      service_environment: env
      shares: [{name: A, capacity: {ml.g5.xlarge: 1}, strategy: RESERVE}]
  targets: [{share: A, wait_p95: %s}]
jobs:
  - {name: a, share: A, instance_type: ml.g5.xlarge, submit_at: 0, duration: 3600}
  - {name: b, share: A, instance_type: ml.g5.xlarge, submit_at: 0, duration: 3600}
"""


@pytest.mark.parametrize(("goal", "code"), [("2h", 0), ("30m", 1)])
def test_fail_on_target_exits_1_only_when_one_is_missed(tmp_path, goal, code):
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO % goal)
    out = CliRunner().invoke(main, ["simulate", str(path), "--fail-on-target"])
    assert out.exit_code == code, out.output
    assert ("MISSED" in out.output) == bool(code) and "targets: " in out.output
    assert CliRunner().invoke(main, ["simulate", str(path)]).exit_code == 0  # without the flag: a report only


def test_json_and_markdown_say_met_or_missed_with_the_margin(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO % "30m")
    data = json.loads(CliRunner().invoke(main, ["simulate", str(path), "--format", "json"]).output)
    assert data["targets"] == [{"target": 0, "share": "q/A", "instance_type": None, "criterion": "wait_p95",
                                "goal": 1800, "actual": 3600, "jobs": 2, "met": False, "margin": -1800}]
    markdown = CliRunner().invoke(main, ["simulate", str(path), "--format", "markdown"]).output
    table = next(t for t in gfm.tables(markdown) if t[0][0] == "target")
    assert table[1] == ["targets[0]", "q/A", "wait p95", "≤ 30m 00s", "1h 00m", "MISSED", "missed by 30m 00s"]


def test_the_html_report_has_a_targets_section_with_the_missed_row_marked(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO % "30m")
    out = CliRunner().invoke(main, ["simulate", str(path), "--report", str(tmp_path / "report")])
    assert out.exit_code == 0, out.output
    page = (tmp_path / "report" / "index.html").read_text()
    section = page.split("<h2>Targets</h2>")[1].split("<h2>")[0]
    assert "targets: 0 of 1 met; missed: q/A wait p95 missed by 30m 00s" in section
    assert '<tr class="missed"><td>targets[0]</td><td>q/A</td><td>wait p95</td><td>≤ 30m 00s</td>' in section
