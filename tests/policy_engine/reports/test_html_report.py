"""The HTML report: self-contained on disk, and really rendered by headless Chromium without network."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from policy_engine.reports.html_report import PAGE, write_report
from tests.policy_engine.reports.walkthrough import walkthrough

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
CHARTS = {"timeline-training-QS1.png", "timeline-training-QS2.png", "utilisation-training-QS1-ml.g5.xlarge.png",
          "utilisation-training-QS2-ml.g5.xlarge.png", "utilisation-training-QS3-ml.g5.xlarge.png"}


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory) -> Path:
    scenario, result = walkthrough()
    directory = tmp_path_factory.mktemp("report")
    write_report(result, scenario.topology, directory, source="scenarios/walkthrough.yaml")
    return directory


def test_writes_the_page_and_one_png_per_chart(report_dir: Path):
    # QS1 and QS2 ran jobs (a timeline each); every share has one instance type (a utilisation chart each).
    assert {p.name for p in report_dir.iterdir()} == {PAGE, *CHARTS}
    for name in CHARTS:
        assert (report_dir / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_page_embeds_exactly_the_png_files_and_links_nothing(report_dir: Path):
    page = (report_dir / PAGE).read_text()
    embedded = [base64.b64decode(data) for data in re.findall(r'src="data:image/png;base64,([^"]+)"', page)]
    assert sorted(embedded) == sorted((report_dir / name).read_bytes() for name in CHARTS)
    without_images = re.sub(r'data:image/png;base64,[^"]+', "data:", page)
    assert not re.search(r"(?i)(https?:|//[a-z]|<link|<script|url\(|src=\"[^d])", without_images)
    assert "Content-Security-Policy" in page


def test_page_tables_carry_the_simulation_figures(report_dir: Path):
    _, result = walkthrough()
    page = (report_dir / PAGE).read_text()
    for job in result.jobs:
        assert f"<td>{job.name}</td>" in page
    for share in ("training/QS1", "training/QS2", "training/QS3"):
        assert f"<td>{share}</td>" in page
    assert f'<td class="num">{result.summary["preemptions"]}</td>' in page


needs_browser = pytest.mark.skipif((CHROMIUM is None or CHROMEDRIVER is None) and not os.environ.get("CI"),
                                   reason="Debian chromium and chromium-driver not installed (CI installs them)")


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium through chromedriver, logging every network event."""
    assert CHROMIUM and CHROMEDRIVER, "CI must have chromium and chromedriver (.ci/run installs them)"
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={profile}", "--window-size=1280,1600"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def open_page(driver, page: Path) -> tuple[list[str], list[str]]:
    """Load ``page``; return the URLs it requested and every off-machine URL the browser requested meanwhile."""
    driver.get_log("performance")  # drop earlier events (the browser's own start-up page)
    uri = page.as_uri()
    driver.get(uri)
    events = [json.loads(entry["message"])["message"] for entry in driver.get_log("performance")]
    sent = [e["params"] for e in events if e["method"] == "Network.requestWillBeSent"]
    ours = [p["request"]["url"] for p in sent if p.get("documentURL") == uri]
    remote = [p["request"]["url"] for p in sent if re.match(r"(?i)(https?|wss?|ftp):", p["request"]["url"])]
    return ours, remote


@needs_browser
def test_headless_chromium_renders_tables_and_images_without_network(browser, report_dir: Path):
    ours, remote = open_page(browser, report_dir / PAGE)
    assert browser.execute_script("return document.readyState") == "complete"
    assert browser.title == "batch-quota simulation: scenarios/walkthrough.yaml"
    tables = browser.execute_script("return Array.from(document.querySelectorAll('table')).map(t => t.rows.length)")
    _, result = walkthrough()
    assert tables == [2, 1 + len(result.shares), 1 + len(result.jobs)]  # summary, shares, jobs (with headers)
    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight])")
    assert len(images) == len(CHARTS)
    assert all(done and width > 300 and height > 100 for done, width, height in images)
    assert (report_dir / PAGE).as_uri() in ours and any(url.startswith("data:image/png") for url in ours)
    assert [url for url in ours if not url.startswith(("file:", "data:"))] == []
    assert remote == []


@needs_browser
def test_the_network_check_does_catch_a_page_that_fetches(browser, tmp_path: Path):
    """Control: without our page's safeguards, a remote image is seen (local port 9: nothing listens)."""
    page = tmp_path / "fetching.html"
    page.write_text('<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/chart.png"></body></html>')
    ours, remote = open_page(browser, page)
    assert "http://127.0.0.1:9/chart.png" in ours and remote == ["http://127.0.0.1:9/chart.png"]


def test_a_large_run_says_what_the_page_left_out(tmp_path: Path, monkeypatch):
    from policy_engine.reports import html_report

    monkeypatch.setattr(html_report, "MAX_CHARTED_SHARES", 1)
    monkeypatch.setattr(html_report, "MAX_JOB_ROWS", 2)
    scenario, result = walkthrough()
    write_report(result, scenario.topology, tmp_path)
    page = (tmp_path / PAGE).read_text()
    assert {p.name for p in tmp_path.glob("*.png")} == {"timeline-training-QS1.png",
                                                         "utilisation-training-QS1-ml.g5.xlarge.png"}
    assert "2 more are in the tables only: training/QS2, training/QS3" in page
    assert f"The first 2 of {len(result.jobs)} jobs" in page
    assert page.count("<td>qs") == 2  # job rows only for the first two jobs
