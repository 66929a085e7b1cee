"""``tune --targets constraints|objectives|ignore``, and a search where nothing is feasible says why: each target
no candidate meets with the nearest candidate's shortfall, and each invalid candidate's first rule, counted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from policy_engine.cli.app import main
from tests.builders import GPU

TRANSFER = f"transfer(q/B,q/A).capacity.{GPU}"


def _scenario(tmp_path: Path, guarantee: bool) -> Path:
    """A needs 3 instances and B 4 for no job to wait, on an environment of 6: both targets cannot be met."""
    topology = {
        "service_environments": [{"name": "env", "capacity": {GPU: 6}}],
        "job_queues": [{"name": "q", "service_environment": "env", "shares": [
            {"name": "A", "capacity": {GPU: 1}, "strategy": "RESERVE"},
            {"name": "B", "capacity": {GPU: 5}, "strategy": "RESERVE"}]}],
        "targets": [{"share": "q/A", "wait_p95": "10m"}, {"share": "q/B", "wait_p95": "10m"}],
        **({"guarantees": [{"share": "q/B", "min_capacity": {GPU: 5}}]} if guarantee else {}),
    }
    jobs = [{"name": f"{share.lower()}{i}", "share": share, "submit_at": 0, "duration": 3600}
            for share, count in (("A", 3), ("B", 4)) for i in range(count)]
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump({"topology": topology, "jobs": jobs}), encoding="utf-8")
    return path


def _tune(path: Path, *extra: str):
    return CliRunner().invoke(main, ["tune", str(path), "--vary", f"{TRANSFER}=0..5", "--budget", "6",
                                     "--workers", "1", "--quiet", *extra])


def test_nothing_feasible_names_each_unmet_target_and_counts_the_invalid_by_rule(tmp_path: Path):
    result = _tune(_scenario(tmp_path, guarantee=True))
    assert result.exit_code == 1, result.output
    assert "no candidate met every constraint" in result.output
    # only transfer 0 keeps B's guarantee: A's three jobs on one instance, the third waits 2h
    assert (f"no candidate meets target q/A wait p95 <= 10m 00s; nearest: {TRANSFER}=0, short by 1h 50m"
            in result.output)
    assert "no candidate meets target q/B" not in result.output  # B's target is met by transfer 0
    [counted] = [line for line in result.output.splitlines() if line.startswith("invalid candidates:")]
    # transfers 1-4 break B's guarantee; transfer 5 leaves B no capacity at all, which check finds first
    assert counted == "invalid candidates: 5 of 6 (BQ401: 4, BQ102: 1)"
    reasons = {line.split(": ", 1)[0].strip(): line.split(": ", 1)[1] for line in result.output.splitlines()
               if line.startswith(f"  {TRANSFER}=")}
    assert len(reasons) == 5 and reasons[f"{TRANSFER}=5"].startswith("BQ102 ")
    assert all(reasons[f"{TRANSFER}={t}"].startswith("BQ401 guarantees[0] (q/B)") for t in range(1, 5))
    data = json.loads(_tune(_scenario(tmp_path, guarantee=True), "--format", "json").stdout)
    assert data["invalid_by_rule"] == {"BQ401": 4, "BQ102": 1}
    assert [(entry["constraint"], entry["by"]) for entry in data["unmet"]] == [("target q/A wait p95 <= 10m 00s",
                                                                                6600.0)]


def test_without_the_guarantee_both_targets_still_cannot_be_met_together(tmp_path: Path):
    result = _tune(_scenario(tmp_path, guarantee=False))
    assert result.exit_code == 1 and "no candidate met every constraint" in result.output
    # each target alone is met by some transfer: none is "never met", the nearest candidate misses one
    assert "no candidate meets" not in result.output and "nearest candidate:" in result.output


@pytest.mark.parametrize("use", ["objectives", "ignore"])
def test_targets_as_objectives_or_ignored_let_tune_answer(tmp_path: Path, use: str):
    result = _tune(_scenario(tmp_path, guarantee=False), "--targets", use, "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["recommended"] is not None or data.get("keep_current")
    labels = [objective["label"] if isinstance(objective, dict) else objective for objective in data["objectives"]]
    assert any("targets_missed" in str(label) for label in labels) == (use == "objectives")


def test_the_evidence_is_per_share_with_the_most_harmed_share_first(tmp_path: Path):
    # two g5 from B to A: A's waits fall, B's third and fourth jobs now wait an hour
    result = CliRunner().invoke(main, ["tune", str(_scenario(tmp_path, guarantee=False)), "--vary", f"{TRANSFER}=2",
                                       "--budget", "1", "--workers", "1", "--quiet", "--targets", "ignore"])
    assert result.exit_code == 0, result.output
    assert "recommended: " in result.output
    # no ratio from a zero baseline: the rise itself, and the harm in hours
    assert ("most harmed by the recommendation: q/B: ml.g5.xlarge wait p95 0s -> 1h 00m (+1h 00m) (harm +"
            in result.output)
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in result.output.splitlines()
            if line.startswith("│") and " ml.g5.xlarge wait p95 " in line]
    assert rows == [["q/B ml.g5.xlarge wait p95", "0s", "1h 00m"],  # the harmed share first
                    ["q/A ml.g5.xlarge wait p95", "2h 00m", "0s"]]


def test_the_evidence_in_json_is_per_share_with_the_harm_measured_in_hours(tmp_path: Path):
    import json

    result = CliRunner().invoke(main, ["tune", str(_scenario(tmp_path, guarantee=False)), "--vary", f"{TRANSFER}=2",
                                       "--budget", "1", "--workers", "1", "--quiet", "--targets", "ignore",
                                       "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [(row["share"], row["instance_type"]) for row in data["evidence"]] == [("q/B", "ml.g5.xlarge"),
                                                                                  ("q/A", "ml.g5.xlarge")]
    # B keeps 3 instances for its 4 one-hour jobs: the fourth waits an hour (1 wait-hour added), no work lost
    assert [(w["share"], w["harm"], w["measure"]) for w in data["harmed"]] == [("q/B", 1.0, "wait_and_work_lost")]
