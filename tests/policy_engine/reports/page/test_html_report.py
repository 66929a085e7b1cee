"""The HTML report: self-contained on disk, and really rendered by headless Chromium without network.

Chromium loads the page under its own Content-Security-Policy (inline scripts and data: images,
no unsafe-eval, nothing fetched); the tests wait for the page's rendering marker, then check that
every chart drew its marks, that nothing was requested off the page, that the console stayed
clean, and that the worst-waiting table sorts and filters.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from policy_engine.reports.page import html_report
from policy_engine.reports.page.html_report import PAGE, write_report
from policy_engine.reports.page.summary_png import CLUSTER, WAITS
from tests.chromium import headless_chromium, needs_browser, open_page
from tests.policy_engine.reports.walkthrough import walkthrough


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory) -> Path:
    scenario, result = walkthrough()
    directory = tmp_path_factory.mktemp("report")
    write_report(result, scenario.topology, directory, source="scenarios/walkthrough.yaml")
    return directory


def test_writes_the_page_and_the_summary_pngs(report_dir: Path):
    assert {p.name for p in report_dir.iterdir()} == {PAGE, CLUSTER, WAITS}
    for name in (CLUSTER, WAITS):
        assert (report_dir / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_summary_pngs_are_images_of_the_run_and_limits_changed_mid_run_are_labelled(tmp_path: Path):
    from PIL import Image

    from policy_engine.simulation.results import aggregates as agg
    from tests.policy_engine.simulation.results.test_aggregates import _changed_limits_run

    topology, result = _changed_limits_run(1)
    written = write_report(result, topology, tmp_path)
    for name in (CLUSTER, WAITS):
        with Image.open(tmp_path / name) as image:
            assert image.format == "PNG" and image.width == 1100
            assert len(image.convert("RGB").getcolors(1 << 16) or ()) > 5  # drawn, not blank
    data = html_report.page_data(result, agg.aggregate(result), None, "")
    scale, unit = agg.time_unit(result.time)
    labels = {series["label"].split(":")[0]: series["label"] for series in data["series"]}
    assert labels["q/A"] == (f"q/A: ml.g5.xlarge (own limit 3, 1 from {600 / scale:g} {unit}, "
                             f"2 from {1500 / scale:g} {unit})")
    assert labels["q/C"] == "q/C: ml.g5.xlarge (own limit 1)"
    assert written[0].name == PAGE


def test_page_is_self_contained_and_forbids_eval_and_fetching(report_dir: Path):
    page = (report_dir / PAGE).read_text()
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src 'none'" in csp and "script-src 'unsafe-inline'" in csp and "unsafe-eval" not in csp
    assert not re.search(r"(?i)<(script|img|link|iframe)[^>]*\s(src|href)=", page)  # nothing loaded by URL
    assert page.count("<script") == 5  # the data, vega, vega-lite, the interpreter, the page's own script
    assert "sourceMappingURL" not in page


def test_page_tables_carry_the_simulation_figures(report_dir: Path):
    _, result = walkthrough()
    page = (report_dir / PAGE).read_text()
    for job in result.jobs:  # 4 jobs: all in the worst-waiting table
        assert f"<td>{job.name}</td>" in page
    for share in ("training/QS1", "training/QS2", "training/QS3"):
        assert f"<td>{share}</td>" in page
    assert f'<td class="num">{result.summary["preemptions"]}</td>' in page
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', page, re.S).group(1))
    assert len(data["series"]) == 3 and len(data["edges"]) == html_report.agg.BINS + 1
    assert {row["job"].split()[0] for row in data["lanes"]["rows"]} == {j.name for j in result.jobs}  # a small run


def test_a_large_run_draws_per_job_timelines_only_when_chosen(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(html_report, "SMALL_RUN", 2)
    scenario, result = walkthrough()
    write_report(result, scenario.topology, tmp_path / "plain")
    page = (tmp_path / "plain" / PAGE).read_text()
    assert "chart-lanes" not in page.split("<script")[0] and "--report-share QUEUE/SHARE" in page
    write_report(result, scenario.topology, tmp_path / "chosen", share="training/QS2")
    page = (tmp_path / "chosen" / PAGE).read_text()
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', page, re.S).group(1))
    assert {row["job"].split()[0] for row in data["lanes"]["rows"]} == {"qs2_job_1"}


@pytest.fixture(scope="module")
def browser():
    with headless_chromium() as driver:
        yield driver


def wait_rendered(driver, seconds: float = 30.0) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        state = driver.execute_script("return document.documentElement.dataset.rendered")
        if state != "false":
            return state
        time.sleep(0.05)
    return "timeout"


MARKS = ("return Array.from(document.querySelectorAll('.chart'))"
         ".map(c => [c.id, c.querySelectorAll('svg path, svg rect').length])")


@needs_browser
def test_headless_chromium_renders_every_chart_without_network_or_console_errors(browser, report_dir: Path):
    ours, remote, _ = open_page(browser, report_dir / PAGE)
    assert wait_rendered(browser) == "true"
    assert browser.title == "batch-quota simulation: scenarios/walkthrough.yaml"
    marks = dict(browser.execute_script(MARKS))
    assert set(marks) == {"chart-type-0", "chart-share", "chart-waits", "chart-lanes"}  # one instance type
    assert all(count > 10 for count in marks.values()), marks
    # 4 jobs, each with its waiting and running bars: the lanes chart drew one rect per row
    bars = browser.execute_script("return document.querySelectorAll('#chart-lanes svg .mark-rect path').length")
    _, result = walkthrough()
    assert bars == sum(len(job.attempts) for job in result.jobs) + sum(
        1 for job in result.jobs for i, a in enumerate(job.attempts)
        if a.start > (job.submitted_at if i == 0 else job.attempts[i - 1].end))
    assert [url for url in ours if not url.startswith(("file:", "data:"))] == []
    assert remote == []
    console = browser.get_log("browser")
    assert console == [], console


@needs_browser
def test_the_share_picker_redraws_and_the_table_sorts_and_filters(browser, report_dir: Path):
    open_page(browser, report_dir / PAGE)
    assert wait_rendered(browser) == "true"
    browser.execute_script("const p = document.getElementById('share-picker'); p.value = '1';"
                           "p.dispatchEvent(new Event('change'));")
    assert wait_rendered(browser) == "true"
    title = browser.execute_script("return document.querySelector('#chart-share svg .role-title-text').textContent")
    assert title.startswith("training/QS2")
    column = ("return Array.from(document.querySelectorAll('#worst tbody tr')).filter(r => !r.hidden)"
              ".map(r => r.cells[0].textContent)")
    browser.execute_script("document.querySelectorAll('#worst th')[0].click()")
    assert browser.execute_script(column) == sorted(browser.execute_script(column))
    browser.execute_script("const f = document.getElementById('worst-filter'); f.value = 'qs2';"
                           "f.dispatchEvent(new Event('input'));")
    assert browser.execute_script(column) == ["qs2_job_1"]
    assert browser.get_log("browser") == []


@needs_browser
def test_scrolling_zooms_the_time_axis_and_hovering_a_bar_shows_the_job(browser, report_dir: Path):
    open_page(browser, report_dir / PAGE)
    assert wait_rendered(browser) == "true"
    labels = ("return Array.from(document.querySelectorAll('#chart-type-0 svg .role-axis-label text'))"
              ".map(t => t.textContent)")
    before = browser.execute_script(labels)
    browser.execute_script(
        "const bg = document.querySelector('#chart-type-0 svg .mark-group.role-scope path.background');"
        "const r = bg.getBoundingClientRect();"
        "for (let i = 0; i < 5; i++) bg.dispatchEvent(new WheelEvent('wheel', {deltaY: -300, bubbles: true,"
        " cancelable: true, clientX: r.left + r.width / 3, clientY: r.top + 50}));")
    time.sleep(0.3)
    assert browser.execute_script(labels) != before  # zoomed in: other time ticks
    browser.execute_script(
        "const bar = document.querySelector('#chart-lanes svg .mark-rect path');"
        "const r = bar.getBoundingClientRect();"
        "for (const kind of ['pointermove', 'mousemove']) bar.dispatchEvent(new MouseEvent(kind,"
        " {clientX: r.left + 1, clientY: r.top + 1, bubbles: true}));")
    time.sleep(0.2)
    tooltip = browser.execute_script("return document.getElementById('chart-lanes').title")
    assert tooltip.startswith("job: qs1_job_high (training/QS1, p3, 1x)") and "state:" in tooltip
    assert browser.get_log("browser") == []


@needs_browser
def test_the_checks_do_catch_fetching_eval_and_console_errors(browser, tmp_path: Path):
    """Controls: a remote image is seen, and under the report's CSP eval is refused (so charts drew without it)."""
    page = tmp_path / "fetching.html"
    page.write_text('<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/chart.png"></body></html>')
    ours, remote, _ = open_page(browser, page)
    assert "http://127.0.0.1:9/chart.png" in ours and remote == ["http://127.0.0.1:9/chart.png"]
    page = tmp_path / "eval.html"
    page.write_text(f'<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" '
                    f'content="{html_report._CSP}"></head><body><script>'
                    "try { eval('1'); } catch (e) { console.error('blocked: ' + e.name); }</script></body></html>")
    _, _, console = open_page(browser, page)
    assert any("blocked: EvalError" in entry["message"] for entry in console), console


@pytest.fixture(scope="module")
def two_type_report(tmp_path_factory) -> Path:
    from policy_engine.inputs.loading import topology_from_data
    from policy_engine.simulation.core.jobs import JobSpec
    from tests.builders import simulate
    from tests.policy_engine.simulation.results.test_type_usage import TWO_TYPES

    topology = topology_from_data(TWO_TYPES["topology"])
    jobs = [JobSpec(j["name"], f"q/{j['share']}", j["instance_type"], j["instances"], 1, j["submit_at"],
                    j["duration"]) for j in TWO_TYPES["jobs"]]
    directory = tmp_path_factory.mktemp("two-types")
    write_report(simulate(topology, jobs, usage_log=True), topology, directory, source="two-types.yaml")
    return directory


def test_the_summary_table_has_one_row_per_instance_type(two_type_report: Path):
    page = (two_type_report / PAGE).read_text()
    summary = page.split('id="summary"')[1].split("</table>")[0]
    rows = re.findall(r"<tr><td>([^<]+)</td>(.*?)</tr>", summary)
    assert [name for name, _ in rows] == ["all types", "ml.p4d.24xlarge", "ml.g5.12xlarge"]
    cells = {name: re.findall(r">([^<]*)</td>", rest) for name, rest in rows}
    # instances, jobs, by status, preemptions, lost, utilisation, used, idle, borrowed, lent (instance-hours)
    assert cells["ml.p4d.24xlarge"][:10] == ["4", "1", "-", "0", "0.00", "50.0%", "4.00", "4.00", "2.00", "2.00"]
    assert cells["ml.g5.12xlarge"][5:8] == ["25.0%", "4.00", "12.00"]
    assert cells["all types"][5] == "-"  # no utilisation across types without prices
    assert cells["all types"][4] == "-"  # nor instance-hours lost: an hour of p4d is not an hour of g5


@needs_browser
def test_headless_chromium_draws_one_usage_chart_per_instance_type(browser, two_type_report: Path):
    _, remote, _ = open_page(browser, two_type_report / PAGE)
    assert wait_rendered(browser) == "true"
    marks = dict(browser.execute_script(MARKS))
    assert {"chart-type-0", "chart-type-1"} <= set(marks) and "chart-cluster" not in marks
    assert all(count > 10 for count in marks.values()), marks
    titles = browser.execute_script("return Array.from(document.querySelectorAll('.chart-type'))"
                                    ".map(c => c.querySelector('svg .role-title-text').textContent)")
    assert titles == ["ml.p4d.24xlarge: all shares (4 instances, lent instances are the borrowed ones)",
                      "ml.g5.12xlarge: all shares (8 instances, lent instances are the borrowed ones)"]
    # the wait axis reads as durations, as the tables do
    ticks = browser.execute_script("return Array.from(document.querySelectorAll('#chart-waits svg "
                                   ".role-axis-label text')).map(t => t.textContent)")
    assert "0s" in ticks and not any(tick.endswith("000") for tick in ticks), ticks
    assert remote == [] and browser.get_log("browser") == []


@needs_browser
def test_the_wait_column_reads_as_durations_and_sorts_by_seconds(browser, report_dir: Path):
    open_page(browser, report_dir / PAGE)
    assert wait_rendered(browser) == "true"
    header = browser.execute_script("return Array.from(document.querySelectorAll('#worst th')).map(h => h.textContent)")
    wait = header.index("wait")
    browser.execute_script(f"document.querySelectorAll('#worst th')[{wait}].click()")  # numeric: largest first
    cells = browser.execute_script(f"return Array.from(document.querySelectorAll('#worst tbody tr'))"
                                   f".map(r => [r.cells[{wait}].textContent, Number(r.cells[{wait}].dataset.value)])")
    assert [seconds for _, seconds in cells] == sorted((seconds for _, seconds in cells), reverse=True)
    # qs1_job_med, reclaimed at 100, is RUNNABLE until low ends at 3800: a wait of 3700 s (requeues count)
    assert cells[0] == ["1h 02m", 3700.0]
