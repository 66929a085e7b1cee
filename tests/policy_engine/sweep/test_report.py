"""``sweep --report DIR``: a chart per varied field, a heatmap for two, self-contained and rendered by
headless Chromium without network (the same browser harness as the simulation report)."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli import main
from policy_engine.sweep.report import PAGE
from tests.chromium import headless_chromium, needs_browser, open_page

ROOT = Path(__file__).parents[3]
SCENARIO = str(ROOT / "scenarios" / "borrow-and-reclaim.yaml")
CHARTS = {"field-training-research.borrow_limit.png", "field-training-vision.capacity.ml.p4d.24xlarge.png",
          "heatmap-training-research.borrow_limit-training-vision.capacity.ml.p4d.24xlarge.png"}


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("sweep-report")
    result = CliRunner().invoke(main, ["sweep", SCENARIO, "--vary", "training/research.borrow_limit=0,100,-1",
                                       "--vary", "training/vision.capacity.ml.p4d.24xlarge=1..3", "--workers", "1",
                                       "--quiet", "--report", str(directory)])
    assert result.exit_code == 0, result.output
    return directory


def test_one_chart_per_field_and_a_heatmap_embedded_and_nothing_linked(report_dir: Path):
    assert {p.name for p in report_dir.iterdir()} == {PAGE, *CHARTS}
    page = (report_dir / PAGE).read_text()
    embedded = [base64.b64decode(data) for data in re.findall(r'src="data:image/png;base64,([^"]+)"', page)]
    assert sorted(embedded) == sorted((report_dir / name).read_bytes() for name in CHARTS)
    without_images = re.sub(r'data:image/png;base64,[^"]+', "data:", page)
    assert not re.search(r"(?i)(https?:|//[a-z]|<link|<script|url\(|src=\"[^d])", without_images)
    assert "Content-Security-Policy" in page
    assert page.count("<td>invalid</td>") == 3  # vision capacity 3 oversubscribes, whatever the borrow limit


def test_one_field_has_no_heatmap(tmp_path: Path):
    CliRunner().invoke(main, ["sweep", SCENARIO, "--vary", "settings.backfill=false,true", "--workers", "1",
                              "--quiet", "--report", str(tmp_path)])
    assert {p.name for p in tmp_path.iterdir()} == {PAGE, "field-settings.backfill.png"}


@pytest.fixture(scope="module")
def browser():
    with headless_chromium() as driver:
        yield driver


@needs_browser
def test_headless_chromium_renders_the_charts_and_the_runs_without_network(browser, report_dir: Path):
    ours, remote, _ = open_page(browser, report_dir / PAGE)
    assert browser.execute_script("return document.readyState") == "complete"
    assert browser.title == f"batch-quota sweep: {SCENARIO}"
    rows = browser.execute_script("return Array.from(document.querySelectorAll('table')).map(t => t.rows.length)")
    assert rows == [1 + 9]  # the runs table: header and the 3 x 3 grid
    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight])")
    assert len(images) == len(CHARTS) and all(done and w > 300 and h > 100 for done, w, h in images)
    assert [url for url in ours if not url.startswith(("file:", "data:"))] == [] and remote == []
