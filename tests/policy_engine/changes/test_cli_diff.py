"""``batch-quota diff``: exit codes, --fail-on, formats, the markdown size limit, bad input."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from policy_engine.changes import compare
from policy_engine.cli.app import main
from policy_engine.inputs.examples import EXAMPLE_YAML, large_topology
from policy_engine.reports.diff import markdown as diff_markdown

GOOD = EXAMPLE_YAML.read_text(encoding="utf-8")
# QS3 gets a second instance, and the environment with it: better for QS3, worse for nobody
MORE_CAPACITY = GOOD.replace("capacity: {ml.g5.xlarge: 3}", "capacity: {ml.g5.xlarge: 4}").replace(
    "capacity: {ml.g5.xlarge: 1}\n        strategy: RESERVE", "capacity: {ml.g5.xlarge: 2}\n        strategy: RESERVE")
# QS2 lends nothing any more: QS1's burst guarantee is lost (BQ402), no hazard
QS2_RESERVES = GOOD.replace("strategy: LEND\n", "strategy: RESERVE\n")


def diff(*args: str):
    return CliRunner().invoke(main, ["diff", *args])


@pytest.fixture
def files(write_file):
    return {name: str(write_file(f"{name}.yaml", text)) for name, text in
            {"base": GOOD, "more": MORE_CAPACITY, "reserve": QS2_RESERVES}.items()}


def test_nothing_worse_exits_0(files):
    result = diff(files["base"], files["more"])
    assert result.exit_code == 0, result.output
    assert "OK: nothing got worse" in result.output
    assert "capacity ml.g5.xlarge: 3 -> 4" in result.output


def test_lost_guarantee_exits_1_and_fail_on_selects(files):
    result = diff(files["base"], files["reserve"])
    assert result.exit_code == 1
    assert "LOST     training/QS1 burst_capacity ml.g5.xlarge: held -> refuted" in result.output
    assert diff(files["base"], files["reserve"], "--fail-on", "hazard").exit_code == 0
    assert diff(files["base"], files["reserve"], "--fail-on", "hazard", "--fail-on", "guarantee").exit_code == 1
    assert diff(files["base"], files["reserve"], "--fail-on", "finding").exit_code == 1
    assert diff(files["base"], files["reserve"], "--fail-on", "never").exit_code == 0


def test_hazard_exits_1(files):
    result = diff(files["more"], files["base"])  # 4 -> 3: a capacity cut
    assert result.exit_code == 1 and "capacity_cut" in result.output
    assert diff(files["more"], files["base"], "--fail-on", "guarantee").exit_code == 0
    assert "lowered_limit" in result.output and "training/QS3 ml.g5.xlarge limit 2 -> 1" in result.output


def test_new_and_deleted_topologies_against_dev_null(files):
    created = diff("/dev/null", files["base"], "--format", "json")
    data = json.loads(created.output)
    assert {(o["kind"], o["name"], o["status"]) for o in data["objects"]} >= {("quota_share", "training/QS1", "added")}
    assert created.exit_code == 1 and data["summary"]["new_findings"] >= 1  # the example's warnings are new
    deleted = json.loads(diff(files["base"], "/dev/null", "--format", "json").output)
    assert {h["kind"] for h in deleted["hazards"]} == {"delete"}


def test_json_keys_are_stable(files):
    data = json.loads(diff(files["base"], files["reserve"], "--format", "json").output)
    assert list(data) == ["base", "head", "ok", "failures", "summary", "objects", "guarantees", "new_findings",
                          "resolved_findings", "hazards", "impact", "promises"]
    assert data["ok"] is False and data["summary"]["guarantees_lost"] == 1
    [lost] = [g for g in data["guarantees"] if g["after"] == "refuted"]
    assert lost["counterexample"]["training/QS1"] == {"ml.g5.xlarge": 1}


def test_markdown_has_marker_verdict_and_collapsed_details(files):
    result = diff(files["base"], files["reserve"], "--format", "markdown")
    assert result.output.startswith(diff_markdown.MARKER)
    assert "❌" in result.output and "<details open><summary>Guarantees lost (1)</summary>" in result.output


@pytest.mark.parametrize("args", [
    ["missing.yaml", "also-missing.yaml"],
    ["BASE", "HEAD", "--rename", "nope"],
    ["BASE", "HEAD", "--at", "5"],
    ["BASE", "HEAD", "--fail-on", "never", "--fail-on", "hazard"],
    ["BASE", "HEAD", "--scenario", "missing-scenario.yaml"],
])
def test_bad_input_exits_2_without_traceback(files, args):
    args = [files["base"] if a == "BASE" else files["more"] if a == "HEAD" else a for a in args]
    result = diff(*args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output


def test_both_missing_files_are_reported(files):
    result = diff("missing.yaml", "also-missing.yaml")
    assert "missing.yaml: no such file" in result.output and "also-missing.yaml: no such file" in result.output


def test_markdown_of_a_large_change_fits_a_github_comment():
    base = large_topology(queues=10)
    head = base.model_copy(update={"job_queues": tuple(
        q.model_copy(update={"shares": tuple(s.model_copy(update={"capacity": dict.fromkeys(s.capacity, 1)})
                                             for s in q.shares)}) for q in base.job_queues)})
    report = compare(base, head)
    assert len(report.hazards) == 1000  # 200 shares x 5 instance types, each limit lowered
    text = diff_markdown.render(report)
    assert len(text) < diff_markdown.GITHUB_COMMENT_LIMIT
    assert "Left out to fit GitHub's 65,536-character comment limit" in text
    assert "of 1000 hazard(s)" in text
    # the budget is shared: hazards do not crowd out the share changes (and every shown table has rows)
    assert "<summary>Deploy hazards (1000)</summary>" in text and "<summary>Quota shares (200)</summary>" in text
    assert "| --- | --- |\n\n</details>" not in text
    small = diff_markdown.render(report, limit=10_000)
    assert len(small) < 10_000 and "quota shares change(s)" in small
