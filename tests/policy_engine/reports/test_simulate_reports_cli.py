"""``simulate --report DIR`` and ``simulate --format markdown`` end to end through the command line."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from policy_engine.cli import main
from policy_engine.reports.html_report import PAGE
from tests.policy_engine.reports.walkthrough import WALKTHROUGH


def test_report_directory_holds_the_page_and_the_charts(tmp_path: Path):
    out = tmp_path / "report"
    result = CliRunner().invoke(main, ["simulate", str(WALKTHROUGH), "--report", str(out)])
    assert result.exit_code == 0, result.output
    names = {p.name for p in out.iterdir()}
    assert PAGE in names
    assert {n for n in names if n.startswith("timeline-")} == {"timeline-training-QS1.png", "timeline-training-QS2.png"}
    assert len([n for n in names if n.startswith("utilisation-")]) == 3  # one per share and instance type
    assert "Shares (time-weighted" in result.output  # the usual text report is still printed


def test_markdown_is_printed_instead_of_the_text_tables():
    result = CliRunner().invoke(main, ["simulate", str(WALKTHROUGH), "--format", "markdown"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("### batch-quota simulate")
    assert "| training/QS1 | ml.g5.xlarge | LEND_AND_BORROW | 1 | 3 |" in result.output


def test_unwritable_report_directory_is_one_line_and_exit_2(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    result = CliRunner().invoke(main, ["simulate", str(WALKTHROUGH), "--report", str(blocker / "report")])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "cannot write the report" in errors[0] and "Traceback" not in result.output
