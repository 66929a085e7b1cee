"""Training plans in the bill: ``simulate --prices`` charges each plan's upfront fee once, never its jobs' hours
again, counts its idle reserved hours as waste and allocates the fee; a plan without a fee anywhere, or with a fee
in another currency than the rate card's, is refused (one line, exit 2).

One plan, two windows, one team, an upfront fee of 150 USD for 12 reserved instance-hours (12.5 USD each), worked out
by hand:

- window 0: 2 instances, 0-7200 s: 4 reserved inst-h. Job ``a`` (2 instances, 1 h, at 0) uses 2.
- window 1: 4 instances, 10800-18000 s: 8 reserved inst-h. Job ``b`` (3 instances, 1 h) is submitted at 9000, before
  the window: it waits SCHEDULED until 10800 (3 x 0.5 h = 1.5 inst-h of quota held, not window use, never billed),
  then runs 10800-14400: 3 inst-h.
- the plan: used 5 of 12 inst-h: 62.5 USD of the fee used, 87.5 idle (waste); vision pays the whole 150 (its use,
  and the idle part by use, the default ``idle_to``). No on-demand time: the bill is 150.
"""

from __future__ import annotations

import json
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
PRICES = "currency: USD\nper_instance_hour: {ml.p5.48xlarge: 98.32}\ntraining_plans: {p5-plan: {upfront_fee: 150}}\n"


@pytest.fixture
def files(write_file) -> dict[str, Path]:
    return run_files(write_file, TOPOLOGY, SCENARIO, PRICES)


def test_json_charges_the_fee_once_and_its_idle_part_as_waste(files):
    out = invoke("simulate", str(files["scenario"]), "--prices", str(files["prices"]), "--format", "json")
    assert out.exit_code == 0, out.output
    document = json.loads(out.stdout)
    costs = document["costs"]
    assert costs["bill"] == {"on_demand": 0, "plans": 150, "total": 150}  # the jobs' 5 inst-h are not billed again
    assert costs["waste"] == {"preempted_attempts": 0, "plan_idle": 87.5}
    (plan,) = costs["plans"]
    assert (plan["upfront_fee"], plan["fee"], plan["waste"], plan["idle_to"], plan["unallocated"]) == (
        150, 150, 87.5, "use", 0)
    assert plan["instance_hours"] == {"reserved": 12, "used": 5, "idle": 7, "cut": 0}
    assert plan["allocation"] == [{"share": "training/vision", "use": 62.5, "idle": 87.5, "total": 150}]
    assert [(s["share"], s["bill"], s["waste"]) for s in costs["shares"]] == [
        ("training/vision", {"on_demand": 0, "plans": 150, "total": 150}, {"preempted_attempts": 0, "plan_idle": 87.5})]
    # the plan tables stay in hours: the fee is in the bill, never an on-demand rate on the plan's hours
    (hours,) = document["training_plans"]
    assert hours["cost"] is None and hours["scheduled_quota_held"] == [{
        "share": "training/vision", "instance_hours": 1.5, "plan_jobs": 1, "plan_hold_seconds": 1800,
        "waited_jobs": 0, "waited_seconds": 0, "longest_waits": []}]  # the hold's figures (docs/training_plans.md)


def test_without_prices_the_plan_figures_stay_instance_hours(files):
    out = invoke("simulate", str(files["scenario"]), "--format", "json")
    assert out.exit_code == 0, out.output
    (plan,) = json.loads(out.stdout)["training_plans"]
    assert (plan["currency"], plan["price_per_instance_hour"], plan["cost"]) == (None, None, None)
    assert (plan["paid_instance_hours"], plan["used_instance_hours"], plan["idle_instance_hours"]) == (12, 5, 7)
    markdown = invoke("simulate", str(files["scenario"]), "--format", "markdown").stdout
    (windows,) = [t for t in gfm.tables(markdown) if t[0][:2] == ["plan", "window"] and "when" in t[0]]
    assert not [column for column in windows[0] if "USD" in column]
    assert windows[2][5:8] == ["8.00", "3.00", "5.00"]


def test_markdown_and_text_show_the_plan_in_the_bill(files):
    args = ("simulate", str(files["scenario"]), "--prices", str(files["prices"]))
    markdown = invoke(*args, "--format", "markdown")
    assert markdown.exit_code == 0, markdown.output
    (plans,) = [t for t in gfm.tables(markdown.stdout) if t[0][:3] == ["plan", "instance type", "upfront fee"]]
    assert plans[1] == ["p5-plan", "ml.p5.48xlarge", "150.00", "150.00", "12.00", "5.00", "7.00", "0.00", "87.50",
                        "use", "0.00"]
    text = invoke(*args).stdout
    assert "Bill: 150.00 USD = on-demand 0.00 + plan fees 150.00; waste beside it: preempted attempts 0.00, plan " \
           "idle 87.50" in text


@needs_browser
def test_chromium_shows_the_plan_in_the_bill(files, tmp_path: Path):
    report = tmp_path / "report"
    out = invoke("simulate", str(files["scenario"]), "--prices", str(files["prices"]), "--report", str(report))
    assert out.exit_code == 0, out.output
    with headless_chromium() as browser:
        _, remote, _ = open_page(browser, report / "index.html")
        rows = browser.execute_script(
            "return [...document.querySelectorAll('#cost-plan-allocation tr')].map("
            "r => [...r.children].map(c => c.textContent.trim()))")
        assert rows == [["plan", "share", "used part", "idle part", "total"],
                        ["p5-plan", "training/vision", "62.50", "87.50", "150.00"]]
        assert remote == [] and browser.get_log("browser") == []


def test_a_plan_without_a_fee_anywhere_is_refused(files, write_file):
    prices = write_file("bare.yaml", "currency: USD\nper_instance_hour: {ml.p5.48xlarge: 98.32}\n")
    out = invoke("simulate", str(files["scenario"]), "--prices", str(prices))
    assert (out.exit_code, out.stdout) == (2, "")
    assert out.stderr.splitlines() == [
        f"error: {prices}:1: (top level): no upfront fee for training plan p5-plan: give "
        "training_plans.p5-plan.upfront_fee here or upfront_fee on the plan in the topology (a cost is never taken "
        "as zero)"]


def test_the_topologys_fee_is_used_and_the_rate_card_wins(files, write_file):
    topology = files["scenario"].parent / "topology.yaml"
    topology.write_text(TOPOLOGY.replace("    instance_type: ml.p5.48xlarge\n",
                                         "    instance_type: ml.p5.48xlarge\n    upfront_fee: 300\n"
                                         "    currency: USD\n"), encoding="utf-8")
    bare = write_file("bare.yaml", "currency: USD\nper_instance_hour: {ml.p5.48xlarge: 98.32}\n")
    args = ("simulate", str(files["scenario"]), "--format", "json", "--prices")
    assert json.loads(invoke(*args, str(bare)).stdout)["costs"]["bill"]["plans"] == 300
    assert json.loads(invoke(*args, str(files["prices"])).stdout)["costs"]["bill"]["plans"] == 150
    euros = write_file("euros.yaml", "currency: EUR\nper_instance_hour: {ml.p5.48xlarge: 90}\n")
    out = invoke(*args, str(euros))
    assert (out.exit_code, out.stdout) == (2, "")
    assert out.stderr.splitlines() == [
        f"error: {euros}:1: (top level): training plan p5-plan's upfront_fee is in USD, this rate card in EUR: give "
        "training_plans.p5-plan.upfront_fee here in EUR (amounts in two currencies are never added up)"]
    converted = write_file("converted.yaml", "currency: EUR\nper_instance_hour: {ml.p5.48xlarge: 90}\n"
                                             "training_plans: {p5-plan: {upfront_fee: 280}}\n")
    assert json.loads(invoke(*args, str(converted)).stdout)["costs"]["bill"]["plans"] == 280


def test_a_fee_for_a_plan_the_topology_lacks_is_a_typo(files, write_file):
    typo = write_file("typo.yaml", "currency: USD\nper_instance_hour: {ml.p5.48xlarge: 98.32}\n"
                                   "training_plans: {p5-plan: {upfront_fee: 150}, p5-plna: {upfront_fee: 1}}\n")
    out = invoke("simulate", str(files["scenario"]), "--prices", str(typo))
    assert (out.exit_code, out.stdout) == (2, "")
    assert out.stderr.splitlines() == [f"error: {typo}:3: training_plans.p5-plna: the topology has no training plan "
                                       "'p5-plna': its fee would never apply (did you mean 'p5-plan'?)"]
    negative = write_file("negative.yaml", "currency: USD\nper_instance_hour: {ml.p5.48xlarge: 98.32}\n"
                                           "training_plans: {p5-plan: {upfront_fee: -1}}\n")
    out = invoke("simulate", str(files["scenario"]), "--prices", str(negative))
    assert out.exit_code == 2 and len(out.stderr.splitlines()) == 1 and "Traceback" not in out.stderr


def test_diff_replays_keep_the_plan_and_its_fee(files, write_file):
    """A plan is bought, not deployed: the replay with HEAD keeps it, so its jobs still run on it and its fee is
    billed once on both sides (never their hours on-demand, never dropped)."""
    base = files["scenario"].parent / "topology.yaml"
    head = write_file("head.yaml", TOPOLOGY.replace("strategy: RESERVE", "strategy: LEND"))
    out = invoke("diff", str(base), str(head), "--scenario", str(files["scenario"]), "--prices",
                 str(files["prices"]), "--format", "json")
    assert out.exit_code in (0, 1), out.output
    costs = json.loads(out.stdout)["impact"]["costs"]
    assert costs["before"]["bill"] == costs["after"]["bill"] == {"on_demand": 0, "plans": 150, "total": 150}
    assert costs["after"]["plans"][0]["instance_hours"]["used"] == 5
