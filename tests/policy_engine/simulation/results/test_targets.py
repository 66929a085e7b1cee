"""Targets: the model (Python and files), the schema's refusals, the judgement of a run against hand-worked
figures, and ``simulate --fail-on-target``'s exit codes and formats."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.foundation.model import Target
from policy_engine.inputs.loading import LoadError, topology_from_data
from policy_engine.simulation.results.targets import Criterion, evaluate_targets
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


@pytest.mark.parametrize(("entries", "expected"), [
    # (c) a wait goal past MAX_WAIT_GOAL_DAYS (366 days): a mistyped unit, in a file or in Python
    ([{"share": "A", "wait_p95": "400d"}],
     ["t.yaml: targets[0].wait_p95: a wait goal is at most 366 days (31,622,400 s; a longer one is most likely a "
      "mistyped unit), got '400d'"]),
    ([{"share": "A", "wait_p50": 1e12}],
     ["t.yaml: targets[0].wait_p50: a wait goal is at most 366 days (31,622,400 s; a longer one is most likely a "
      "mistyped unit), got 1000000000000.0"]),
    ([{"share": "A", "wait_p95": "-1h"}],
     ["t.yaml: targets[0].wait_p95: bad duration: expected a positive number with d, h, m or s (30d, 12h, 90m, "
      "3600s), got '-1h'"]),
    ([{"share": "A", "wait_p95": -5}], ["t.yaml: targets[0].wait_p95: bad duration: expected a positive number of "
                                        "seconds, got -5"]),
    # (a) two targets of one share and type setting one criterion: different goals, or the same one twice
    ([{"share": "A", "wait_p95": "12h"}, {"share": "q/A", "wait_p95": "2h"}],
     ["t.yaml: targets[1].wait_p95: wait_p95 2h contradicts targets[0]'s wait_p95 of 12h for q/A: keep one goal "
      "(a criterion is judged once per share and instance type)"]),
    ([{"share": "A", "max_preemptions_per_job": 2}, {"share": "A", "max_preemptions_per_job": 2, "wait_p95": "1h"}],
     ["t.yaml: targets[1].max_preemptions_per_job: repeats targets[0]'s max_preemptions_per_job of 2 for q/A: "
      "remove one (a criterion is judged once per share and instance type)"]),
    ([{"share": "A", "instance_type": "ml.g5.xlarge", "min_utilisation": 0.5},
      {"share": "A", "instance_type": "ml.g5.xlarge", "min_utilisation": 0.6}],
     ["t.yaml: targets[1].min_utilisation: min_utilisation 0.6 contradicts targets[0]'s min_utilisation of 0.5 for "
      "q/A on ml.g5.xlarge: keep one goal (a criterion is judged once per share and instance type)"]),
    # (b) wait_p50 above wait_p95: in one target, or across two of the same share and type
    ([{"share": "A", "wait_p95": "1h", "wait_p50": "2h"}],
     ["t.yaml: targets[0].wait_p50: wait_p50 2h is above this target's wait_p95 of 1h for q/A: the median never "
      "exceeds the 95th percentile, so this goal could never be the one missed (swapped?)"]),
    ([{"share": "A", "instance_type": "ml.p4d.24xlarge", "wait_p95": 600},
      {"share": "A", "instance_type": "ml.p4d.24xlarge", "wait_p50": "20m"}],
     ["t.yaml: targets[1].wait_p50: wait_p50 20m is above targets[0]'s wait_p95 of 10m 00s for q/A on "
      "ml.p4d.24xlarge: the median never exceeds the 95th percentile, so this goal could never be the one "
      "missed (swapped?)"]),
])
def test_targets_that_contradict_or_cannot_be_meant_are_one_line_each(entries, expected):
    with pytest.raises(LoadError) as caught:
        topology_from_data({**TOPOLOGY, "targets": entries}, "t.yaml")
    assert caught.value.problems == expected


def test_targets_that_only_look_alike_are_fine():
    """Another type of the share, all its types beside one, other criteria, p50 equal to p95, a year's goal."""
    loaded = topology_from_data({**TOPOLOGY, "targets": [
        {"share": "A", "wait_p95": "12h", "wait_p50": "12h"},
        {"share": "A", "instance_type": "ml.g5.xlarge", "wait_p95": "2h", "wait_p50": "1h"},
        {"share": "A", "instance_type": "ml.p4d.24xlarge", "wait_p95": "4h"},
        {"share": "A", "max_preemptions_per_job": 0},
        {"share": "B", "wait_p95": "366d"},
        {"share": "B", "wait_p50": "12h"},  # B's p95 is 366 days: no contradiction
    ]}, "t.yaml")
    assert len(loaded.targets) == 6


def test_a_criterion_that_cannot_be_read_is_not_also_missing():
    """``1e400`` is refused by the reader; the target is not then also said to hold its share to nothing."""
    from policy_engine.inputs.reading import yaml_to_data

    text = ("service_environments: [{name: env, capacity: {ml.g5.xlarge: 2}}]\n"
            "job_queues: [{name: q, service_environment: env, shares: [{name: A, capacity: {ml.g5.xlarge: 1}, "
            "strategy: LEND}]}]\n"
            "targets: [{share: A, wait_p95: 1e400}]\n")
    data, lines, found = yaml_to_data(text, "t.yaml")
    with pytest.raises(LoadError) as caught:
        topology_from_data(data, "t.yaml", lines, found)
    assert caught.value.problems == ["t.yaml:3: targets[0].wait_p95: 1e400 is not a finite number"]


def test_the_python_api_refuses_the_same_targets():
    """A topology built in Python: ``Target`` refuses the absurd goal, ``check_topology`` (BQ001) the contradiction."""
    from policy_engine.analysis.checks import check_topology

    with pytest.raises(ValueError, match="a wait goal is at most 366 days"):
        Target(share="A", wait_p95=float("inf"))
    topo = simulated_topology(1, share("A", 1)).model_copy(update={"targets": (
        Target(share="A", wait_p95="1h"), Target(share="q/A", wait_p95=7200))})
    (finding,) = [f for f in check_topology(topo).findings if f.rule == "BQ001"]
    assert finding.message == ("wait_p95 2h 00m contradicts targets[0]'s wait_p95 of 1h 00m for q/A: keep one goal "
                               "(a criterion is judged once per share and instance type)")


CONFLICTING = """\
service_environments: [{name: env, capacity: {ml.g5.xlarge: 2}}]
job_queues:
  - {name: q, service_environment: env, shares: [{name: A, capacity: {ml.g5.xlarge: 1}, strategy: LEND_AND_BORROW},
                                                 {name: B, capacity: {ml.g5.xlarge: 1}, strategy: LEND}]}
targets:
  - {share: A, wait_p95: 1h, wait_p50: 2h}
  - {share: q/A, wait_p95: 30m}
"""


@pytest.mark.parametrize("command", [
    ["check", "{topology}"],
    ["simulate", "{scenario}"],
    ["sweep", "{scenario}", "--vary", "q/A.capacity.ml.g5.xlarge=1,2", "--workers", "1", "--quiet"],
    ["tune", "{scenario}", "--vary", "q/A.capacity.ml.g5.xlarge=1,2", "--budget", "2", "--workers", "1", "--quiet"],
    ["compare", "{scenario}", "--topology", "{good}", "--topology", "{topology}", "--workers", "1"],
    ["explain", "A", "{topology}"],
])
def test_every_command_refuses_contradicting_targets_with_one_line_each_and_exit_2(write_file, command):
    topology = write_file("topology.yaml", CONFLICTING)
    good = write_file("good.yaml", CONFLICTING.split("targets:")[0])
    scenario = write_file("scenario.yaml", "topology: topology.yaml\njobs:\n"
                                           "  - {name: a, share: A, submit_at: 0, duration: 60}\n")
    out = CliRunner().invoke(main, [part.format(topology=topology, scenario=scenario, good=good) for part in command])
    assert (out.exit_code, out.stdout) == (2, ""), out.output
    assert out.stderr.splitlines() == [
        f"error: {topology}:6: targets[0].wait_p50: wait_p50 2h is above this target's wait_p95 of 1h for q/A: the "
        "median never exceeds the 95th percentile, so this goal could never be the one missed (swapped?)",
        f"error: {topology}:7: targets[1].wait_p95: wait_p95 30m contradicts targets[0]'s wait_p95 of 1h for q/A: "
        "keep one goal (a criterion is judged once per share and instance type)"]


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
    assert ("--fail-on-target: 1 target criterion/criteria missed" in out.stderr) == bool(code)
    assert CliRunner().invoke(main, ["simulate", str(path)]).exit_code == 0  # without the flag: a report only


def test_fail_on_target_without_targets_says_it_judged_nothing(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text((SCENARIO % "1h").replace("  targets: [{share: A, wait_p95: 1h}]\n", ""))
    out = CliRunner().invoke(main, ["simulate", str(path), "--fail-on-target"])
    assert out.exit_code == 0, out.output
    assert f"note: --fail-on-target: {path}'s topology declares no targets, so none can be missed" in out.stderr


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


@pytest.mark.parametrize(("written", "fraction"), [("60%", 0.6), (0.6, 0.6), ("12.5%", 0.125)])
def test_a_utilisation_target_reads_a_percentage_as_constraints_do(written, fraction):
    from policy_engine.foundation.model import Target

    assert Target(share="q/A", min_utilisation=written).min_utilisation == pytest.approx(fraction)


def test_a_utilisation_target_above_100_percent_is_one_line_exit_2(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text((SCENARIO % "1h").replace("wait_p95: 1h}", "min_utilisation: 150%}"))
    out = CliRunner().invoke(main, ["simulate", str(path)])
    assert out.exit_code == 2 and len(out.stderr.strip().splitlines()) == 1
    assert "min_utilisation: utilisation outside 0..1" in out.stderr and "Value error" not in out.stderr


def test_the_model_s_duration_fields_are_exactly_the_criteria_measured_in_seconds():
    from policy_engine.foundation.model import TARGET_DURATIONS
    from policy_engine.foundation.units import Unit

    assert set(TARGET_DURATIONS) == {c.value for c in Criterion if c.unit is Unit.SECONDS}
