"""Hostile names (terminal escapes, rich markup, HTML, mathtext, Graphviz specials) are shown literally everywhere."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from click.testing import CliRunner
from matplotlib.text import Text as MplText

from policy_engine.cli.app import main
from policy_engine.reports.kit import safe_text

NAME = "[bold]x[/bold][link=https://evil.example]y\x1b[31m<b>z</b>$\\alpha$:p\\N"
TOPOLOGY = {
    "service_environments": [{"name": "env", "capacity": {"ml.g5.xlarge": 2}}],
    "job_queues": [{"name": "q<i>", "service_environment": "env", "shares": [
        {"name": NAME, "capacity": {"ml.g5.xlarge": 1}, "strategy": "LEND_AND_BORROW"},
        {"name": "plain", "capacity": {"ml.g5.xlarge": 1}, "strategy": "LEND"}]}],
}


@pytest.fixture
def files(tmp_path):
    (tmp_path / "t.json").write_text(json.dumps(TOPOLOGY))
    (tmp_path / "jobs.jsonl").write_text(json.dumps({"name": NAME, "share": f"q<i>/{NAME}", "duration": 60}) + "\n")
    (tmp_path / "s.yaml").write_text("topology: t.json\njobs: jobs.jsonl\n")
    return tmp_path


def _literal(text: str) -> None:
    assert "\x1b" not in text
    assert "[bold]x[/bold][link=https://evil.example]y\\x1b[31m" in text


def test_check_and_explain_text_show_names_literally(files):
    result = CliRunner().invoke(main, ["check", str(files / "t.json")])
    assert result.exit_code in (0, 1)
    _literal(result.stdout)
    explained = CliRunner().invoke(main, ["explain", f"q<i>/{NAME}", str(files / "t.json")])
    assert explained.exit_code == 0
    _literal(explained.stdout)


def test_simulate_tables_show_job_and_share_names_literally(files):
    result = CliRunner().invoke(main, ["simulate", str(files / "s.yaml")])
    assert result.exit_code == 0, result.stderr
    _literal(result.stdout)


def test_error_lines_never_carry_control_characters(tmp_path):
    result = CliRunner().invoke(main, ["check", str(tmp_path / "a\x1b[2Jb.yaml")])
    assert result.exit_code == 2 and "\x1b" not in result.stderr and "\\x1b[2J" in result.stderr


def test_markdown_escapes_html_and_markdown(files):
    result = CliRunner().invoke(main, ["check", str(files / "t.json"), "--format", "markdown"])
    assert "<b>" not in result.stdout and "<i>" not in result.stdout and "&lt;b&gt;z&lt;/b&gt;" in result.stdout
    assert safe_text.markdown("[x](http://e) <img src=x>") == "\\[x](http://e) &lt;img src=x&gt;"
    simulated = CliRunner().invoke(main, ["simulate", str(files / "s.yaml"), "--format", "markdown"])
    assert "<b>" not in simulated.stdout and "\x1b" not in simulated.stdout


def test_mathtext_is_not_interpreted_in_chart_labels():
    label = safe_text.mathtext("job $\\alpha$")
    assert MplText(text=label)._preprocess_math(label)[1] is False
    assert MplText(text="job $\\alpha$")._preprocess_math("job $\\alpha$")[1] is True  # what escaping prevents


def test_report_charts_draw_hostile_names(files, tmp_path):
    result = CliRunner().invoke(main, ["simulate", str(files / "s.yaml"), "--report", str(tmp_path / "r")])
    assert result.exit_code == 0, result.stderr
    page = (tmp_path / "r" / "index.html").read_text()
    assert "<b>z</b>" not in page and "&lt;b&gt;z&lt;/b&gt;" in page
    assert "\x1b" not in page and "y\\x1b[31m" in page


def test_graphviz_specials_are_literal_in_dot(files):
    result = CliRunner().invoke(main, ["graph", str(files / "t.json")])
    assert result.exit_code == 0
    source = result.stdout
    assert "\x1b" not in source and "<<b>" not in source
    assert ":p\\\\N" in source  # the backslash is escaped: \N would print the node ID
    if shutil.which("dot"):
        svg = subprocess.run(["dot", "-Tsvg"], input=source.encode(), capture_output=True, check=True).stdout.decode()
        assert "&lt;b&gt;z&lt;/b&gt;$\\alpha$:p\\N" in svg and "plain" in svg
