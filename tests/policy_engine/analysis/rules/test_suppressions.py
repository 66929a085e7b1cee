"""Suppressions (BQ002, BQ003): what may be suppressed, how it is marked in every output, and --strict."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from policy_engine.analysis.checks import check_topology
from policy_engine.cli.app import main
from policy_engine.foundation.model import Suppression
from policy_engine.reports.check import json as check_json
from policy_engine.reports.check import markdown as check_markdown
from policy_engine.reports.check import sarif as check_sarif
from policy_engine.reports.check import text as check_text
from policy_engine.testing import assert_topology_ok
from tests.builders import GPU, guarantee, share, topology

# BQ302: QS1 may borrow 2 but only 1 can be lent (the worked example); BQ402: a burst of 3 is never reached
WARNED = topology(share("QS1", 1, "LEND_AND_BORROW", borrow_limit=200), share("QS2", 1, "LEND"), share("QS3", 1),
                  guarantees=(guarantee("training/QS1", burst_capacity={GPU: 3}),))

TOPOLOGY_YAML = """\
service_environments:
  - {name: gpu-env, capacity: {ml.g5.xlarge: 3}}
job_queues:
  - name: training
    service_environment: gpu-env
    shares:
      - {name: QS1, capacity: {ml.g5.xlarge: 1}, strategy: LEND_AND_BORROW, borrow_limit: 200}
      - {name: QS2, capacity: {ml.g5.xlarge: 1}, strategy: LEND}
      - {name: QS3, capacity: {ml.g5.xlarge: 1}, strategy: RESERVE}
"""
SUPPRESSED_YAML = TOPOLOGY_YAML + """\
suppress:
  - {rule: BQ302, object: training/QS1, reason: QS2 grows next quarter}
"""


def _suppress(*entries: tuple[str, str, str]) -> tuple[Suppression, ...]:
    return tuple(Suppression(rule=r, object=o, reason=why) for r, o, why in entries)


def _rules(findings) -> list[str]:
    return [f.rule for f in findings]


def test_a_suppressed_warning_and_guarantee_stay_in_the_report_marked_and_no_longer_count():
    plain = check_topology(WARNED)
    assert _rules(plain.errors) == ["BQ402"] and _rules(plain.warnings) == ["BQ302"]
    report = check_topology(WARNED, suppress=_suppress(("BQ302", "training/QS1", "QS2 grows"),
                                                       ("BQ402", "training/QS1", "a promise on paper")))
    assert report.ok and report.passes(strict=True)
    assert report.errors == [] and report.warnings == []
    assert {(f.rule, f.suppressed) for f in report.suppressed} == {("BQ302", "QS2 grows"),
                                                                   ("BQ402", "a promise on paper")}
    assert len(report.findings) == len(plain.findings)


def test_suppressions_in_the_topology_itself_work_like_those_given_in_python():
    in_topology = WARNED.model_copy(update={"suppress": _suppress(("BQ302", "training/QS1", "QS2 grows"))})
    assert _rules(check_topology(in_topology).suppressed) == ["BQ302"]
    assert_topology_ok(WARNED, allow_warnings=False, suppress=_suppress(
        ("BQ302", "training/QS1", "QS2 grows"), ("BQ402", "guarantees[0] (training/QS1)", "on paper")))
    with pytest.raises(AssertionError, match="BQ302"):
        assert_topology_ok(WARNED, allow_warnings=False, suppress=_suppress(("BQ402", "training/QS1", "on paper")))


def test_an_aws_limit_error_cannot_be_suppressed():
    bad = topology(share("QS1", 1, tags={"aws:team": "a"}))
    report = check_topology(bad, suppress=_suppress(("BQ116", "training/QS1", "we like it")))
    assert _rules(report.errors) == ["BQ002", "BQ116"]
    (refusal,) = [f for f in report.errors if f.rule == "BQ002"]
    assert str(refusal.object) == "suppress[0] (BQ116 training/QS1)"
    assert "cannot suppress the error BQ116 on training/QS1: AWS would refuse the deploy" in refusal.message
    assert report.suppressed == []


@pytest.mark.parametrize(("entry", "text"), [
    (("BQ30", "training/QS1", "why"), "rule 'BQ30' does not exist (did you mean"),
    (("BQ302", "training/QS9", "why"), "object 'training/QS9' names nothing in the topology (did you mean "
                                       "'training/QS"),
    (("BQ302", "training/QS1", "  "), "has no reason"),
    (("BQ002", "training/QS1", "why"), "BQ002 is about suppressions and cannot be suppressed"),
])
def test_a_malformed_suppression_is_an_error_and_suppresses_nothing(entry, text):
    report = check_topology(WARNED, suppress=_suppress(entry))
    assert any(f.rule == "BQ002" and text in f.message for f in report.errors), [f.line() for f in report.errors]
    assert report.suppressed == []


def test_a_suppression_matching_nothing_is_a_stale_warning():
    report = check_topology(WARNED, suppress=_suppress(("BQ301", "training/QS3", "old")))
    (stale,) = [f for f in report.warnings if f.rule == "BQ003"]
    assert stale.message == "suppresses nothing: BQ301 finds nothing on training/QS3"
    unknown = check_topology(WARNED, suppress=_suppress(("BQ301", "training/QS9", "old")))
    assert "BQ003" not in _rules(unknown.findings)  # named nothing: that is BQ002's error, not also stale


def test_outputs_mark_suppressed_findings():
    report = check_topology(WARNED, suppress=_suppress(("BQ302", "training/QS1", "QS2 grows")))
    as_json = check_json.to_dict(report, source="t.yaml")
    by_rule = {f["rule"]: f for f in as_json["findings"]}
    assert by_rule["BQ302"]["suppressed"] == {"reason": "QS2 grows"} and by_rule["BQ402"]["suppressed"] is None
    assert as_json["suppressed"] == 1 and as_json["warnings"] == 0 and as_json["errors"] == 1
    sarif = check_sarif.to_dict(report, uri="t.yaml")
    results = {r["ruleId"]: r for r in sarif["runs"][0]["results"]}
    assert results["BQ302"]["suppressions"] == [{"kind": "inSource", "status": "accepted",
                                                 "justification": "QS2 grows"}]
    assert "suppressions" not in results["BQ402"]
    text = check_text.render(report)
    assert "Suppressed (1)" in text and "QS2 grows" in text and "1 suppressed" in text
    assert "warning (suppressed: QS2 grows)" in check_markdown.render(report)


def _check(tmp_path, text: str, *args: str):
    path = tmp_path / "t.yaml"
    path.write_text(text, encoding="utf-8")
    return CliRunner().invoke(main, ["check", str(path), *args])


def test_strict_fails_on_unsuppressed_warnings_only(tmp_path):
    assert _check(tmp_path, TOPOLOGY_YAML).exit_code == 0
    strict = _check(tmp_path, TOPOLOGY_YAML, "--strict")
    assert strict.exit_code == 1 and "FAILED (--strict: warnings fail)" in strict.output
    assert json.loads(_check(tmp_path, TOPOLOGY_YAML, "--strict", "--format", "json").output)["ok"] is False
    suppressed = _check(tmp_path, SUPPRESSED_YAML, "--strict")
    assert suppressed.exit_code == 0, suppressed.output
    assert "QS2 grows next quarter" in suppressed.output


def test_a_suppress_entry_with_a_typo_in_a_key_is_a_load_error(tmp_path):
    result = _check(tmp_path, TOPOLOGY_YAML + "suppress:\n  - {rule: BQ302, objet: training/QS1, reason: x}\n")
    assert result.exit_code == 2
    assert "unknown key 'objet' (did you mean 'object'?)" in result.output
