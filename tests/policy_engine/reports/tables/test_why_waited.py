"""The "why jobs waited" outputs: text, markdown (through a GFM renderer), JSON, and the HTML report's stacked chart
and cause filter in headless Chromium; the longest-waits reason filled for jobs that finished."""

from __future__ import annotations

import io
import json
import re
from functools import cache
from pathlib import Path

import pytest

from policy_engine.reports.kit.subjects import SimulateOutput
from policy_engine.reports.page import html_report
from policy_engine.reports.simulate import json as simulate_json
from policy_engine.reports.simulate import markdown as simulate_markdown
from policy_engine.reports.simulate import text as simulate_text
from policy_engine.simulation.causes import Cause, describe_wait_cause
from policy_engine.simulation.results.wait_causes import WaitCauses, attribute
from tests.chromium import headless_chromium, needs_browser, open_page
from tests.gfm import tables
from tests.policy_engine.reports.page.test_html_report import wait_rendered
from tests.policy_engine.reports.walkthrough import walkthrough


@cache
def _run() -> tuple[object, object, WaitCauses]:
    scenario, result = walkthrough()
    return scenario, result, attribute(result, scenario.topology)


def _output() -> SimulateOutput:
    _, result, waits = _run()
    return SimulateOutput(result, "walkthrough.yaml", waits=waits)  # type: ignore[arg-type]


def test_text_has_a_why_jobs_waited_table_in_wait_hours():
    stream = io.StringIO()
    simulate_text.write(_output(), stream)
    text = stream.getvalue()
    assert "Why jobs waited" in text
    row = next(line for line in text.splitlines() if "requeued after a preemption" in line)
    assert "training/QS1" in row and " 2.0 " in row and "97.3%" in row


def test_markdown_section_renders_as_a_gfm_table_whose_shares_add_up():
    stream = io.StringIO()
    simulate_markdown.write(_output(), stream)
    _, _, waits = _run()
    table = next(t for t in tables(stream.getvalue()) if t[0][2] == "cause")
    rows = table[1:]
    assert {row[0] for row in rows} == {"training/QS1"}
    assert {row[2] for row in rows} == {describe_wait_cause(c) for c in waits.shares[0].by_cause}
    assert rows[0][2] == describe_wait_cause(Cause.REQUEUED_AFTER_PREEMPTION)  # the most time first
    assert sum(float(row[4].rstrip("%")) for row in rows) == pytest.approx(100, abs=0.2)


def test_json_gives_seconds_by_cause_per_share_that_add_up_to_its_wait():
    stream = io.StringIO()
    simulate_json.write(_output(), stream)
    document = json.loads(stream.getvalue())["wait_causes"]
    assert document["attribution"] == "root-cause"
    qs1 = next(s for s in document["shares"] if s["share"] == "training/QS1")
    assert qs1["by_cause"][Cause.REQUEUED_AFTER_PREEMPTION.value] == 7200
    for entry in document["shares"]:
        assert sum(entry["by_cause"].values()) == pytest.approx(entry["wait_seconds"], rel=1e-6)


def test_the_longest_waits_reason_is_filled_for_jobs_that_finished(tmp_path: Path):
    scenario, result, waits = _run()
    page = html_report.render_page(result, scenario.topology, waits=waits)
    rows = re.findall(r'<tr(?: class="preempted")? data-cause="([^"]*)">(.*?)</tr>',
                      page.split('id="worst"')[1].split("</table>")[0])
    assert len(rows) == len(result.jobs)
    waited = 0
    for cause, cells in rows:
        values = re.findall(r"<td[^>]*>(.*?)</td>", cells)
        status, reason = values[5], values[8]
        assert status == "SUCCEEDED"  # every job of the walkthrough finished
        if cause:
            waited += 1
            assert reason == f"waited longest: {describe_wait_cause(Cause(cause))}"
        else:
            assert reason == ""
    assert waited == 3  # the jobs that waited at all (a preempted one waits again)


def test_the_pages_causes_table_reads_wait_hours_as_the_text_does():
    scenario, result, waits = _run()
    page = html_report.render_page(result, scenario.topology, waits=waits)
    table = page.split('id="causes"')[1].split("</table>")[0]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", table)][1:]
    requeued = next(row for row in rows if row[2] == describe_wait_cause(Cause.REQUEUED_AFTER_PREEMPTION))
    assert requeued[3] == "2.0"  # 7,200 s of waiting, as wait-hours (a duration would read "2h 00m")
    assert all(int(row[5]) >= 1 for row in rows)  # the jobs each cause held


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory) -> Path:
    scenario, result, waits = _run()
    directory = tmp_path_factory.mktemp("why-waited")
    html_report.write_report(result, scenario.topology, directory, source="walkthrough", waits=waits)
    return directory


@needs_browser
def test_chromium_draws_the_stacked_chart_and_the_cause_filter_keeps_only_that_cause(report_dir: Path):
    with headless_chromium() as browser:
        _, remote, _ = open_page(browser, report_dir / html_report.PAGE)
        assert wait_rendered(browser) == "true"
        bars = browser.execute_script("return document.querySelectorAll('#chart-causes svg .mark-rect path').length")
        _, _, waits = _run()
        assert bars == sum(len(s.by_cause) for s in waits.shares)  # one stacked segment per share and cause
        legend = browser.execute_script("return Array.from(document.querySelectorAll('#chart-causes svg "
                                        ".role-legend-label text')).map(t => t.textContent)")
        assert describe_wait_cause(Cause.REQUEUED_AFTER_PREEMPTION) in legend
        shown = ("return Array.from(document.querySelectorAll('#worst tbody tr')).filter(r => !r.hidden)"
                 ".map(r => r.cells[0].textContent)")
        everyone = browser.execute_script(shown)
        browser.execute_script("const s = document.getElementById('worst-cause');"
                               "s.value = 'requeued-after-preemption'; s.dispatchEvent(new Event('change'));")
        requeued = browser.execute_script(shown)
        assert requeued and set(requeued) < set(everyone)
        assert browser.execute_script("return document.getElementById('worst-count').textContent") == \
            f"{len(requeued)} of {len(everyone)} rows"
        browser.execute_script("const s = document.getElementById('worst-cause'); s.value = '';"
                               "s.dispatchEvent(new Event('change'));")
        assert browser.execute_script(shown) == everyone
        assert remote == []
        assert browser.get_log("browser") == []


def test_simulate_attributes_by_default_and_not_with_no_wait_causes():
    from click.testing import CliRunner

    from policy_engine.cli.app import main
    from tests.policy_engine.reports.walkthrough import WALKTHROUGH

    runner = CliRunner()
    on = runner.invoke(main, ["simulate", str(WALKTHROUGH), "--format", "json", "--wait-attribution", "line-state"])
    assert on.exit_code == 0, on.output
    assert json.loads(on.output)["wait_causes"]["attribution"] == "line-state"
    off = runner.invoke(main, ["simulate", str(WALKTHROUGH), "--format", "json", "--no-wait-causes"])
    assert off.exit_code == 0, off.output
    assert "wait_causes" not in json.loads(off.output)
    text = runner.invoke(main, ["simulate", str(WALKTHROUGH)])
    assert "Why jobs waited" in text.output and "attribution order root-cause" in text.output
