"""``batch-quota explain SHARE --scenario S``: why the share's jobs waited, derived from the simulated figures."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from policy_engine.cli.app import main

SHARES = [
    {"name": "big", "capacity": {"ml.g5.xlarge": 8}, "strategy": "LEND_AND_BORROW", "borrow_limit": 100},
    {"name": "idle", "capacity": {"ml.g5.xlarge": 1}, "strategy": "LEND"},
]


def _scenario(tmp_path: Path, jobs: list[dict], shares: list[dict] = SHARES, capacity: int = 9) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump({
        "topology": {"service_environments": [{"name": "env", "capacity": {"ml.g5.xlarge": capacity}}],
                     "job_queues": [{"name": "q", "service_environment": "env", "shares": shares}]},
        "jobs": jobs}))
    return path


def _waits(output: str) -> list[str]:
    return [line.split("waits", 1)[1].strip() for line in output.splitlines() if line.strip().startswith("waits")]


def test_a_line_held_by_one_eight_instance_head_names_it_and_the_figures_behind_its_wait(tmp_path: Path):
    # the head needs all 8 own instances while one of them runs, and the lenders have only 7 idle (its own)
    jobs = [{"name": "first", "share": "big", "instances": 1, "submit_at": 0, "duration": 3600},
            {"name": "lender-busy", "share": "idle", "instances": 1, "submit_at": 0, "duration": 7200},
            {"name": "wide", "share": "big", "instances": 8, "submit_at": 1, "duration": 600},
            *({"name": f"small-{i}", "share": "big", "instances": 1, "submit_at": 2, "duration": 60} for i in range(4))]
    result = CliRunner().invoke(main, ["explain", "q/big", "--scenario", str(_scenario(tmp_path, jobs))])
    assert result.exit_code == 0, result.output
    waits = _waits(result.output)
    assert waits[0].startswith("5 job(s) of q/big waited for ml.g5.xlarge")
    behind = next(line for line in waits if "behind the head of the line" in line)
    assert behind.startswith("79% of wait-hours were spent behind the head of the line, 89% of that behind one "
                             "8-instance head job (wide)")
    # while it blocked, wide waited above its limit to borrow: the lenders (the share's own idle) had 7, it needed 8
    assert ("While it held the line it waited mostly (100%): at its limit, nothing lendable; the lenders had 7 idle "
            "ml.g5.xlarge on average for a head needing 8 ml.g5.xlarge; the environment had 7 idle") in behind
    assert behind.endswith("the scenario runs without backfill, which would let a smaller job behind the head use "
                           "capacity the head cannot.")


def test_an_environment_full_share_is_told_the_environment_was_full(tmp_path: Path):
    shares = [{"name": "a", "capacity": {"ml.g5.xlarge": 2}, "strategy": "RESERVE"},
              {"name": "b", "capacity": {"ml.g5.xlarge": 2}, "strategy": "RESERVE"}]
    jobs = [{"name": "a1", "share": "a", "instances": 2, "submit_at": 0, "duration": 3600},
            {"name": "b1", "share": "b", "instances": 2, "submit_at": 0, "duration": 60}]
    path = tmp_path / "scenario.yaml"
    document = yaml.safe_load(_scenario(tmp_path, jobs, shares, capacity=2).read_text())
    document["topology"]["allow_oversubscription"] = True
    path.write_text(yaml.safe_dump(document))
    result = CliRunner().invoke(main, ["explain", "q/b", "--scenario", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    texts = [s["text"] for s in json.loads(result.output)["sentences"] if s["topic"] == "waits"]
    assert texts[1].startswith("100% of wait-hours: environment full; the share was within its limit and the "
                               "environment had 0 idle")
    assert "its environment's shares hold limits of 4 ml.g5.xlarge against 2 instances" in texts[1]


def test_a_share_that_could_borrow_more_is_told_the_lenders_had_room(tmp_path: Path):
    shares = [{"name": "a", "capacity": {"ml.g5.xlarge": 1}, "strategy": "LEND_AND_BORROW", "borrow_limit": 0},
              {"name": "l", "capacity": {"ml.g5.xlarge": 3}, "strategy": "LEND"}]
    jobs = [{"name": "a1", "share": "a", "instances": 1, "submit_at": 0, "duration": 600},
            {"name": "a2", "share": "a", "instances": 1, "submit_at": 0, "duration": 600}]
    result = CliRunner().invoke(main, ["explain", "q/a", "--scenario", str(_scenario(tmp_path, jobs, shares, 4))])
    assert result.exit_code == 0, result.output
    [_, sentence] = _waits(result.output)
    assert sentence.startswith("100% of wait-hours: at its limit, cannot borrow more; the share was at its ceiling "
                               "(1 ml.g5.xlarge) while the lenders had 3")


def test_a_share_that_never_waited_says_so(tmp_path: Path):
    jobs = [{"name": "one", "share": "idle", "instances": 1, "submit_at": 0, "duration": 60}]
    result = CliRunner().invoke(main, ["explain", "idle", "--scenario", str(_scenario(tmp_path, jobs))])
    assert result.exit_code == 0, result.output
    assert _waits(result.output) == ["No job of q/idle waited for ml.g5.xlarge in the scenario."]


@pytest.mark.parametrize("order", ["share first", "topology first"])
def test_a_topology_with_a_scenario_is_one_line_exit_2_and_suggests_a_command_that_works(tmp_path: Path, order):
    """``explain a.yaml vision --scenario m.yaml`` (the order other commands take) suggests ``explain vision
    --scenario m.yaml``, never ``explain a.yaml --scenario m.yaml`` (which names no share); the suggestion runs."""
    scenario = _scenario(tmp_path, [{"name": "one", "share": "big", "instances": 1, "submit_at": 0, "duration": 60}])
    topology = tmp_path / "t.yaml"
    topology.write_text("{}")
    given = ["q/big", str(topology)] if order == "share first" else [str(topology), "q/big"]
    result = CliRunner().invoke(main, ["explain", *given, "--scenario", str(scenario)])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [
        f"error: explain --scenario {scenario}: the topology is the scenario's; drop {str(topology)!r} "
        f"(batch-quota explain q/big --scenario {shlex.quote(str(scenario))})"]
    suggested = shlex.split(result.stderr.split("(", 1)[1].rstrip(")\n"))
    assert suggested[0] == "batch-quota"
    works = CliRunner().invoke(main, suggested[1:])
    assert works.exit_code == 0, works.output
    assert "q/big is a LEND_AND_BORROW quota share" in works.stdout


def test_two_files_and_a_scenario_ask_for_the_share(tmp_path: Path):
    scenario = _scenario(tmp_path, [])
    result = CliRunner().invoke(main, ["explain", "a.yaml", "b.yaml", "--scenario", str(scenario)])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [
        f"error: explain --scenario {scenario}: the topology is the scenario's; drop 'b.yaml' and name the share: "
        f"batch-quota explain QUEUE/SHARE --scenario {shlex.quote(str(scenario))}"]


def test_an_unknown_share_of_the_scenario_is_one_line_and_exit_2(tmp_path: Path):
    result = CliRunner().invoke(main, ["explain", "q/nope", "--scenario", str(_scenario(tmp_path, []))])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "no quota share 'q/nope'" in result.output


def test_a_larger_limit_is_told_to_come_from_another_share_when_the_limits_fill_the_environment():
    from types import SimpleNamespace

    from policy_engine.foundation.model import Topology
    from policy_engine.simulation.results.wait_advice import _room

    topology = Topology.model_validate({
        "service_environments": [{"name": "env", "capacity": {"ml.g5.xlarge": 9}}],
        "job_queues": [{"name": "q", "service_environment": "env", "shares": SHARES}]})
    share = SimpleNamespace(share="q/big", instance_type="ml.g5.xlarge")
    full = _room(topology, share, SimpleNamespace(environment_idle=5.0, needs=2.0))  # type: ignore[arg-type]
    assert full.startswith("the environment had 5 idle ml.g5.xlarge on average meanwhile (its shares' limits add "
                           "up to 9 of its 9)")
    assert full.endswith(": a larger limit has to be moved from another share (--vary "
                         "'transfer(A,B).capacity.ml.g5.xlarge=...') or the environment grown with it")
    roomy = topology.model_copy(update={"service_environments": (
        topology.service_environments[0].model_copy(update={"capacity": {"ml.g5.xlarge": 12}}),)})
    assert _room(roomy, share, SimpleNamespace(environment_idle=5.0, needs=2.0)).endswith(  # type: ignore[arg-type]
        "on average meanwhile (its shares' limits add up to 9 of its 12)")
