"""``diff --format markdown`` as GitHub shows it: rendered by a real GFM implementation (markdown-it-py with its
GFM tables), the sections in the order a reviewer decides by, no HTML text leaking into cells."""

from __future__ import annotations

import re

import pytest
import yaml
from click.testing import CliRunner

from policy_engine.cli.app import main
from tests.builders import GPU, guarantee, job, share
from tests.builders import simulated_topology as topology

markdown_it = pytest.importorskip("markdown_it", reason="the GFM renderer is a development dependency")

BASE = topology(31, share("S1", 30, "RESERVE"), share("S2", 1, "LEND")).model_copy(
    update={"guarantees": (guarantee("q/S1", min_capacity={GPU: 30}),)})
HEAD = topology(31, share("S1", 1, "RESERVE"), share("S2", 30, "LEND")).model_copy(
    update={"guarantees": (guarantee("q/S1", min_capacity={GPU: 1}),)})
JOBS = ([job(f"s1-{i:02d}", "S1", duration=100) for i in range(30)]
        + [job(f"s2-{i:02d}", "S2", at=30, duration=10) for i in range(30)])


def gfm(text: str) -> str:
    """GitHub's renderer in spirit: CommonMark, raw HTML allowed (``<details>``), GFM tables."""
    return markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(text)


@pytest.fixture
def comment(write_file) -> str:
    dump = lambda t: yaml.safe_dump(t.model_dump(mode="json"))  # noqa: E731
    base, head = write_file("base.yaml", dump(BASE)), write_file("head.yaml", dump(HEAD))
    rows = [{"name": j.name, "share": j.share, "submit_at": j.submit_at, "duration": j.duration} for j in JOBS]
    scenario = write_file("s.yaml", yaml.safe_dump({"topology": "base.yaml", "jobs": rows}))
    result = CliRunner().invoke(main, ["diff", str(base), str(head), "--scenario", str(scenario), "--at", "10",
                                       "--format", "markdown"])
    assert result.exit_code == 1, result.output
    return result.output


def _titles(text: str) -> list[str]:
    return [re.sub(r" \(\d+\)$", "", title) for title in re.findall(r"<summary>(.*?)</summary>", text)]


def test_sections_come_in_the_order_a_reviewer_decides_by(comment):
    titles = _titles(comment)
    assert titles[:2] == ["Promise changes: declared guarantees", "Deploy hazards"]
    assert titles[2].startswith(f"Impact per share on {GPU}")  # one table per instance type
    assert titles[-1].startswith("Jobs preempted because of the change (the 20 worst; 9 more in")
    verdict = comment.index("**FAIL:")
    assert verdict < comment.index("<summary>Promise changes")
    # open: promises, hazards, impact; collapsed: the per-job list
    assert "<details open><summary>Impact per share on" in comment
    assert "<details><summary>Jobs preempted because of the change" in comment


def test_every_table_parses_and_no_html_shows_as_text(comment):
    page = gfm(comment)
    tables = page.count("<table>")
    assert tables == comment.count("\n| --- ") + comment.count("\n| ---: ")
    assert tables >= 4  # the summary, the impact per share (two parts), the targets or the jobs
    # the per-job list is capped at 20 rows (its header row aside)
    jobs = page.split("Jobs preempted because of the change")[1].split("</table>")[0]
    assert jobs.count("<tr>") == 21
    # no tag written as text: what the reader would see as "<br>" or "&lt;details&gt;"
    assert "&lt;" not in page and "&amp;lt;" not in page
    assert "<br" not in comment


def test_every_figure_says_what_it_means(comment):
    assert "instance-hours lost (work thrown away by the preemptions the change causes; negative means the " \
           "change saves work), per instance type: **" in comment  # never one figure added across types
    page = gfm(comment)
    # the legend under the per-share table, whole (compare's cells, then what each figure means)
    legend = page[page.index("<em>runs: the replay without the change"):]
    assert legend[:legend.index("</em>")].endswith(
        "over the billing period (docs/costs.md). A single value: the same in every run.")
    assert '<th style="text-align:right">wait p50</th>' in page and \
        '<th style="text-align:right">wait p95</th>' in page  # cells: before → after (difference)
    # a promise change's review note is long text: the section is a list, its short cells first
    assert "<li>q/S1 · min_capacity ml.g5.xlarge · weakened · 30 → 1 · held → held: <strong>review:</strong>" in page


def test_share_changes_join_with_semicolons_not_html(write_file):
    dump = lambda t: yaml.safe_dump(t.model_dump(mode="json"))  # noqa: E731
    base, head = write_file("b.yaml", dump(BASE)), write_file("h.yaml", dump(HEAD))
    text = CliRunner().invoke(main, ["diff", str(base), str(head), "--format", "markdown"]).output
    row = next(line for line in text.splitlines() if line.startswith("- q/S1 (changed): **changes:** "))
    assert "limit ml.g5.xlarge: 30 → 1; " in row
    assert "&lt;" not in gfm(text)


def test_a_share_only_the_borrow_graph_moved_is_labelled_affected_not_changed(write_file):
    dump = lambda t: yaml.safe_dump(t.model_dump(mode="json"))  # noqa: E731
    base = write_file("base.yaml", dump(topology(4, share("A", 2, "LEND_AND_BORROW"), share("B", 2, "LEND"))))
    head = write_file("head.yaml", dump(topology(4, share("A", 2, "LEND_AND_BORROW"), share("B", 2, "RESERVE"))))
    lines = CliRunner().invoke(main, ["diff", str(base), str(head)]).output.splitlines()
    assert "  q/B (changed)" in lines  # its own strategy
    assert "  q/A (affected through the borrow graph)" in lines  # its burst shrank; nothing of its own changed
    markdown = CliRunner().invoke(main, ["diff", str(base), str(head), "--format", "markdown"]).output
    assert "- q/A (affected through the borrow graph): **changes:** " in markdown


@pytest.mark.parametrize("command", ["diff", "compare"])
def test_on_the_wide_case_every_cell_of_the_pull_request_comment_is_short(command):
    """Nine teams over three instance types and a plan: each table holds one instance type and at most a row's
    worth of columns, long text (a hazard's consequences, a finding's fix, a share's changes) is in lists, so no
    cell wraps over lines in GitHub's comment column (issue 35 §6)."""
    from pathlib import Path

    from policy_engine.reports.kit.markdown import LONG_CELL, ROW_CHARS
    from tests import gfm

    wide = Path(__file__).resolve().parents[3] / "data" / "wide"
    a, b, week = str(wide / "a.yaml"), str(wide / "b.yaml"), str(wide / "week.yaml")
    args = (["diff", a, b, "--scenario", week, "--at", "0"] if command == "diff"
            else ["compare", week, "--topology", a, "--topology", b, "--workers", "1"])
    result = CliRunner().invoke(main, [*args, "--format", "markdown"])
    assert result.exit_code in (0, 1), result.output
    tables = gfm.tables(result.output)
    assert len(tables) >= 4
    cells = [cell for table in tables for row in table[1:] for cell in row]
    assert max(map(len, cells)) <= LONG_CELL, max(cells, key=len)
    per_share = [t for t in tables if t[0][:2] in (["share", "jobs"], ["share", "own utilisation (%)"])
                 or (t[0][0] == "share" and "cost (instance-hours, its bill)" in t[0])]
    assert per_share and all("instance type" not in t[0] for t in per_share)  # one table per type
    for table in per_share:
        longest = max(sum(len(cell) + 3 for cell in row) for row in table[1:])
        assert longest <= ROW_CHARS, table
    assert any(re.fullmatch(r"4h 13m → \d+h \d+m \(\+1h \d+m\)", cell) for cell in cells)  # vision p4d p95
    if command == "diff":
        assert "- BQ703 · lowered_limit · AWS::Batch::QuotaShare · training/vision: **what happens:**" \
            in result.output
