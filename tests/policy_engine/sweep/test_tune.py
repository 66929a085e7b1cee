"""``batch-quota tune``: finds an optimum known by construction, writes a topology that passes check,
reports the Pareto front of two objectives, and refuses bad objectives with one line each."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.analysis.checks import check_topology
from policy_engine.cli.app import main
from policy_engine.inputs.loading import load_topology
from policy_engine.simulation.scenarios.workload import load_scenario
from policy_engine.sweep.executor import InProcess
from policy_engine.sweep.expressions import parse_constraint, parse_expression
from policy_engine.sweep.grammar import parse_vary
from policy_engine.sweep.run_record import RunRecord
from policy_engine.sweep.run_status import RunStatus
from policy_engine.sweep.tune import Objective, tune
from tests.policy_engine.sweep.scenarios import KNOWN_OPTIMUM

VARY = ["--vary", "q/A.capacity.ml.g5.xlarge=1..6", "--vary", "q/B.capacity.ml.g5.xlarge=1..6"]


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def known(tmp_path: Path) -> Path:
    path = tmp_path / "known.yaml"
    path.write_text(KNOWN_OPTIMUM, encoding="utf-8")
    return path


def test_finds_the_known_optimum_within_the_budget_and_writes_a_topology_that_passes_check(known: Path,
                                                                                             tmp_path: Path):
    # 36 candidates, 21 oversubscribe the 6 instances (invalid); only A=3, B=3 lets every job start at once
    best = tmp_path / "best.yaml"
    result = invoke("tune", str(known), *VARY, "--budget", "8", "--workers", "1", "-o", str(best), "--quiet",
                    "--minimize", "max(wait_p95)", "--constraint", "guarantees", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["recommended"]["values"] == {"q/A.capacity.ml.g5.xlarge": 3, "q/B.capacity.ml.g5.xlarge": 3}
    assert data["recommended"]["summary"]["wait_max"] == 0
    assert data["current"]["summary"]["wait_max"] == 7200  # A=1: its third job waits two hours
    assert sum(1 for run in data["runs"] if run["status"] == "ok") == 8  # the budget counts simulations
    topology = load_topology(best)
    assert check_topology(topology).ok
    assert [share.capacity for share in topology.job_queues[0].shares] == [{"ml.g5.xlarge": 3}] * 2
    text = invoke("tune", str(known), *VARY, "--budget", "8", "--workers", "1", "--quiet")
    assert "recommended: q/A.capacity.ml.g5.xlarge=3, q/B.capacity.ml.g5.xlarge=3" in text.stdout
    assert "Evidence" in text.stdout and re.search(r"│ min max\(wait_p95\) +│ +2h 00m │ +0s │", text.stdout)


def test_the_search_is_deterministic_and_does_not_depend_on_completion_order(known: Path):
    scenario = load_scenario(known)
    axes = parse_vary(VARY[1::2], scenario.topology)
    objective = [Objective(parse_expression("max(wait_p95)", scenario.topology), False)]

    class Reversed(InProcess):
        """Hands results back in the reverse order of submission, like a cluster might."""

        def map(self, function, shared, items):
            return reversed(list(super().map(function, shared, items)))

    first = tune(scenario, axes, objective, [], 6, InProcess(), seed=3)
    second = tune(scenario, axes, objective, [], 6, Reversed(), seed=3)
    assert [r.values for r in first.runs] == [r.values for r in second.runs]


def test_two_objectives_give_the_pareto_front_and_pick_chooses_a_point(tmp_path: Path):
    # both teams need 4 instances of 6: giving one 4 makes the other wait; the front is exactly (4, 2) and (2, 4)
    path = tmp_path / "tradeoff.yaml"
    path.write_text(KNOWN_OPTIMUM + "  - {name: a4, share: A, submit_at: 0, duration: 3600}\n"
                    "  - {name: b4, share: B, submit_at: 0, duration: 3600}\n", encoding="utf-8")
    args = ["tune", str(path), *VARY, "--budget", "15", "--workers", "1", "--quiet", "--minimize",
            "share(q/A).wait_max", "--minimize", "share(q/B).wait_max", "--format", "json"]
    data = json.loads(invoke(*args).stdout)
    front = [tuple(run["values"].values()) for run in data["front"]]
    assert front == [(4, 2), (2, 4)]  # by the first objective
    assert tuple(data["recommended"]["values"].values()) == (4, 2)  # default: best on the first objective
    picked = json.loads(invoke(*args, "--pick", "2").stdout)
    assert tuple(picked["recommended"]["values"].values()) == (2, 4)
    too_far = invoke(*args, "--pick", "3")
    assert too_far.exit_code == 2 and "the Pareto front has 2 point(s)" in too_far.stderr
    report = tmp_path / "report"
    assert invoke(*args, "--report", str(report)).exit_code == 0
    assert (report / "pareto.png").read_bytes()[:4] == b"\x89PNG"
    page = (report / "index.html").read_text()
    assert "Pareto front" in page
    # the page says the answer and its gain, not only the evidence table
    assert '<p class="decision">recommended: q/A.capacity.ml.g5.xlarge=4, q/B.capacity.ml.g5.xlarge=2' in page
    assert '<p class="decision">gain on min share(q/A).wait_max: ' in page
    # a constraint no candidate meets: the page says nothing is recommended, names the nearest, and each run's row
    # says which constraint it violates
    infeasible = tmp_path / "infeasible"
    both = ("--constraint", "share(q/A).wait_max < 1s", "--constraint", "share(q/B).wait_max < 1s")  # 4 + 4 of 6
    assert invoke(*args, *both, "--report", str(infeasible)).exit_code == 1
    page = (infeasible / "index.html").read_text()
    assert '<p class="decision">no candidate met every constraint: nothing to recommend</p>' in page
    assert '<p class="decision">nearest candidate: ' in page and "nearest candidate</th>" in page
    assert "<td>violates share(q/A).wait_max &lt; 1s" in page and "the front is empty" in page


def test_constraints_read_share_metrics_and_guarantees(known: Path):
    scenario = load_scenario(known)
    run = RunRecord(index=0, values={}, summary={"wait_p95": 10, "cluster_utilisation": 0.5},
                    shares=({"share": "q/A", "instance_type": "ml.g5.xlarge", "wait_p95": 700, "preemptions": 0},
                            {"share": "q/B", "instance_type": "ml.g5.xlarge", "wait_p95": 5, "preemptions": 2}))
    assert parse_constraint("share(q/A).wait_p95 <= 600", scenario.topology).violation(run) == 100
    assert parse_constraint("share(B).wait_p95 <= 600", scenario.topology).holds(run)
    assert parse_constraint("max(preemptions) < 2", scenario.topology).holds(run) is False
    assert parse_constraint("guarantees", scenario.topology).holds(run)  # no share is promised never_preempted
    # a bound as people write it: a duration for a wait, a percentage for a utilisation
    wait = run.summary["wait_p95"]
    hours = parse_constraint(f"wait_p95 <= {wait / 3600 + 1}h", scenario.topology)
    assert hours.bound == pytest.approx(wait + 3600) and hours.holds(run)
    assert hours.verdict(run).endswith("holds, 1h 00m to spare")
    assert parse_constraint("cluster_utilisation >= 60%", scenario.topology).verdict(run) == \
        "50.0%: violated by 10.0 points"
    assert not parse_constraint("guarantees", scenario.topology).holds(replace(run, status=RunStatus.INVALID))


@pytest.mark.parametrize(("flag", "value", "expected"), [
    ("--constraint", "share(q/C).wait_p95 <= 600", "'q/C' is not a quota share"),
    ("--constraint", "wait_p95 = 3", "expected EXPR <= BOUND"),
    ("--constraint", "preemptions <= 3h", "a duration (3h) bounds a wait; this figure is a count"),
    ("--constraint", "wait_p95 <= 60%", "a percentage bounds a utilisation; this figure is a duration"),
    ("--constraint", "cluster_utilisation >= 50", "a utilisation is between 0 and 1 (0% and 100%), got 50; did you "
                                                   "mean 50%?"),
    ("--constraint", "cluster_utilisation >= 150%", "a utilisation is between 0 and 1 (0% and 100%), got 150%"),
    ("--minimize", "median(wait_p95)", "unknown aggregate 'median'"),
    ("--maximize", "utilisation", "expected METRIC, AGG(METRIC), METRIC(TYPE), share(QUEUE/SHARE).METRIC"),
    ("--maximize", "utilisation(ml.p5.48xlarge)", "'ml.p5.48xlarge' is not an instance type of the topology"),
    ("--constraint", "share(A).utilisation(ml.p5.48xlarge) >= 0.5", "'ml.p5.48xlarge' is not an instance type"),
])
def test_bad_objectives_and_constraints_are_one_line_exit_2(known: Path, flag: str, value: str, expected: str):
    result = invoke("tune", str(known), *VARY, "--budget", "2", "--workers", "1", flag, value)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and expected in result.stderr, result.stderr


def test_the_recommended_topology_never_overwrites_an_input_and_its_directory_is_checked_first(known: Path):
    before = known.read_bytes()
    over = invoke("tune", str(known), *VARY, "--budget", "2", "--workers", "1", "-o", str(known))
    assert over.exit_code == 2 and "is also an input of this command" in over.stderr and over.stdout == ""
    assert known.read_bytes() == before
    missing = known.parent / "no-such-directory" / "best.yaml"
    nowhere = invoke("tune", str(known), *VARY, "--budget", "2", "--workers", "1", "-o", str(missing))
    assert nowhere.exit_code == 2 and nowhere.stdout == ""  # refused before any run, not after the search
    assert nowhere.stderr == f"error: -o {missing}: the directory {missing.parent} does not exist\n"
