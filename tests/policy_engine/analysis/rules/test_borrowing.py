"""Borrow graph rules (BQ3xx): borrowers without lenders, borrow limits beyond anything lendable."""

from __future__ import annotations

from policy_engine.analysis.checks import check_topology
from policy_engine.foundation.findings import Severity
from tests.builders import GPU, share, topology
from tests.builders import run_rule as run

P5 = "ml.p5.48xlarge"


def test_borrower_with_a_lender_passes(example):
    assert run("BQ301", example) == []


def test_borrower_without_any_lender_warns():
    (finding,) = run("BQ301", topology(share("B", 1, "LEND_AND_BORROW"), share("R", 1, "RESERVE")))
    assert finding.severity is Severity.WARNING and str(finding.object) == "training/B"
    assert finding.message == f"can never borrow: no other share in job queue training lends {GPU}"


def test_borrower_missing_a_lender_for_one_type_warns_about_that_type():
    b = share("B", strategy="LEND_AND_BORROW", capacity={GPU: 1, P5: 1})
    (finding,) = run("BQ301", topology(b, share("L", 1, "LEND")))
    assert finding.message.startswith(f"cannot borrow {P5}:")


def test_borrow_limit_zero_is_not_a_borrower():
    assert run("BQ301", topology(share("B", 1, "LEND_AND_BORROW", borrow_limit=0))) == []


def test_borrow_limit_within_lendable_passes():
    ok = topology(share("B", 1, "LEND_AND_BORROW", borrow_limit=100), share("L", 1, "LEND"))
    assert run("BQ302", ok) == []
    unlimited = topology(share("B", 1, "LEND_AND_BORROW"), share("L", 1, "LEND"))
    assert run("BQ302", unlimited) == []


def test_borrow_limit_beyond_lendable_warns_with_the_reachable_percent(example):
    # The AWS example: QS1 may borrow 200 % (2 instances) but only QS2's 1 can ever be lent.
    (finding,) = run("BQ302", example)
    assert finding.severity is Severity.WARNING and str(finding.object) == "training/QS1"
    assert "allows borrowing 2 but at most 1 can be lent" in finding.message
    assert finding.hint.startswith("lower borrow_limit to 100")


def test_borrow_limit_rounding_down_to_no_instance_warns():
    (finding,) = run("BQ303", topology(share("B", 3, "LEND_AND_BORROW", borrow_limit=33), share("L", 3, "LEND")))
    assert finding.severity is Severity.WARNING and str(finding.object) == "training/B"
    assert finding.message == f"{GPU}: borrow_limit 33% of 3 rounds down to 0 instances; the share can never borrow it"
    assert "at least 34" in finding.hint


def test_borrow_limit_allowing_one_instance_or_unlimited_or_zero_passes():
    for percent in (34, -1, 0, None):
        assert run("BQ303", topology(share("B", 3, "LEND_AND_BORROW", borrow_limit=percent),
                                     share("L", 3, "LEND"))) == [], percent


def test_bq304_notes_a_borrowing_share_that_leaves_its_borrow_limit_unset():
    found = run("BQ304", topology(share("open", 2, "LEND_AND_BORROW"), share("capped", 2, "LEND_AND_BORROW",
                                                                                  borrow_limit=0),
                                       share("unlimited", 2, "LEND_AND_BORROW", borrow_limit=-1),
                                       share("lender", 2, "LEND")))
    assert [(str(f.object), f.severity.value) for f in found] == [("training/open", "info")]
    assert "unlimited" in found[0].message or "without limit" in found[0].message


def test_a_note_never_fails_check_not_even_strict():
    report = check_topology(topology(share("open", 2, "LEND_AND_BORROW"), share("lender", 2, "LEND")))
    assert [f.rule for f in report.notes] == ["BQ304"] and report.passes(strict=True)
