"""The bill as a user asks for it: ``simulate --prices/--costs/--chargeback/--period`` in every format and the HTML
page, the hostile prices files (exit 2, one line each), ``sweep``'s ``share(X).bill`` and ``diff --scenario``'s
column; the capacity-priced metrics refused.

The scenario is the hand-computed one of ``tests/policy_engine/simulation/results/test_costs.py``.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from tests import gfm
from tests.chromium import headless_chromium, needs_browser, open_page
from tests.cli import invoke, run_files

HOSTILE = Path(__file__).parents[3] / "data" / "hostile"
EXAMPLE = Path(__file__).parents[4] / "topologies" / "example.yaml"

TOPOLOGY = """\
service_environments:
  - {name: env, capacity: {ml.g5.xlarge: 4, ml.p4d.24xlarge: 2}}
job_queues:
  - name: q
    service_environment: env
    shares:
      - {name: A, capacity: {ml.g5.xlarge: 2, ml.p4d.24xlarge: 1}, strategy: LEND_AND_BORROW}
      - {name: B, capacity: {ml.g5.xlarge: 1, ml.p4d.24xlarge: 1}, strategy: LEND}
"""
SCENARIO = """\
topology: topology.yaml
settings: {startup_delay: 0, preemption_delay: 0}
jobs:
  - {name: a1, share: A, instance_type: ml.g5.xlarge, instances: 3, submit_at: 0, duration: 7200}
  - {name: b1, share: B, instance_type: ml.p4d.24xlarge, instances: 1, submit_at: 0, duration: 3600}
  - {name: a2, share: A, instance_type: ml.p4d.24xlarge, instances: 1, submit_at: 0, duration: 10800}
"""
PRICES = "currency: USD\nper_instance_hour: {ml.g5.xlarge: 2, ml.p4d.24xlarge: 10}\n"


@pytest.fixture
def files(write_file) -> dict[str, Path]:
    return run_files(write_file, TOPOLOGY, SCENARIO, PRICES)


def test_json_prices_the_run_as_computed_by_hand(files):
    """The bill is the jobs' RUNNING time x rate: A 6 g5-h x 2 + 3 p4d-h x 10 = 42 (its borrowed g5 included),
    B 1 p4d-h x 10 = 10; the environment's idle capacity is no money spent."""
    out = invoke("simulate", str(files["scenario"]), "--prices", str(files["prices"]), "--format", "json")
    assert out.exit_code == 0, out.output
    costs = json.loads(out.stdout)["costs"]
    assert (costs["unit"], costs["chargeback"], costs["attribution"]) == ("USD", "usage", "proportional")
    assert costs["period"] == {"start": None, "end": None}
    assert costs["bill"] == {"on_demand": 52, "plans": 0, "total": 52}
    assert costs["waste"] == {"preempted_attempts": 0, "plan_idle": 0}
    assert [(c["share"], c["bill"]["total"], c["budget"]) for c in costs["shares"]] == [("q/A", 42, None),
                                                                                       ("q/B", 10, None)]
    assert {t["instance_type"]: t["bill"]["total"] for t in costs["instance_types"]} == {
        "ml.g5.xlarge": 12, "ml.p4d.24xlarge": 40}
    assert costs["capacity"]["flows"] == [{"lender": "q/B", "borrower": "q/A", "instance_type": "ml.g5.xlarge",
                                           "instance_hours": 2}]
    limit = json.loads(invoke("simulate", str(files["scenario"]), "--prices", str(files["prices"]),
                              "--chargeback", "limit", "--format", "json").stdout)["costs"]
    # the budget view: A's limits (2 g5 x 2 + 1 p4d x 10) x 3 h = 42 of budget, all spent; B's (2 + 10) x 3 = 36
    assert [(c["share"], c["budget"]) for c in limit["shares"]] == [
        ("q/A", {"max_spend": 42, "use": 1}), ("q/B", {"max_spend": 36, "use": round(10 / 36, 6)})]


def test_without_prices_the_tables_are_in_instance_hours_per_type(files):
    out = invoke("simulate", str(files["scenario"]), "--costs")
    assert out.exit_code == 0, out.output
    assert "Who pays (instance-hours)" in out.stdout
    assert "ml.g5.xlarge: bill 6.00 instance-hours = 6.00 on-demand instance-hours billed" in out.stdout
    assert "USD" not in out.stdout
    assert out.stdout.splitlines()[0].startswith("Bill for the whole workload")  # the period, first
    plain = invoke("simulate", str(files["scenario"]))
    assert "Who pays" not in plain.stdout  # costs only when asked for


def test_text_says_lending_is_capacity_not_money(files):
    out = invoke("simulate", str(files["scenario"]), "--prices", str(files["prices"]))
    assert out.exit_code == 0, out.output
    flows = out.stdout[out.stdout.index("whose idle quota borrowers ran on"):]
    assert "q/B" in flows and "q/A" in flows and "2.00" in flows and "capacity, not money" in flows
    assert "Bill: 52.00 USD = on-demand 52.00 + plan fees 0.00" in out.stdout


def test_markdown_tables_parse_as_github_flavoured_markdown(files):
    out = invoke("simulate", str(files["scenario"]), "--prices", str(files["prices"]), "--format", "markdown")
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines()[0].startswith("_Bill for the whole workload")
    tables = gfm.tables(out.stdout)
    pays = next(t for t in tables if t[0][:4] == ["share", "on-demand", "plan fees", "bill"])
    assert [row[:4] for row in pays[1:]] == [["q/A", "42.00", "0.00", "42.00"], ["q/B", "10.00", "0.00", "10.00"]]
    assert "&lt;" not in gfm.html(out.stdout)


def test_lending_attribution_is_a_choice(files, write_file):
    out = invoke("simulate", str(files["scenario"]), "--lending-attribution", "topology-order", "--format", "json")
    assert json.loads(out.stdout)["costs"]["attribution"] == "topology-order"
    bad = invoke("simulate", str(files["scenario"]), "--lending-attribution", "nobody")
    assert bad.exit_code == 2


#: Each hostile prices file and what its one line (per problem) must say.
EXPECTED = {
    "prices-bad-currency.yaml": ["currency: expected a three-letter currency code"],
    "prices-billion-laughs.yaml": ["alias bomb"],
    "prices-bom.yaml": ["byte-order mark"],
    "prices-bool-rate.yaml": ["per_instance_hour.ml.g5.xlarge: input should be a valid number, got true"],
    "prices-duplicate-type.yaml": ["duplicate key 'ml.g5.xlarge'"],
    "prices-empty-rates.yaml": ["no price for ml.g5.xlarge, which the topology uses"],
    "prices-huge.yaml": ["1e999 is not a finite number"],
    "prices-latin1.yaml": ["not UTF-8 text"],
    "prices-list.yaml": ["expected a mapping with currency: and per_instance_hour:"],
    # ml.p4d.24xlarge is a real type the example does not use: accepted (one rate card for every topology)
    "prices-missing-type.yaml": ["per_instance_hour: no price for ml.g5.xlarge, which the topology uses: add it"],
    "prices-nan.yaml": [".nan is not a finite number"],
    "prices-rate-past-the-bound.yaml": ["ml.g5.xlarge: input should be less than or equal to 1000000"],
    "prices-negative.yaml": ["per_instance_hour.ml.g5.xlarge: a price per instance-hour must be 0 or more, got -1.5"],
    "prices-string-rate.yaml": ["input should be a valid number, got '1.2'"],
    "prices-typo-key.yaml": ["unknown key 'per_instance_hours' (did you mean 'per_instance_hour'?)"],
    "prices-unknown-type.yaml": ["per_instance_hour.ml.g5.xlrage: the topology has no ml.g5.xlrage, and it is no "
                                 "SageMaker instance type: a price for it would never apply (did you mean "
                                 "'ml.g5.xlarge'?)"],
}


def test_every_hostile_prices_file_is_in_the_table():
    assert {p.name for p in HOSTILE.glob("prices-*")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_hostile_prices_file_is_one_line_per_problem_and_exit_2(name, write_file):
    write_file("topology.yaml", EXAMPLE.read_text(encoding="utf-8"))
    scenario = write_file("scenario.yaml", "topology: topology.yaml\njobs:\n"
                                           "  - {name: a, share: QS1, submit_at: 0, duration: 60}\n")
    path = HOSTILE / name
    out = invoke("simulate", str(scenario), "--prices", str(path), "--format", "json")
    assert out.exit_code == 2, out.output
    assert out.stdout == ""
    lines = out.stderr.splitlines()
    assert "Traceback" not in out.stderr
    assert all(line.startswith(f"error: {path}") for line in lines), lines
    wanted = EXPECTED[name]
    assert len(lines) == len(wanted), lines
    for text in wanted:
        assert any(text in line for line in lines), (text, lines)


def test_a_type_priced_in_only_one_side_of_diff_is_fine_but_one_unpriced_is_not(files, write_file):
    head = write_file("head.yaml", TOPOLOGY.replace("ml.p4d.24xlarge: 2}", "ml.p4d.24xlarge: 2, ml.g5.2xlarge: 1}"))
    out = invoke("diff", str(files["scenario"].parent / "topology.yaml"), str(head), "--scenario",
                 str(files["scenario"]), "--prices", str(files["prices"]))
    assert out.exit_code == 2
    assert "no price for ml.g5.2xlarge" in out.stderr


def test_diff_scenario_shows_each_shares_cost_before_and_after(files, write_file):
    head = write_file("head.yaml", TOPOLOGY.replace("{ml.g5.xlarge: 1, ml.p4d.24xlarge: 1}, strategy: LEND",
                                                    "{ml.g5.xlarge: 1, ml.p4d.24xlarge: 1}, strategy: RESERVE"))
    base = files["scenario"].parent / "topology.yaml"
    out = invoke("diff", str(base), str(head), "--scenario", str(files["scenario"]), "--prices",
                 str(files["prices"]), "--format", "markdown")
    # the per-share tables are compare's, one per instance type (in the sections' order): each changed cell the
    # replay without the change -> with HEAD (difference), an unchanged one its value once
    types = re.findall(r"<summary>Impact per share on (ml\.[a-z0-9.]+)", out.stdout)  # a title per part
    impacts = [t for t in gfm.tables(out.stdout) if t[0][0] == "share" and t[0][1] != "criterion"][:len(types)]
    costs = {(row[0], instance_type): row[impact[0].index("cost (USD, its bill)")]
             for instance_type, impact in zip(types, impacts, strict=True) if "cost (USD, its bill)" in impact[0]
             for row in impact[1:]}
    # B stops lending: a1 (3 x g5) no longer fits A's own 2 and never runs: A's 12 USD of g5 are not spent
    assert costs[("q/A", "ml.g5.xlarge")] == "12.00 → 0.00 (−12.00)"
    assert costs[("q/A", "ml.p4d.24xlarge")] == "30.00"
    assert "The bill for the whole workload" in out.stdout and "52.00 → 40.00 USD (-12.00)" in out.stdout
    data = json.loads(invoke("diff", str(base), str(head), "--scenario", str(files["scenario"]), "--format",
                             "json", "--prices", str(files["prices"])).stdout)
    assert (data["impact"]["costs"]["before"]["bill"]["total"], data["impact"]["costs"]["after"]["bill"]["total"]) \
        == (52, 40)
    assert {(r["share"], r["instance_type"]): r["cost_after"] for r in data["impact"]["shares"]}[
        ("q/A", "ml.g5.xlarge")] == 0


def test_sweep_ranks_by_a_shares_bill(files, tmp_path):
    """B's g5 limit 1 or 2: A's borrowed job runs either way; B pays its own 10 USD of p4d, A 42."""
    out = invoke("sweep", str(files["scenario"]), "--vary", "q/A.capacity.ml.g5.xlarge=1,2", "--minimize",
                 "share(q/A).bill", "--prices", str(files["prices"]), "--workers", "1", "--quiet")
    assert out.exit_code == 0, out.output
    assert "note: bill metrics are in USD, over the whole workload" in out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith(("│ 1 ", "│ 2 "))]
    # A's limit 1 g5: a1 (3 x g5) can borrow at most B's 1 + ... = 2: it never runs, A pays only its p4d (30)
    assert [[cell.strip() for cell in row.split("│")[2:4]] for row in rows] == [["1", "30.00"], ["2", "42.00"]]
    assert "share(q/A).bill (USD)" in out.stdout  # the objective's column says its currency
    unpriced = invoke("sweep", str(files["scenario"]), "--vary", "q/B.capacity.ml.g5.xlarge=1,2", "--minimize",
                      "waste_cost", "--workers", "1", "--quiet")
    assert unpriced.exit_code == 0, unpriced.output
    assert "note: bill metrics are in instance-hours (all types alike)" in unpriced.stderr


@pytest.mark.parametrize(("old", "new"), [("cost", "use bill"), ("idle_cost", "use waste_cost"),
                                          ("used_cost", "use on_demand_cost"), ("share(q/B).cost", "share(q/B).bill"),
                                          ("max(cost)", "use bill")])
def test_a_capacity_priced_metric_is_refused_naming_the_new_one(files, old, new):
    for command in (("sweep",), ("tune", "--budget", "2")):
        out = invoke(*command, str(files["scenario"]), "--vary", "q/B.capacity.ml.g5.xlarge=1,2", "--minimize", old,
                     "--workers", "1", "--quiet")
        assert (out.exit_code, out.stdout) == (2, ""), out.output
        lines = out.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and new in lines[0], lines


def test_sweep_refuses_an_unknown_cost_metric(files):
    out = invoke("sweep", str(files["scenario"]), "--vary", "q/B.capacity.ml.g5.xlarge=1,2", "--minimize",
                 "share(q/B).costs", "--workers", "1", "--quiet")
    assert out.exit_code == 2
    assert "'costs' is not a per-share metric" in out.stderr


@needs_browser
def test_the_report_page_shows_the_cost_tables_without_network_or_console_errors(files, tmp_path):
    report = tmp_path / "report"
    out = invoke("simulate", str(files["scenario"]), "--prices", str(files["prices"]), "--report", str(report))
    assert out.exit_code == 0, out.output
    with headless_chromium() as browser:
        ours, remote, _ = open_page(browser, report / "index.html")
        for _ in range(300):
            if browser.execute_script("return document.documentElement.dataset.rendered") != "false":
                break
            browser.implicitly_wait(0.1)
        assert browser.execute_script("return document.documentElement.dataset.rendered") == "true"
        rows = browser.execute_script(
            "return Array.from(document.querySelectorAll('#cost-shares tbody tr'))"
            ".map(r => Array.from(r.cells).map(c => c.textContent))")
        assert [row[:4] for row in rows] == [["q/A", "42.00", "0.00", "42.00"], ["q/B", "10.00", "0.00", "10.00"]]
        flows = browser.execute_script("return document.querySelectorAll('#cost-flows tbody tr').length")
        assert flows == 1
        assert remote == [] and [url for url in ours if not url.startswith(("file:", "data:"))] == []
        assert browser.get_log("browser") == []


def test_a_resumed_sweep_prices_the_runs_read_back_from_its_dataset(files, tmp_path):
    """The ledgers travel in the Parquet dataset: a resumed sweep ranks by bill without running anything again; a
    dataset priced another way (another --period, or the capacity ledger of before the bill) is refused."""
    args = ["sweep", str(files["scenario"]), "--vary", "q/B.capacity.ml.g5.xlarge=1,2", "--minimize",
            "share(q/B).bill", "--prices", str(files["prices"]), "--workers", "1", "--quiet", "--out",
            str(tmp_path / "runs")]
    first = invoke(*args)
    assert first.exit_code == 0, first.output
    again = invoke(*args, "--resume")
    assert again.exit_code == 0, again.output
    assert again.stdout == first.stdout
    other = invoke(*args, "--resume", "--period", "0s..1h")
    assert (other.exit_code, other.stdout) == (2, "")
    errors = [line for line in other.stderr.splitlines() if line.startswith("error")]
    assert errors == [f"error: --resume {tmp_path / 'runs'}: its runs were priced over another --period: run the "
                      "sweep again into a new --out DIR"]


def test_an_old_dataset_priced_by_capacity_is_refused_on_resume(files, tmp_path):
    from policy_engine.sweep import evaluate

    args = ["sweep", str(files["scenario"]), "--vary", "q/B.capacity.ml.g5.xlarge=1,2", "--workers", "1", "--quiet",
            "--out", str(tmp_path / "runs")]
    original = evaluate.ledgers
    evaluate.ledgers = lambda result, period=None: {"capacity": result.hours.to_json()}  # what old datasets hold
    try:
        assert invoke(*args).exit_code == 0
    finally:
        evaluate.ledgers = original
    out = invoke(*args, "--resume", "--minimize", "share(q/B).cost")
    assert (out.exit_code, out.stdout) == (2, "")
    assert out.stderr.splitlines()[0].startswith("error: share(q/B).cost priced capacity and is no more: use "
                                                 "share(q/B).bill")
    out = invoke(*args, "--resume", "--minimize", "bill")
    assert (out.exit_code, out.stdout) == (2, "")
    errors = [line for line in out.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1 and "before the bill replaced it (cost, idle_cost, share(X).cost are now bill, " \
        "waste_cost, share(X).bill)" in errors[0]


def test_tune_minimises_waste(files):
    """With no borrowing A's wide job never runs: tune keeps B lending (nothing wasted either way), and the bill
    metric ranks the candidates by what they spend."""
    out = invoke("tune", str(files["scenario"]), "--vary", "q/A.capacity.ml.g5.xlarge=1,2", "--maximize",
                 "bill", "--prices", str(files["prices"]), "--budget", "2", "--workers", "1", "--quiet",
                 "--format", "json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["best"]["values"] == {"q/A.capacity.ml.g5.xlarge": 2}


def test_with_prices_the_one_all_types_utilisation_is_price_weighted(files):
    """Without prices the summary gives each type's utilisation side by side; with them it adds the one
    all-types figure, each type's instance-hours weighted by its rate (2 and 10 USD here)."""
    args = ["simulate", str(files["scenario"]), "--quiet"]
    plain = invoke(*args).stdout
    priced = invoke(*args, "--prices", str(files["prices"])).stdout
    types = json.loads(invoke(*args, "--format", "json").stdout)["summary"]["instance_types"]
    rate = {"ml.g5.xlarge": 2, "ml.p4d.24xlarge": 10}
    weighted = (sum(f["used_instance_hours"] * rate[t] for t, f in types.items())
                / sum(f["capacity_instance_hours"] * rate[t] for t, f in types.items()))
    assert "price-weighted" not in plain
    assert f"all types {weighted:.1%} (price-weighted)" in priced
    # the same figure in JSON (beside the instance-weighted cluster_utilisation) and in markdown
    document = json.loads(invoke(*args, "--prices", str(files["prices"]), "--format", "json").stdout)
    assert document["costs"]["price_weighted_utilisation"] == pytest.approx(weighted, abs=1e-6)
    assert "price_weighted_utilisation" not in json.loads(invoke(*args, "--format", "json").stdout).get("costs", {})
    markdown = invoke(*args, "--prices", str(files["prices"]), "--format", "markdown").stdout
    assert f"utilisation {weighted:.1%} (price-weighted)" in markdown


def test_sweep_json_and_csv_carry_each_runs_bill_as_computed_by_hand(files):
    """B's g5 limit 1 or 2 changes what B lends, not what is billed: 52 USD, A 42, each run."""
    args = ("sweep", str(files["scenario"]), "--vary", "q/B.capacity.ml.g5.xlarge=1,2", "--prices",
            str(files["prices"]), "--workers", "1", "--quiet")
    runs = json.loads(invoke(*args, "--format", "json").stdout)["runs"]
    assert [(r["costs"]["unit"], r["costs"]["bill"]["total"], r["costs"]["waste"]["preempted_attempts"])
            for r in runs] == [("USD", 52, 0)] * 2
    assert {c["share"]: c["bill"]["total"] for c in runs[0]["costs"]["shares"]} == {"q/A": 42, "q/B": 10}
    rows = list(csv.DictReader(io.StringIO(invoke(*args, "--format", "csv").stdout)))
    first = rows[0]
    assert (first["cost_unit"], float(first["bill"]), float(first["waste_cost"]), float(first["share(q/A).bill"])) \
        == ("USD", 52, 0, 42)
    assert float(rows[0]["utilisation(ml.g5.xlarge)"]) == runs[0]["summary"]["instance_types"]["ml.g5.xlarge"][
        "utilisation"]
    unpriced = list(csv.DictReader(io.StringIO(invoke(*args[:4], "--workers", "1", "--quiet", "--format",
                                                      "csv").stdout)))
    # without prices no all-types figure: instance-hours of g5 and p4d are not added up
    assert unpriced[0]["cost_unit"] == "instance-hours" and "bill" not in unpriced[0]
    assert float(unpriced[0]["idle_instance_hours(ml.p4d.24xlarge)"]) > 0


def test_a_rate_card_with_types_the_topology_does_not_use_prices_the_run_and_notes_them(files, write_file):
    """A team keeps one rate card for all its topologies: real types the topology lacks are ignored for the run,
    named in one note on stderr, and change no figure."""
    card = write_file("card.yaml", "currency: USD\nper_instance_hour: {ml.p5.48xlarge: 98.32, ml.g5.xlarge: 2, "
                                   "ml.trn1.32xlarge: 21.5, ml.p4d.24xlarge: 10}\n")
    out = invoke("simulate", str(files["scenario"]), "--prices", str(card), "--format", "json")
    assert out.exit_code == 0, out.output
    assert out.stderr.splitlines() == [f"note: {card}: ml.p5.48xlarge, ml.trn1.32xlarge priced but not used by the "
                                       "topology: ignored for this run"]
    plain = invoke("simulate", str(files["scenario"]), "--prices", str(files["prices"]), "--format", "json")
    assert plain.stderr == ""  # no note when every rate applies
    assert json.loads(out.stdout)["costs"] == json.loads(plain.stdout)["costs"]


def test_a_rate_card_needs_no_second_file_for_sweep_or_diff(files, write_file):
    card = write_file("card.yaml", "currency: USD\nper_instance_hour: {ml.g5.xlarge: 2, ml.p4d.24xlarge: 10, "
                                   "ml.p5.48xlarge: 98.32}\n")
    sweep = invoke("sweep", str(files["scenario"]), "--vary", "q/B.capacity.ml.g5.xlarge=1,2", "--minimize",
                   "share(q/B).bill", "--prices", str(card), "--workers", "1", "--quiet")
    assert sweep.exit_code == 0, sweep.output
    assert f"note: {card}: ml.p5.48xlarge priced but not used by the topology: ignored for this run" in (
        sweep.stderr.splitlines())
    base = files["scenario"].parent / "topology.yaml"
    head = write_file("head.yaml", TOPOLOGY.replace("strategy: LEND\n", "strategy: RESERVE\n"))
    diff = invoke("diff", str(base), str(head), "--scenario", str(files["scenario"]), "--prices", str(card),
                  "--format", "json")
    assert diff.exit_code in (0, 1), diff.output
    assert diff.stderr.splitlines() == [f"note: {card}: ml.p5.48xlarge priced but not used by either topology: "
                                        "ignored for this run"]


def test_a_typo_in_a_rate_cards_type_and_a_type_without_a_rate_stay_errors(files, write_file):
    card = write_file("card.yaml", "currency: USD\nper_instance_hour:\n  ml.g5.xlarge: 2\n  ml.p4d.24xlarge: 10\n"
                                   "  ml.p5.48xlrage: 98.32\n")
    out = invoke("simulate", str(files["scenario"]), "--prices", str(card))
    assert (out.exit_code, out.stdout) == (2, "")
    assert out.stderr.splitlines() == [
        f"error: {card}:5: per_instance_hour.ml.p5.48xlrage: the topology has no ml.p5.48xlrage, and it is no "
        "SageMaker instance type: a price for it would never apply (did you mean 'ml.p5.48xlarge'?)"]
    short = write_file("short.yaml", "currency: USD\nper_instance_hour: {ml.g5.xlarge: 2, ml.p5.48xlarge: 98.32}\n")
    out = invoke("simulate", str(files["scenario"]), "--prices", str(short))
    assert (out.exit_code, out.stdout) == (2, "")
    assert out.stderr.splitlines() == [f"error: {short}:2: per_instance_hour: no price for ml.p4d.24xlarge, which "
                                       "the topology uses: add it (a cost is never taken as zero)"]


def test_a_rate_of_0_is_a_price_and_its_costs_are_0(files, write_file):
    """Capacity already paid for (or free credits) costs 0 an hour: the p4d figures are 0 USD, never unknown."""
    free = write_file("free.yaml", "currency: USD\nper_instance_hour: {ml.g5.xlarge: 2, ml.p4d.24xlarge: 0}\n")
    out = invoke("simulate", str(files["scenario"]), "--prices", str(free), "--format", "json")
    assert out.exit_code == 0, out.output
    costs = json.loads(out.stdout)["costs"]
    # the hand-computed run with p4d free: 6 g5-hours x 2 = 12 USD, all A's
    assert costs["bill"] == {"on_demand": 12, "plans": 0, "total": 12}
    p4d = next(t for t in costs["instance_types"] if t["instance_type"] == "ml.p4d.24xlarge")
    assert p4d["price_per_instance_hour"] == 0 and set(p4d["bill"].values()) == {0}  # zeros, not null, never -0.0
    assert [(c["share"], c["bill"]["total"]) for c in costs["shares"]] == [("q/A", 12), ("q/B", 0)]
    assert costs["price_weighted_utilisation"] == 0.5  # the g5's own: p4d weighs nothing
    nothing = write_file("nothing.yaml", "currency: USD\nper_instance_hour: {ml.g5.xlarge: 0, ml.p4d.24xlarge: 0.0}\n")
    out = invoke("simulate", str(files["scenario"]), "--prices", str(nothing), "--format", "json")
    assert out.exit_code == 0, out.output
    costs = json.loads(out.stdout)["costs"]
    assert costs["bill"]["total"] == 0 and costs["price_weighted_utilisation"] is None  # no share of a cost of 0
    text = invoke("simulate", str(files["scenario"]), "--prices", str(nothing)).stdout
    assert "Bill: 0.00 USD" in text and "price-weighted" not in text


def test_a_type_a_sweep_adds_needs_a_price_and_a_rate_card_may_hold_it(files, write_file):
    """``--vary env.capacity.ml.p5.48xlarge=...`` gives the candidates a type the topology lacks: the prices file
    must price it (one line naming the --vary, exit 2, never a KeyError), and a rate card that does is used."""
    args = ["sweep", str(files["scenario"]), "--vary", "env.capacity.ml.p5.48xlarge=1,2", "--minimize", "bill",
            "--workers", "1", "--quiet"]
    out = invoke(*args, "--prices", str(files["prices"]))
    assert (out.exit_code, out.stdout) == (2, "")
    assert out.stderr.splitlines() == [
        f"error: {files['prices']}:2: per_instance_hour: no price for ml.p5.48xlarge, which --vary "
        "env.capacity.ml.p5.48xlarge uses: add it (a cost is never taken as zero)"]
    card = write_file("card.yaml", "currency: USD\nper_instance_hour: {ml.g5.xlarge: 2, ml.p4d.24xlarge: 10, "
                                   "ml.p5.48xlarge: 100}\n")
    out = invoke(*args, "--prices", str(card))
    assert out.exit_code == 0, out.output
    assert "priced but not used" not in out.stderr  # the candidates use it
    rows = [line for line in out.stdout.splitlines() if line.startswith(("│ 1 ", "│ 2 "))]
    # capacity nobody uses costs nothing: more p5 instances leave the bill at the hand-computed 52 USD
    assert [[cell.strip() for cell in row.split("│")[2:4]] for row in rows] == [["1", "52.00"], ["2", "52.00"]]


def test_on_demand_cost_is_what_jobs_ran_on(files):
    args = ("sweep", str(files["scenario"]), "--vary", "q/B.capacity.ml.g5.xlarge=1,2", "--prices",
            str(files["prices"]), "--workers", "1", "--quiet")
    used = invoke(*args, "--minimize", "on_demand_cost")
    assert used.exit_code == 0, used.output
    assert "note: bill metrics are in USD" in used.stderr
    assert "on_demand_cost (USD)" in used.stdout and "52.00" in used.stdout  # the hand-computed job time: 52 USD


def test_the_period_cuts_the_bill_and_is_said_first(files):
    """Over 0-1 h: a1 3 g5 x 1 h x 2 + b1 10 + a2 10 = 26 USD; it is the first line of text and markdown."""
    args = ("simulate", str(files["scenario"]), "--prices", str(files["prices"]), "--period", "0s..1h")
    data = json.loads(invoke(*args, "--format", "json").stdout)["costs"]
    assert data["period"] == {"start": 0, "end": 3600} and data["bill"]["total"] == 26
    assert invoke(*args).stdout.splitlines()[0].startswith("Bill for 0s to 1h 00m from time 0 (--period")
    bad = invoke(*args[:-1], "2026-01-01..2026-02-01")
    assert (bad.exit_code, bad.stdout) == (2, "")
    assert bad.stderr.splitlines() == ["error: --period '2026-01-01..2026-02-01': '2026-01-01' is a date, and the "
                                       "scenario has no start (an ISO 8601 start: to count from); write it as a "
                                       "duration from time 0 instead"]
    reversed_ = invoke(*args[:-1], "2h..1h")
    assert reversed_.exit_code == 2 and "its end must come after its start" in reversed_.stderr


def test_tune_says_the_bill_of_the_current_and_the_chosen_topology(files):
    out = invoke("tune", str(files["scenario"]), "--vary", "q/A.capacity.ml.g5.xlarge=1,2", "--maximize",
                 "share(q/A).bill", "--prices", str(files["prices"]), "--budget", "2", "--workers", "1", "--quiet")
    assert out.exit_code == 0, out.output
    (line,) = [line for line in out.stdout.splitlines() if line.startswith("bill for")]
    assert line == ("bill for the whole workload (every job wherever it ran, from time 0; each plan's whole upfront "
                    "fee): current 52.00 -> best 52.00 USD (waste 0.00 -> 0.00)")


def test_iso_dates_bound_the_period_when_the_scenario_has_a_start(files):
    scenario = files["scenario"]
    scenario.write_text(scenario.read_text().replace("settings: {", "start: 2026-11-01T00:00:00Z\nsettings: {"))
    args = ("simulate", str(scenario), "--prices", str(files["prices"]), "--format", "json", "--period")
    data = json.loads(invoke(*args, "2026-11-01T01:00:00Z..2026-11-01T02:00:00Z").stdout)["costs"]
    # 1-2 h: a1 3 g5 x 2 + a2 1 p4d x 10 (b1 ended at 1 h) = 16 USD
    assert data["period"] == {"start": 3600, "end": 7200} and data["bill"]["total"] == 16


@pytest.mark.parametrize("command", ["sweep", "tune"])
def test_sweep_and_tune_say_the_period_first(files, command):
    """A sweep's or tune's text opens with what every run's bill covers, as simulate's does (issue 34)."""
    objective = ("--minimize", "bill") if command == "sweep" else ("--minimize", "bill", "--budget", "2")
    args = (command, str(files["scenario"]), "--vary", "q/A.capacity.ml.g5.xlarge=1,2", *objective,
            "--prices", str(files["prices"]), "--workers", "1", "--period", "0s..1h")
    out = invoke(*args, "--quiet") if command == "tune" else invoke(*args)
    assert out.exit_code in (0, 1), out.output
    assert out.stdout.splitlines()[0].startswith("Bill for 0s to 1h 00m from time 0 (--period")
    unpriced = invoke(*(a for a in args if a not in ("--prices", str(files["prices"]), "--period", "0s..1h")),
                      *(("--quiet",) if command == "tune" else ()))
    assert not unpriced.stdout.startswith("Bill for")  # nothing billed, nothing to say first


def test_diff_says_the_billing_period_in_its_first_line_and_heading(files, write_file):
    """Priced, diff's text opens with what the replays' bills cover, and the PR comment's heading says it too."""
    head = write_file("head.yaml", TOPOLOGY.replace("{ml.g5.xlarge: 1, ml.p4d.24xlarge: 1}, strategy: LEND",
                                                    "{ml.g5.xlarge: 1, ml.p4d.24xlarge: 1}, strategy: RESERVE"))
    args = ("diff", str(files["scenario"].parent / "topology.yaml"), str(head), "--scenario", str(files["scenario"]))
    priced = (*args, "--prices", str(files["prices"]), "--period", "0s..1h")
    first = invoke(*priced).stdout.splitlines()[0]
    assert first.endswith("; bill for 0s to 1h 00m from time 0 (--period; attempts cut at its edges, plan fees "
                          "prorated by reserved instance-hours inside it)")
    heading = next(line for line in invoke(*priced, "--format", "markdown").stdout.splitlines()
                   if line.startswith("### "))
    assert "· bill for 0s to 1h 00m from time 0" in heading
    assert "bill for" not in invoke(*args).stdout.splitlines()[0]  # unpriced: no bill to speak of
