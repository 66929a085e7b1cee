"""``simulate --report DIR`` and ``simulate --format markdown`` end to end through the command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.reports.page.html_report import PAGE
from tests.policy_engine.reports.walkthrough import WALKTHROUGH


def test_report_directory_holds_the_page_and_the_summary_charts(tmp_path: Path):
    out = tmp_path / "report"
    result = CliRunner().invoke(main, ["simulate", str(WALKTHROUGH), "--report", str(out)])
    assert result.exit_code == 0, result.output
    assert {p.name for p in out.iterdir()} == {PAGE, "summary-cluster.png", "summary-waits.png"}
    assert "Shares (time-weighted" in result.output  # the usual text report is still printed


def test_report_share_and_window_choose_the_per_job_timeline(tmp_path: Path):
    out = tmp_path / "report"
    result = CliRunner().invoke(main, ["simulate", str(WALKTHROUGH), "--report", str(out), "--report-share", "QS2",
                                       "--report-window", "50:150"])
    assert result.exit_code == 0, result.output
    page = (out / PAGE).read_text()
    assert "Jobs of share training/QS2, alive between 50s and 2m 30s" in page
    assert "qs2_job_1 (training/QS2" in page and "qs1_job_high (training/QS1" not in page


@pytest.mark.parametrize(("args", "message"), [
    (["--report-share", "nope"], "--report-share: no quota share 'nope' (write QUEUE/SHARE or a unique SHARE name)"),
    (["--report-window", "10:5"], "--report-window 10:5: expected FROM:TO in seconds with 0 <= FROM < TO"),
    (["--report-window", "soon"], "--report-window soon: expected FROM:TO"),
    (["--report-share", ""], "--report-share: no quota share ''"),  # empty is a value, not "not given"
    (["--report-window", ""], "--report-window : expected FROM:TO"),
])
def test_bad_report_choices_are_one_line_each_and_exit_2(tmp_path: Path, args, message):
    result = CliRunner().invoke(main, ["simulate", str(WALKTHROUGH), "--report", str(tmp_path / "r"), *args])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], result.output
    assert not (tmp_path / "r").exists()


def test_report_choices_without_a_report_are_an_error():
    result = CliRunner().invoke(main, ["simulate", str(WALKTHROUGH), "--report-share", "QS1"])
    assert result.exit_code == 2 and "add --report DIR" in result.output


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


