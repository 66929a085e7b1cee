"""Deploy hazards have rule IDs (BQ701-BQ705), and a reviewed hazard is accepted by a suppression in HEAD."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from policy_engine.analysis.checks import check_topology
from policy_engine.analysis.rules import REGISTRY
from policy_engine.changes.compare import compare
from policy_engine.changes.report import HazardKind
from policy_engine.cli.app import main
from policy_engine.foundation.model import Suppression
from tests.builders import share, topology

BASE = topology(share("A", 4, "LEND"), share("B", 4, "LEND_AND_BORROW"), share("C", 2))
#: A's limit lowered, C deleted, the environment cut: three kinds of hazard
HEAD = topology(share("A", 2, "LEND"), share("B", 4, "LEND_AND_BORROW"), environment=6)


def test_every_hazard_kind_has_its_own_diff_only_rule_in_the_catalogue():
    rules = {kind: kind.rule for kind in HazardKind}
    assert len(set(rules.values())) == len(HazardKind)
    assert all(REGISTRY[rule].diff_only and REGISTRY[rule].suppressible_errors for rule in rules.values())
    assert rules[HazardKind.LOWERED_LIMIT] == "BQ703" and rules[HazardKind.DELETE] == "BQ702"


def test_a_reviewed_suppression_accepts_only_its_own_hazard_and_check_does_not_call_it_stale():
    report = compare(BASE, HEAD)
    assert {(h.rule, h.name) for h in report.hazards} == {("BQ703", "training/A"), ("BQ702", "training/C"),
                                                           ("BQ704", "gpu-env")}
    assert report.failures() == ["3 deploy hazard(s) (accept each with a suppression of its rule, BQ702, BQ703, "
                                 "BQ704, in HEAD)"]
    accepted = HEAD.model_copy(update={"suppress": (
        Suppression(rule="BQ703", object="training/A", reason="A's jobs are short; reclaim is fine"),
        Suppression(rule="BQ702", object="training/C", reason="C moved to another account"),
        Suppression(rule="BQ704", object="gpu-env", reason="C's capacity goes with it"))})
    report = compare(BASE, accepted)
    assert {h.accepted for h in report.hazards} == {"A's jobs are short; reclaim is fine",
                                                    "C moved to another account", "C's capacity goes with it"}
    assert report.failures() == []
    assert not {f.rule for f in check_topology(accepted).findings} & {"BQ002", "BQ003", "BQ702", "BQ703", "BQ704"}
    # the wrong rule, or the right rule on another object, accepts nothing
    for wrong in (Suppression(rule="BQ704", object="training/A", reason="x"),
                  Suppression(rule="BQ703", object="training/B", reason="x")):
        report = compare(BASE, HEAD.model_copy(update={"suppress": (wrong,)}))
        assert all(h.accepted is None for h in report.hazards)


@pytest.mark.parametrize("output_format", ["text", "markdown", "json"])
def test_every_format_names_the_rule_and_the_acceptance(write_file, output_format):
    dump = lambda t: yaml.safe_dump(t.model_dump(mode="json"))  # noqa: E731
    accepted = HEAD.model_copy(update={"suppress": (
        Suppression(rule="BQ703", object="training/A", reason="reviewed in #42"),)})
    base, head = write_file("base.yaml", dump(BASE)), write_file("head.yaml", dump(accepted))
    result = CliRunner().invoke(main, ["diff", str(base), str(head), "--format", output_format])
    assert result.exit_code == 1  # two hazards remain
    if output_format == "json":
        data = json.loads(result.output)
        by_rule = {h["rule"]: h for h in data["hazards"]}
        assert by_rule["BQ703"]["accepted"] == "reviewed in #42" and by_rule["BQ702"]["accepted"] is None
        assert data["summary"]["hazards_accepted"] == 1
    else:
        assert "BQ703" in result.output and "reviewed in #42" in result.output and "BQ702" in result.output
