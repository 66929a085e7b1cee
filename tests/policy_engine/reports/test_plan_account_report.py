"""Every reserved hour accounted for, in every format: the issue's kind of week (scenarios/plan-idle-week.yaml: a
plan idle while a plan job waits at its share's limit, a plan job preempted 8 times in-share, a plan job holding
its share's quota the night before) through JSON, text, Markdown (a GFM renderer), ``explain`` and the HTML page
(headless Chromium), and the usage chart drawing quota held for a plan apart from own use."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.reports.kit.subjects import SimulateOutput
from policy_engine.reports.page.html_report import PAGE, write_report
from policy_engine.reports.simulate import markdown as simulate_markdown
from policy_engine.reports.simulate import text as simulate_text
from policy_engine.reports.tables import plan_account_tables
from policy_engine.simulation.core.engine import Engine
from policy_engine.simulation.results.plan_account import account
from policy_engine.simulation.results.records import build_result
from policy_engine.simulation.scenarios.workload import load_scenario
from tests.chromium import headless_chromium, needs_browser, open_page
from tests.gfm import tables
from tests.policy_engine.reports.page.test_html_report import wait_rendered

ROOT = Path(__file__).resolve().parents[3]
WEEK = ROOT / "scenarios" / "plan-idle-week.yaml"
NIGHT_BEFORE = ROOT / "examples" / "training_plans" / "night-before.yaml"
SENTENCE = ("plan nw-p5-q1 was idle 79% (756.44 of 960.00 reserved instance-hours): 52% because no job naming the plan "
            "was waiting; 26% because training/llm-pretrain's plan jobs were held at its ml.p5.48xlarge limit of 10; "
            "1% in the last 30 minutes of its windows, when SageMaker starts nothing on them.")


def _run(path: Path):
    scenario = load_scenario(path)
    engine = Engine(scenario.topology, scenario.jobs, scenario.updates, replace(scenario.settings, usage_log=True))
    engine.run()
    result = build_result(engine)
    return scenario, result, account(result, scenario.topology)


@pytest.fixture(scope="module")
def week():
    return _run(WEEK)


def test_json_windows_carry_their_idle_by_cause_adding_up_and_jobs_their_plan_hold_seconds():
    out = CliRunner().invoke(main, ["simulate", str(WEEK), "--format", "json"])
    assert out.exit_code == 0, out.output
    document = json.loads(out.output)
    (plan,) = document["training_plans"]
    first, second = plan["windows"]
    for window in plan["windows"]:
        assert set(window["idle_by_cause"]) == {"last_30_minutes", "no_plan_job_waiting", "share_quota",
                                                "behind_non_plan_head", "larger_than_free_instances", "batch_capacity"}
        assert sum(window["idle_by_cause"].values()) == pytest.approx(window["idle_instance_hours"])
    # od-base holds 8 of llm-pretrain's 10 from 23 h to 63 h: plan-a (4) waits at the limit; plan-b's 8 requeues too
    assert first["idle_by_cause"]["share_quota"] == 252
    assert first["idle_by_share"] == {"share_quota": {"training/llm-pretrain": 252}}
    assert [job["name"] for job in first["waited_jobs"]] == ["plan-a", "plan-b"]
    assert all(set(job) == {"name", "share", "seconds"} for job in first["waited_jobs"])  # seconds, not a wait
    assert second["idle_by_cause"]["no_plan_job_waiting"] == 340 and second["waited_jobs"] == []
    (lost,) = plan["preemption_lost"]
    assert (lost["share"], lost["in_share_preemptions"], lost["reclaim_preemptions"], lost["jobs"]) == (
        "training/llm-pretrain", 8, 0, {"plan-b": 8})
    held = {row["share"]: row for row in plan["scheduled_quota_held"]}["training/vision"]
    assert (held["plan_hold_seconds"], held["waited_jobs"], held["longest_waits"][0]["name"]) == (72000, 1, "v-day")
    holds = {job["name"]: job["plan_hold_seconds"] for job in document["jobs"]}
    assert holds["v-night"] == 72000 and holds["od-base"] is None and holds["plan-a"] == 0


def test_text_and_markdown_show_the_causes_the_hazards_and_the_sentence(week):
    scenario, result, plans = week
    output = SimulateOutput(result, "week.yaml", plan_account=plans, topology=scenario.topology)
    stream = io.StringIO()
    simulate_text.write(output, stream)
    text = " ".join(stream.getvalue().split())
    assert "Why the plans were idle" in text and "lost to preemption of plan jobs" in text
    assert " ".join(SENTENCE.split()) in text
    stream = io.StringIO()
    simulate_markdown.write(output, stream)
    found = tables(stream.getvalue())
    idle = next(table for table in found if table[0] == list(plan_account_tables.IDLE_HEADER))
    assert idle[1][:4] == ["nw-p5-q1", "0", "412.44", "72%"] and idle[1][6] == "252.00"
    preempted = next(table for table in found if table[0] == list(plan_account_tables.PREEMPTION_HEADER))
    assert preempted[1][:4] == ["nw-p5-q1", "training/llm-pretrain", "47.56", "8"]
    assert SENTENCE in stream.getvalue()


def test_explain_says_why_the_plan_was_idle_and_what_in_share_preemption_threw_away():
    out = CliRunner().invoke(main, ["explain", "training/llm-pretrain", "--scenario", str(WEEK)], terminal_width=400)
    assert out.exit_code == 0, out.output
    said = " ".join(out.output.split())
    assert SENTENCE in said
    assert ("In-share preemption threw away 47.56 reserved instance-hours of plan nw-p5-q1: 8 preemption(s) of "
            "training/llm-pretrain's plan jobs by its higher-priority jobs (most: plan-b x8).") in said
    vision = CliRunner().invoke(main, ["explain", "training/vision", "--scenario", str(WEEK), "--format", "json"])
    texts = [entry["text"] for entry in json.loads(vision.output)["sentences"] if entry["topic"] == "training plans"]
    assert texts[0] == SENTENCE and "1 of its job(s) waited 17h 13m meanwhile (longest: v-day 17h 13m)" in texts[1]


def test_the_usage_chart_draws_a_scheduled_plan_jobs_quota_as_held_for_plan_not_own_use(tmp_path: Path):
    """In the example v-night sits SCHEDULED from 0 to 8 h holding vision's 4: held for plan, not in use."""
    scenario, result, plans = _run(NIGHT_BEFORE)
    write_report(result, scenario.topology, tmp_path, source="night-before.yaml", plan_account=plans)
    page = (tmp_path / PAGE).read_text()
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', page, re.S).group(1))
    edges = data["edges"]
    vision = next(s for s in data["series"] if s["label"].startswith("training/vision"))
    own, held = vision["usage"][0], vision["usage"][4]
    night = [b for b in range(len(edges) - 1) if edges[b + 1] <= 8]  # bins inside 0-8 h (the page's unit: hours)
    assert night and all(held[b] == 4 and own[b] == 0 for b in night)
    later = [b for b in range(len(edges) - 1) if edges[b] >= 8 and edges[b + 1] <= 10]
    assert later and all(held[b] == 0 and own[b] == 4 for b in later)  # it runs from 8 h
    assert 'id="plan-idle"' in page and 'id="plan-held-waits"' in page and 'id="plan-notes"' in page
    # its lane in the per-job timeline too: held for plan from 0 to 8 h, then own use until it is done at 10 h
    lane = [(row["state"], row["start"], row["end"]) for row in data["lanes"]["rows"]
            if row["job"].startswith("v-night")]
    assert lane == [("held for plan", 0, 8), ("own", 8, 10)]


@needs_browser
def test_chromium_renders_the_plan_section_and_the_held_for_plan_layer(week, tmp_path: Path):
    scenario, result, plans = week
    write_report(result, scenario.topology, tmp_path, source="week.yaml", plan_account=plans)
    with headless_chromium() as browser:
        _, remote, _ = open_page(browser, tmp_path / PAGE)
        assert wait_rendered(browser) == "true" and remote == []
        legend = browser.execute_script(
            "return Array.from(document.querySelectorAll('#chart-type-0 svg .role-legend-label text'))"
            ".map(t => t.textContent)")
        assert "held for plan" in legend
        bars = browser.execute_script(
            "return Array.from(document.querySelectorAll('#plan-idle-bars .plan-bar')).map(bar => "
            "Array.from(bar.children).map(s => [s.title.split(':')[0], Math.round(s.getBoundingClientRect().width)]))")
        first = dict(bars[0])
        assert set(first) == {"used", "last 30 min", "no plan job waiting", "share quota"}
        assert first["share quota"] == pytest.approx(420 * 252 / 576, abs=2)  # 252 of the window's 8 x 72 inst-h
        notes = browser.execute_script("return document.getElementById('plan-notes').innerText")
        assert SENTENCE in notes
        browser.find_element("id", "plan-idle").location_once_scrolled_into_view  # noqa: B018
        browser.save_screenshot(str(tmp_path / "plan-section.png"))
        if shot := os.environ.get("PLAN_SECTION_SCREENSHOT"):  # to look at it
            shutil.copy(tmp_path / "plan-section.png", shot)
        assert browser.get_log("browser") == []
