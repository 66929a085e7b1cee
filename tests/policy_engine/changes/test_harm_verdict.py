"""The change review puts the harm first and never contradicts its replay: the verdict says which shares the
replay harms even when the review passes, ``compare`` names the most harmed share as ``diff`` does, and both give
per-type instance-hours lost as the median of each sample's total."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from policy_engine.changes.impact import Impact, lost_comparison
from policy_engine.cli.app import main
from policy_engine.simulation.results.side_by_side import INSTANCE_HOURS_LOST
from tests.builders import job, share
from tests.builders import simulated_topology as topology
from tests.gfm import html as gfm

BASE = topology(3, share("S1", 2, "RESERVE"), share("S2", 1, "LEND"))
HEAD = topology(3, share("S1", 1, "RESERVE"), share("S2", 2, "LEND"))
JOBS = [job("a", "S1", duration=100), job("b", "S1", duration=100), job("x", "S2", duration=100),
        job("y", "S2", at=30, duration=10)]
ACCEPTED = {"rule": "BQ703", "object": "q/S1", "reason": "reviewed"}


def _files(write_file, suppress: bool = True):
    def dump(t, extra=None):
        return yaml.safe_dump(t.model_dump(mode="json", exclude_none=True) | (extra or {}))

    base = write_file("base.yaml", dump(BASE))
    head = write_file("head.yaml", dump(HEAD, {"suppress": [ACCEPTED]} if suppress else None))
    rows = [{"name": j.name, "share": j.share, "submit_at": j.submit_at, "duration": j.duration} for j in JOBS]
    scenario = write_file("s.yaml", yaml.safe_dump({"topology": "base.yaml", "jobs": rows}))
    return str(base), str(head), str(scenario)


def _diff(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["diff", *args])
    return result.exit_code, result.output


def test_a_passing_review_whose_replay_harms_a_share_says_so_and_never_nothing_got_worse(write_file):
    base, head, scenario = _files(write_file)
    code, text = _diff(base, head, "--scenario", scenario, "--at", "10")
    assert code == 0  # the hazard is accepted: the exit code is --fail-on's, as documented
    verdict = text.splitlines()[2]
    assert verdict == ("PASS (no finding or hazard fails the review), but the replay harms 1 share(s): q/S1 "
                       "ml.g5.xlarge preemptions 0 -> 1 (+1)")
    assert "nothing got worse" not in text
    code, markdown = _diff(base, head, "--scenario", scenario, "--at", "10", "--format", "markdown")
    assert code == 0 and "### ⚠️ batch-quota diff" in markdown and "✅" not in markdown
    assert "<strong>PASS (no finding or hazard fails the review), but the replay harms 1 share(s)" in gfm(markdown)
    code, output = _diff(base, head, "--scenario", scenario, "--at", "10", "--format", "json")
    data = json.loads(output)
    assert code == 0 and data["ok"] is True and data["summary"]["shares_harmed"] == 1
    assert [(w["share"], w["figures"][0]["figure"], w["figures"][0]["times"]) for w in data["impact"]["harmed"]] \
        == [("q/S1", "preemptions", None)]  # no ratio from a zero baseline


def test_nothing_got_worse_only_when_the_replay_harms_no_share(write_file):
    base, head, scenario = _files(write_file)
    code, text = _diff(base, head, "--scenario", scenario, "--at", "1000")  # after the work is done
    assert code == 0 and text.splitlines()[2] == "OK: nothing got worse"
    assert "No share fares worse" in text
    code, markdown = _diff(base, head, "--scenario", scenario, "--at", "1000", "--format", "markdown")
    assert "### ✅ batch-quota diff" in markdown


def test_a_failing_review_also_names_the_harm(write_file):
    base, head, scenario = _files(write_file, suppress=False)
    code, text = _diff(base, head, "--scenario", scenario, "--at", "10")
    assert code == 1
    assert text.splitlines()[2].startswith("FAIL: 1 deploy hazard(s)")
    assert text.splitlines()[2].endswith("; and the replay harms 1 share(s): q/S1 ml.g5.xlarge preemptions 0 -> 1 (+1)")


def test_compare_names_the_most_harmed_share_as_diff_at_0_does(write_file):
    base, head, scenario = _files(write_file)
    _, text = _diff(base, head, "--scenario", scenario, "--at", "0")
    headline = next(line.strip() for line in text.splitlines() if "Most harmed" in line)
    result = CliRunner().invoke(main, ["compare", scenario, "--topology", base, "--topology", head])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert f"head against base: {headline}" in lines
    # the harm first: the headline, then the preemptions, before the wait p95 counts
    first = lines.index(f"head against base: {headline}")
    assert lines[first + 1].startswith("head against base: preemptions ")
    assert lines[first + 2].startswith("head against base: wait p95 lower for")


def lost_by_type(impact: Impact) -> dict[str, tuple[float, float]]:
    return {row.instance_type: (row.value(0, INSTANCE_HOURS_LOST), row.value(1, INSTANCE_HOURS_LOST))
            for row in lost_comparison(impact).rows}


def _rows(lost: dict[str, tuple[float, float]]) -> list[dict]:
    return [{"share": name, "instance_type": "ml.p4d.24xlarge", "jobs": 1, "instance_hours_lost_before": before,
             "instance_hours_lost_after": after} for name, (before, after) in lost.items()]


def test_per_type_instance_hours_lost_is_the_median_of_each_samples_total_not_a_sum_of_medians():
    # per-share medians: A 10 -> 10, B 10 -> 10 (sum 20 -> 20); per-sample totals 11, 20, 30 -> 11, 20, 50
    samples = (_rows({"q/A": (1, 1), "q/B": (10, 10)}), _rows({"q/A": (10, 10), "q/B": (10, 10)}),
               _rows({"q/A": (20, 40), "q/B": (10, 10)}))
    impact = Impact("s.yaml", 0.0, [], [], 0.0, 0.0, shares=samples[0], sample_shares=samples)
    assert lost_by_type(impact) == {"ml.p4d.24xlarge": (20.0, 20.0)}
    samples = (_rows({"q/A": (1, 1), "q/B": (1, 1)}), _rows({"q/A": (10, 10), "q/B": (30, 30)}),
               _rows({"q/A": (20, 20), "q/B": (2, 2)}))
    impact = Impact("s.yaml", 0.0, [], [], 0.0, 0.0, shares=samples[0], sample_shares=samples)
    # sums of medians would be 10 + 2 = 12; the totals are 2, 40, 22: their median is 22
    assert lost_by_type(impact) == {"ml.p4d.24xlarge": (22.0, 22.0)}
