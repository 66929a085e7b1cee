"""Training plans in every simulate format: the same figures in text, Markdown (through a GFM renderer), JSON and
the HTML page (rendered by headless Chromium, the windows drawn behind the usage chart)."""

from __future__ import annotations

import io
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from policy_engine.reports.kit.subjects import SimulateOutput
from policy_engine.reports.page.html_report import PAGE, write_report
from policy_engine.reports.simulate import json as simulate_json
from policy_engine.reports.simulate import markdown as simulate_markdown
from policy_engine.reports.simulate import text as simulate_text
from policy_engine.reports.tables import plan_tables
from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.results.records import SimulationResult, build_result
from policy_engine.simulation.scenarios.workload import load_scenario
from tests.chromium import headless_chromium, needs_browser, open_page
from tests.gfm import tables
from tests.policy_engine.reports.page.test_html_report import wait_rendered
from tests.policy_engine.simulation.test_training_plans import TWO_WINDOWS_JOBS, TWO_WINDOWS_THREE_TEAMS


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[SimulationResult, object]:
    folder = tmp_path_factory.mktemp("plans")
    (folder / "topology.yaml").write_text(TWO_WINDOWS_THREE_TEAMS, encoding="utf-8")
    (folder / "jobs.csv").write_text(TWO_WINDOWS_JOBS, encoding="utf-8")
    (folder / "s.yaml").write_text("topology: topology.yaml\njobs: jobs.csv\nstart: 2026-12-01T00:00:00Z\n",
                                   encoding="utf-8")
    scenario = load_scenario(folder / "s.yaml")
    engine = Engine(scenario.topology, scenario.jobs, scenario.updates, replace(scenario.settings, usage_log=True))
    engine.run()
    return build_result(engine), scenario


def output(result: SimulationResult, scenario) -> SimulateOutput:
    return SimulateOutput(result=result, source="s.yaml")


def test_json_carries_each_window_and_share(run):
    result, scenario = run
    stream = io.StringIO()
    simulate_json.write(output(result, scenario), stream)
    (plan,) = json.loads(stream.getvalue())["training_plans"]
    assert (plan["paid_instance_hours"], plan["used_instance_hours"], plan["idle_instance_hours"]) == (40, 30, 10)
    first, second = plan["windows"]
    assert (first["start"], first["cutoff"], first["end"], first["cut_jobs"]) == (28800, 41400, 43200, 1)
    assert {s["share"]: s["used_instance_hours"] for s in second["shares"]} == {"training/search": 14,
                                                                               "training/speech": 4}
    held = {row["share"]: row["instance_hours"] for row in plan["scheduled_quota_held"]}
    assert held["training/vision"] == 32


def test_text_and_markdown_show_the_same_figures(run):
    result, scenario = run
    stream = io.StringIO()
    simulate_text.write(output(result, scenario), stream)
    text = stream.getvalue()
    assert "Training plans (reserved instance-hours)" in text and "Quota held by SCHEDULED plan jobs" in text
    row = next(line for line in text.splitlines() if "p5-plan" in line and "ml.p5.48xlarge" in line)
    assert re.search(r"16\.00 .*12\.00 .*4\.00 .*25%", row), row
    assert result.plans is not None
    found = tables(simulate_markdown.render(result, source="s.yaml"))
    windows = next(table for table in found if table[0] == list(plan_tables.WINDOW_HEADER))
    assert windows[1:] == [list(plan_tables.window_cells(row)) for row in plan_tables.window_rows(result.plans)]
    assert windows[2][5:9] == ["24.00", "18.00", "6.00", "25%"]
    shares = next(table for table in found if table[0] == list(plan_tables.SHARE_HEADER))
    assert ["p5-plan", "1", "training/search", "14.00", "1", "2.00"] in shares


def test_the_page_draws_the_windows_and_has_a_plan_section(run, tmp_path: Path):
    result, scenario = run
    write_report(result, scenario.topology, tmp_path, source="s.yaml")
    page = (tmp_path / PAGE).read_text()
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', page, re.S).group(1))
    assert [w["label"] for w in data["plan_windows"]] == ["p5-plan [0]", "p5-plan [1]"]
    assert "<h2>Training plans</h2>" in page and 'id="plan-windows"' in page and 'id="plan-held"' in page


@needs_browser
def test_chromium_renders_the_windows_behind_the_usage(run, tmp_path: Path):
    result, scenario = run
    write_report(result, scenario.topology, tmp_path, source="s.yaml")
    with headless_chromium() as browser:
        _, remote, _ = open_page(browser, tmp_path / PAGE)
        assert wait_rendered(browser) == "true"
        windows = browser.execute_script(
            "return document.querySelectorAll('#chart-type-0 svg .mark-rect path').length")  # the plan's type
        assert windows == 2 and remote == []
        assert browser.get_log("browser") == []
