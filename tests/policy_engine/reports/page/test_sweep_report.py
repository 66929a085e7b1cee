"""``sweep --report DIR``: a chart per varied field, a heatmap for two, self-contained and rendered by
headless Chromium without network (the same browser harness as the simulation report)."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.foundation.units import Unit
from policy_engine.reports.page.sweep_report import PAGE, Scale, scale_of
from tests.chromium import headless_chromium, needs_browser, open_page

ROOT = Path(__file__).parents[4]
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


def test_chart_axes_read_in_days_hours_percent_or_the_currency():
    assert scale_of([3 * 86400, 10.0], Unit.SECONDS) == Scale(86400.0, "days")
    assert scale_of([5 * 3600], Unit.SECONDS) == Scale(3600.0, "hours")
    assert scale_of([90.0], Unit.SECONDS) == Scale(1.0, "seconds")
    assert scale_of([0.5], Unit.FRACTION)(0.5) == 50 and scale_of([0.5], Unit.FRACTION).name == "%"
    assert scale_of([1e6], Unit.COST, "USD") == Scale(1.0, "USD")


@needs_browser
def test_priced_runs_table_shows_cost_and_targets_and_fits_a_1400px_window(browser, tmp_path: Path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("currency: USD\nper_instance_hour: {ml.p4d.24xlarge: 32.77}\n")
    topology = yaml.safe_load((ROOT / "scenarios" / "borrow-and-reclaim.yaml").read_text())
    scenario = tmp_path / "scenario.yaml"
    topology["topology"] = str(ROOT / "scenarios" / topology["topology"]) if isinstance(topology.get("topology"),
                                                                                        str) else topology["topology"]
    topology["topology"].setdefault("targets", []).append({"share": "training/vision", "wait_p95": "1h"})
    scenario.write_text(yaml.safe_dump(topology))
    report = tmp_path / "report"
    result = CliRunner().invoke(main, ["sweep", str(scenario), "--vary", "training/research.borrow_limit=0,100,-1",
                                       "--vary", "training/vision.capacity.ml.p4d.24xlarge=1..3", "--workers", "1",
                                       "--quiet", "--report", str(report), "--prices", str(prices),
                                       "--minimize", "waste_cost"])
    assert result.exit_code == 0, result.output
    browser.set_window_size(1400, 1000)
    open_page(browser, report / PAGE)
    runs = "document.querySelector('table')"  # the runs table comes first
    header = browser.execute_script(f"return Array.from({runs}.querySelectorAll('th')).map(h => h.textContent)")
    assert {"waste_cost (USD)", "bill (USD)", "waste (USD)", "targets"} <= set(header)
    cells = browser.execute_script(f"return Array.from({runs}.querySelectorAll('tbody tr')).map("
                                   "r => Array.from(r.cells).map(c => c.textContent))")
    column = header.index("targets")
    assert {row[column] for row in cells} <= {"all met", "1 of 1 missed", "-"} and len(cells) == 9
    costs = [row[header.index("bill (USD)")] for row in cells if row[header.index("status")] == "ok"]
    assert costs and all(re.fullmatch(r"\d{1,3}(,\d{3})*\.\d\d", cost) for cost in costs)  # money, to the cent
    ranks = [(row[column] != "all met", float(row[header.index("waste_cost (USD)")].replace(",", ""))) for row in cells
             if row[header.index("status")] == "ok"]
    assert ranks == sorted(ranks) and len(set(ranks)) > 1  # ranked as the text is: feasible first, then the objective
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    margins = browser.execute_script("return Array.from(document.querySelectorAll('#targets td:last-child'))"
                                     ".map(c => c.textContent)")
    assert len(margins) == 1 and re.fullmatch(r"missed by .+|.+ to spare|exactly at the goal", margins[0])
