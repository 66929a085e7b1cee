"""The bill without prices: a training plan's fee in instance-hours is what it reserved (instances x window hours,
prorated by ``--period`` as its money is), used or not, so the bill in instance-hours is the on-demand RUNNING hours
plus the plans' reserved hours, and the bill with prices is that arithmetic with the rates (docs/costs.md).

SageMaker: "After successful upfront payment, the plan's status becomes Scheduled": a plan is paid for its reserved
capacity, not for the hours its jobs run. Worked out by hand (startup delay 0):

- plan ``p5-plan``: 2 p5 for one day (0-86400 s): 48 reserved instance-hours, ``shares: [vision, speech]``,
  ``idle_to: owners``; priced 4,800 USD (100 per reserved instance-hour).
- plan jobs: ``a`` (vision, 2 instances, 6 h from 0) uses 12; ``b`` (speech, 1 instance, 12 h from 6 h) uses 12.
  Used 24, idle 24.
- on-demand: ``c`` (vision, 1 p5, 3 h; it waits for ``a``, whose 2 plan instances fill vision's limit of 2, and
  runs 6-9 h) 3 p5 instance-hours at 100 USD; ``d`` (speech, 2 g5, 5 h) 10 g5 instance-hours at 2 USD.
- bill in instance-hours: p5 3 on-demand + 48 reserved = 51 (not 3 + 24 used = 27); g5 10. Plan idle waste: 24.
  Who pays p5 (used part by use, idle part to the owners equally): vision 3 + 12 + 12 = 27, speech 12 + 12 = 24.
- bill in USD: 3 x 100 + 4,800 + 10 x 2 = 5,120 (the p5 part: 51 instance-hours x 100).
- ``--period 0s..12h``: reserved 2 x 12 = 24 (the fee prorated: 2,400 USD); used a 12 + b 6 = 18, idle 6; on-demand
  the same: p5 bill 3 + 24 = 27 instance-hours.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests import gfm
from tests.cli import invoke, run_files

TOPOLOGY = """\
service_environments:
  - {name: gpu, capacity: {ml.p5.48xlarge: 4, ml.g5.xlarge: 2}}
job_queues:
  - name: training
    service_environment: gpu
    shares:
      - {name: vision, capacity: {ml.p5.48xlarge: 2}, strategy: RESERVE}
      - {name: speech, capacity: {ml.p5.48xlarge: 2, ml.g5.xlarge: 2}, strategy: RESERVE}
training_plans:
  - name: p5-plan
    instance_type: ml.p5.48xlarge
    shares: [vision, speech]
    idle_to: owners
    reserved_capacities:
      - {instances: 2, start: 0, end: 86400}
"""
SCENARIO = """\
topology: topology.yaml
settings: {startup_delay: 0}
jobs:
  - {name: a, share: vision, instances: 2, submit_at: 0, duration: 21600, training_plan: p5-plan}
  - {name: b, share: speech, instances: 1, submit_at: 21600, duration: 43200, training_plan: p5-plan,
     instance_type: ml.p5.48xlarge}
  - {name: c, share: vision, instances: 1, submit_at: 0, duration: 10800, instance_type: ml.p5.48xlarge}
  - {name: d, share: speech, instances: 2, submit_at: 0, duration: 18000, instance_type: ml.g5.xlarge}
"""
PRICES = ("currency: USD\nper_instance_hour: {ml.p5.48xlarge: 100, ml.g5.xlarge: 2}\n"
          "training_plans: {p5-plan: {upfront_fee: 4800}}\n")
P5, G5 = "ml.p5.48xlarge", "ml.g5.xlarge"


@pytest.fixture
def files(write_file) -> dict[str, Path]:
    return run_files(write_file, TOPOLOGY, SCENARIO, PRICES)


def _costs(files: dict[str, Path], *args: str) -> dict:
    out = invoke("simulate", str(files["scenario"]), "--format", "json", *args)
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)["costs"]


def test_json_bill_in_instance_hours_counts_the_reserved_hours(files):
    costs = _costs(files, "--costs")
    assert costs["unit"] == "instance-hours" and costs["bill"]["total"] is None  # two types are never added up
    types = {row["instance_type"]: row for row in costs["instance_types"]}
    assert types[P5]["bill"] == {"on_demand": 3, "plans": 48, "total": 51}  # not 3 + the 24 used
    assert types[P5]["waste"] == {"preempted_attempts": 0, "plan_idle": 24}
    assert types[P5]["instance_hours"] == {"on_demand": 3, "borrowing": 0, "plans": 48, "plans_used": 24,
                                           "preempted": 0, "plan_idle": 24}
    assert types[G5]["bill"] == {"on_demand": 10, "plans": 0, "total": 10}
    (plan,) = costs["plans"]
    assert (plan["upfront_fee"], plan["fee"], plan["waste"], plan["unallocated"]) == (None, 48, 24, 0)
    assert plan["instance_hours"] == {"reserved": 48, "used": 24, "idle": 24, "cut": 0}
    assert sorted(plan["allocation"], key=lambda part: part["share"]) == [
        {"share": "training/speech", "use": 12, "idle": 12, "total": 24},
        {"share": "training/vision", "use": 12, "idle": 12, "total": 24}]


def test_the_usd_bill_is_the_same_arithmetic_with_the_rates(files):
    costs = _costs(files, "--prices", str(files["prices"]))
    assert costs["bill"] == {"on_demand": 3 * 100 + 10 * 2, "plans": 4800, "total": 5120}
    types = {row["instance_type"]: row for row in costs["instance_types"]}
    assert types[P5]["bill"]["total"] == 51 * 100 and types[G5]["bill"]["total"] == 10 * 2
    assert costs["waste"] == {"preempted_attempts": 0, "plan_idle": 24 * 100}
    assert {s["share"]: s["bill"]["total"] for s in costs["shares"]} == {"training/vision": 2700,
                                                                         "training/speech": 2420}


def test_the_period_prorates_the_reserved_hours_as_it_prorates_the_fee(files):
    hours = _costs(files, "--costs", "--period", "0s..12h")
    (plan,) = hours["plans"]
    assert plan["instance_hours"] == {"reserved": 24, "used": 18, "idle": 6, "cut": 0} and plan["fee"] == 24
    p5 = next(row for row in hours["instance_types"] if row["instance_type"] == P5)
    assert p5["bill"] == {"on_demand": 3, "plans": 24, "total": 27}
    money = _costs(files, "--prices", str(files["prices"]), "--period", "0s..12h")
    assert money["bill"]["plans"] == 2400 == plan["fee"] * 100


def test_text_and_markdown_say_the_bill_with_the_reserved_hours(files):
    text = invoke("simulate", str(files["scenario"]), "--costs")
    assert text.exit_code == 0, text.output
    assert (f"{P5}: bill 51.00 instance-hours = 3.00 on-demand instance-hours billed (0.00 of them work lost to "
            "preemption) + plan fees 48.00 reserved on training plans (24.00 used, 24.00 idle or cut)") in text.stdout
    markdown = invoke("simulate", str(files["scenario"]), "--costs", "--format", "markdown")
    tables = gfm.tables(markdown.stdout)
    (pays,) = [t for t in tables if t[0][:2] == ["share", "instance type"] and "bill" in t[0]]
    bill = {(row[0], row[1]): row[-1] for row in pays[1:]}
    assert bill == {("training/vision", P5): "27.00", ("training/speech", P5): "24.00",
                    ("training/speech", G5): "10.00"}  # 27 + 24 = the p5 bill of 51: the books balance
    (plans,) = [t for t in tables if t[0][:3] == ["plan", "instance type", "fee: reserved"]]
    assert plans[1][2:7] == ["48.00", "24.00", "24.00", "0.00", "24.00"]


def test_compare_and_diff_bill_the_reserved_hours(files, write_file):
    topology = files["scenario"].parent / "topology.yaml"
    head = write_file("head.yaml", TOPOLOGY.replace("idle_to: owners", "idle_to: use"))
    out = invoke("compare", str(files["scenario"]), "--topology", str(topology), "--topology", str(head),
                 "--format", "json")
    assert out.exit_code in (0, 1), out.output
    for run in json.loads(out.stdout)["runs"]:
        p5 = next(row for row in run["costs"]["instance_types"] if row["instance_type"] == P5)
        assert p5["bill"]["total"] == 51
    table = invoke("compare", str(files["scenario"]), "--topology", str(topology), "--topology", str(head),
                   "--format", "markdown")
    (bill,) = [t for t in gfm.tables(table.stdout) if t[0][0] == "instance type" and "plan fees" in t[0]]
    p5_row = next(row for row in bill[1:] if row[0] == P5)
    assert p5_row[bill[0].index("plan fees")].startswith("48.00")
    out = invoke("diff", str(topology), str(head), "--scenario", str(files["scenario"]), "--format", "json")
    assert out.exit_code in (0, 1), out.output
    shares = {(r["share"], r["instance_type"]): (r["cost_before"], r["cost_after"])
              for r in json.loads(out.stdout)["impact"]["shares"]}
    # owners share the 24 idle hours equally (12 each); by use too here (12 used each): the whole 48 either way
    assert shares[("training/vision", P5)] == (27, 27) and shares[("training/speech", P5)] == (24, 24)


@pytest.mark.parametrize(("metric", "value"), [
    ("bill", "61.00"), ("plan_cost", "48.00"), ("waste_cost", "24.00"), ("share(training/vision).bill", "27.00"),
    ("share(training/speech).bill", "34.00")])
def test_sweep_metrics_bill_the_reserved_hours(files, metric, value):
    """Every type alike: on-demand 3 + 10, plan fees the 48 reserved hours (not the 24 used), waste the 24 idle;
    speech pays its 10 g5 hours and its 24 of the plan."""
    out = invoke("sweep", str(files["scenario"]), "--vary", "training/speech.capacity.ml.g5.xlarge=2",
                 "--minimize", metric, "--workers", "1", "--quiet")
    assert out.exit_code == 0, out.output
    (row,) = [line for line in out.stdout.splitlines() if line.startswith("│ 1 ")]
    assert row.split("│")[3].strip() == value


class _Tables(HTMLParser):
    """Each ``<table id=...>``'s rows of cell texts, read by the standard library's HTML parser."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._table = dict(attrs).get("id") or ""
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._table is not None and self._cell is not None:
            self.tables[self._table][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def test_the_html_report_bills_the_reserved_hours(files, tmp_path):
    out = invoke("simulate", str(files["scenario"]), "--costs", "--report", str(tmp_path / "report"))
    assert out.exit_code == 0, out.output
    page = _Tables()
    page.feed((tmp_path / "report" / "index.html").read_text(encoding="utf-8"))
    header, *rows = page.tables["cost-plans"]
    assert dict(zip(header, rows[0], strict=True))["fee: reserved"] == "48.00"
    header, *rows = page.tables["cost-shares"]
    assert {(row[0], row[1]): row[header.index("bill")] for row in rows} == {
        ("training/vision", P5): "27.00", ("training/speech", P5): "24.00", ("training/speech", G5): "10.00"}


def test_the_budget_view_counts_the_share_part_of_the_reserved_hours(files):
    out = invoke("simulate", str(files["scenario"]), "--costs", "--chargeback", "limit", "--format", "markdown")
    assert out.exit_code == 0, out.output
    (budget,) = [t for t in gfm.tables(out.stdout) if t[0][:3] == ["share", "instance type", "limit over the period"]]
    rows = {(row[0], row[1]): row for row in budget[1:]}
    vision = rows[("training/vision", P5)]
    assert vision[3] == "27.00"  # 3 on demand + its 24 of the plan's 48 reserved hours, not its 3 + 12 used
    assert vision[4] == f"{27 / float(vision[2]) * 100:.1f}%"
