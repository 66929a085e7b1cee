"""Training plans priced: ``simulate --prices`` gives each plan window's paid, used and idle cost in every format,
and a plan's instance type without a price is refused (one line, exit 2).

One plan, two windows, one team, 12.5 USD per instance-hour of ml.p5.48xlarge, worked out by hand:

- window 0: 2 instances, 0-7200 s: paid 2 x 2 h = 4 inst-h = 50 USD. Job ``a`` (2 instances, 1 h, at 0) uses
  2 inst-h = 25 USD; idle 2 inst-h = 25 USD.
- window 1: 4 instances, 10800-18000 s: paid 4 x 2 h = 8 inst-h = 100 USD. Job ``b`` (3 instances, 1 h) is
  submitted at 9000, before the window: it waits SCHEDULED until 10800 (3 x 0.5 h = 1.5 inst-h of quota held,
  not window use), then runs 10800-14400: 3 inst-h = 37.5 USD; idle 5 inst-h = 62.5 USD.
- the plan: paid 150, used 62.5, idle 87.5 USD.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests import gfm
from tests.chromium import headless_chromium, needs_browser, open_page
from tests.cli import invoke, run_files

TOPOLOGY = """\
service_environments:
  - {name: gpu, capacity: {ml.p5.48xlarge: 4}}
job_queues:
  - name: training
    service_environment: gpu
    shares:
      - {name: vision, capacity: {ml.p5.48xlarge: 4}, strategy: RESERVE}
training_plans:
  - name: p5-plan
    instance_type: ml.p5.48xlarge
    reserved_capacities:
      - {instances: 2, start: 0, end: 7200}
      - {instances: 4, start: 10800, end: 18000}
"""
SCENARIO = """\
topology: topology.yaml
settings: {startup_delay: 0}
jobs:
  - {name: a, share: vision, instances: 2, submit_at: 0, duration: 3600, training_plan: p5-plan}
  - {name: b, share: vision, instances: 3, submit_at: 9000, duration: 3600, training_plan: p5-plan}
"""
PRICES = "currency: USD\nper_instance_hour: {ml.p5.48xlarge: 12.5}\n"


@pytest.fixture
def files(write_file) -> dict[str, Path]:
    return run_files(write_file, TOPOLOGY, SCENARIO, PRICES)


def test_json_prices_each_window_as_computed_by_hand(files):
    out = invoke("simulate", str(files["scenario"]), "--prices", str(files["prices"]), "--format", "json")
    assert out.exit_code == 0, out.output
    (plan,) = json.loads(out.stdout)["training_plans"]
    assert (plan["currency"], plan["price_per_instance_hour"]) == ("USD", 12.5)
    assert plan["cost"] == {"paid": 150, "used": 62.5, "idle": 87.5}
    first, second = plan["windows"]
    assert (first["idle_instance_hours"], second["idle_instance_hours"]) == (2, 5)
    assert first["cost"] == {"paid": 50, "used": 25, "idle": 25}
    assert second["cost"] == {"paid": 100, "used": 37.5, "idle": 62.5}
    assert [(s["share"], s["used_cost"]) for s in second["shares"]] == [("training/vision", 37.5)]
    assert plan["scheduled_quota_held"] == [{"share": "training/vision", "instance_hours": 1.5}]


def test_without_prices_the_plan_figures_stay_instance_hours(files):
    out = invoke("simulate", str(files["scenario"]), "--format", "json")
    assert out.exit_code == 0, out.output
    (plan,) = json.loads(out.stdout)["training_plans"]
    assert (plan["currency"], plan["price_per_instance_hour"], plan["cost"]) == (None, None, None)
    assert [w["cost"] for w in plan["windows"]] == [None, None]
    assert plan["windows"][1]["shares"][0]["used_cost"] is None
    assert (plan["paid_instance_hours"], plan["used_instance_hours"], plan["idle_instance_hours"]) == (12, 5, 7)
    markdown = invoke("simulate", str(files["scenario"]), "--format", "markdown").stdout
    (windows,) = [t for t in gfm.tables(markdown) if t[0][:2] == ["plan", "window"] and "when" in t[0]]
    assert not [column for column in windows[0] if "USD" in column]
    assert windows[2][5:8] == ["8.00", "3.00", "5.00"]


def test_markdown_and_text_show_the_priced_columns(files):
    args = ("simulate", str(files["scenario"]), "--prices", str(files["prices"]))
    markdown = invoke(*args, "--format", "markdown")
    assert markdown.exit_code == 0, markdown.output
    found = gfm.tables(markdown.stdout)
    (windows,) = [t for t in found if t[0][:2] == ["plan", "window"] and "when" in t[0]]
    header = windows[0]
    assert header[-3:] == ["paid USD", "used USD", "idle USD"]
    assert [row[header.index("idle inst-h")] for row in windows[1:]] == ["2.00", "5.00"]
    assert [row[-3:] for row in windows[1:]] == [["50.00", "25.00", "25.00"], ["100.00", "37.50", "62.50"]]
    (shares,) = [t for t in found if t[0][:3] == ["plan", "window", "share"]]
    assert shares[0][-1] == "used USD" and [row[-1] for row in shares[1:]] == ["25.00", "37.50"]

    text = invoke(*args).stdout
    assert "idle USD" in text and "used USD" in text
    rows = [line for line in text.splitlines() if "p5-plan" in line and "ml.p5.48xlarge" in line]
    assert re.search(r"4\.00 .*2\.00 .*2\.00 .*50\.00 .*25\.00 .*25\.00", rows[0]), rows[0]
    assert re.search(r"8\.00 .*3\.00 .*5\.00 .*100\.00 .*37\.50 .*62\.50", rows[1]), rows[1]


def test_the_report_prices_its_plan_section(files, tmp_path: Path):
    report = tmp_path / "report"
    out = invoke("simulate", str(files["scenario"]), "--prices", str(files["prices"]), "--report", str(report))
    assert out.exit_code == 0, out.output
    page = (report / "index.html").read_text(encoding="utf-8")
    table = re.search(r'<table id="plan-windows".*?</table>', page, re.S)
    assert table is not None
    cells = [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<t[hd][^>]*>.*?</t[hd]>", table.group(0), re.S)]
    assert cells[12:15] == ["paid USD", "used USD", "idle USD"]
    assert cells[-3:] == ["100.00", "37.50", "62.50"]


@needs_browser
def test_chromium_shows_the_priced_plan_windows(files, tmp_path: Path):
    report = tmp_path / "report"
    out = invoke("simulate", str(files["scenario"]), "--prices", str(files["prices"]), "--report", str(report))
    assert out.exit_code == 0, out.output
    with headless_chromium() as browser:
        _, remote, _ = open_page(browser, report / "index.html")
        rows = browser.execute_script(
            "return [...document.querySelectorAll('#plan-windows tr')].map("
            "r => [...r.children].slice(-3).map(c => c.textContent.trim()))")
        assert rows == [["paid USD", "used USD", "idle USD"], ["50.00", "25.00", "25.00"],
                        ["100.00", "37.50", "62.50"]]
        assert remote == [] and browser.get_log("browser") == []


def test_a_plan_type_without_a_price_is_refused(write_file):
    """The plan's type is in no environment and no share: it must still be priced, never taken as zero."""
    write_file("topology.yaml", TOPOLOGY.replace("capacity: {ml.p5.48xlarge: 4}", "capacity: {ml.g5.xlarge: 4}"))
    scenario = write_file("scenario.yaml", "topology: topology.yaml\njobs: []\n")
    prices = write_file("prices.yaml", "currency: USD\nper_instance_hour: {ml.g5.xlarge: 2}\n")
    out = invoke("simulate", str(scenario), "--prices", str(prices))
    assert out.exit_code == 2
    assert "Traceback" not in out.stderr
    (line,) = out.stderr.splitlines()
    assert line.startswith("error: ") and f"{prices.name}:2: per_instance_hour: no price for ml.p5.48xlarge" in line
    assert "training plan p5-plan" in line
