"""Costs as a user asks for them: ``simulate --prices/--costs/--chargeback`` in every format and the HTML page,
the hostile prices files (exit 2, one line each), ``sweep``'s ``share(X).cost`` and ``diff --scenario``'s column.

The scenario is the hand-computed one of ``tests/policy_engine/simulation/test_costs.py``.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests import gfm
from tests.chromium import headless_chromium, needs_browser, open_page
from tests.cli import invoke, run_files

HOSTILE = Path(__file__).parents[2] / "data" / "hostile"
EXAMPLE = Path(__file__).parents[3] / "topologies" / "example.yaml"

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
    out = invoke("simulate", str(files["scenario"]), "--prices", str(files["prices"]), "--format", "json")
    assert out.exit_code == 0, out.output
    costs = json.loads(out.stdout)["costs"]
    assert (costs["unit"], costs["convention"], costs["attribution"]) == ("USD", "usage", "proportional")
    assert (costs["total"], costs["used"], costs["idle"], costs["charged_to_shares"]) == (84, 52, 32, 48)
    assert [(c["share"], c["net"]) for c in costs["chargeback"]] == [("q/A", 42), ("q/B", 6)]
    assert costs["flows"] == [{"lender": "q/B", "borrower": "q/A", "instance_type": "ml.g5.xlarge",
                               "instance_hours": 2, "cost": 4}]
    limit = json.loads(invoke("simulate", str(files["scenario"]), "--prices", str(files["prices"]),
                              "--chargeback", "limit", "--format", "json").stdout)["costs"]
    assert [(c["share"], c["net"]) for c in limit["chargeback"]] == [("q/A", 46), ("q/B", 32)]


def test_without_prices_the_tables_are_in_instance_hours_per_type(files):
    out = invoke("simulate", str(files["scenario"]), "--costs")
    assert out.exit_code == 0, out.output
    assert "Chargeback (instance-hours)" in out.stdout and "convention usage: own use + borrowed" in out.stdout
    assert "ml.g5.xlarge over the run: 12.00 instance-hours of capacity" in out.stdout
    assert "USD" not in out.stdout
    plain = invoke("simulate", str(files["scenario"]))
    assert "Chargeback" not in plain.stdout  # costs only when asked for


def test_text_names_who_subsidises_whom(files):
    out = invoke("simulate", str(files["scenario"]), "--prices", str(files["prices"]))
    assert out.exit_code == 0, out.output
    flows = out.stdout[out.stdout.index("who subsidises whom"):]
    assert "q/B" in flows and "q/A" in flows and "4.00" in flows
    assert "Cost over the run: 84.00 USD of capacity, 52.00 used, 32.00 idle" in out.stdout


def test_markdown_tables_parse_as_github_flavoured_markdown(files):
    out = invoke("simulate", str(files["scenario"]), "--prices", str(files["prices"]), "--format", "markdown")
    assert out.exit_code == 0, out.output
    tables = gfm.tables(out.stdout)
    chargeback = next(t for t in tables if t[0] == ["share", "instance type", "charged", "credited", "net"])
    assert chargeback[1:] == [["q/A", "all", "42.00", "0.00", "42.00"], ["q/B", "all", "10.00", "4.00", "6.00"]]
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
    # the per-share table is compare's: each cell the replay without the change -> with HEAD (difference)
    impact = next(t for t in gfm.tables(out.stdout) if t[0][0] == "share" and "cost (USD, usage chargeback)" in t[0])
    column = impact[0].index("cost (USD, usage chargeback)")
    costs = {(row[0], row[1]): row[column] for row in impact[1:]}
    # B stops lending: a1 (3 x g5) no longer fits A's own 2 and never runs, so B's lent credit goes
    assert costs[("q/B", "ml.g5.xlarge")] == "-4.00 → 0.00 (+4.00)"
    assert costs[("q/A", "ml.p4d.24xlarge")] == "30.00 → 30.00 (±0)"
    data = json.loads(invoke("diff", str(base), str(head), "--scenario", str(files["scenario"]), "--format",
                             "json").stdout)
    assert data["impact"]["cost_unit"] == "instance-hours"
    assert {(r["share"], r["instance_type"]): r["cost_after"] for r in data["impact"]["shares"]}[
        ("q/B", "ml.g5.xlarge")] == 0


def test_sweep_ranks_by_a_shares_cost(files, tmp_path):
    """B's g5 limit 1 or 2 under the limit convention: B pays (3 h x limit - 2 lent) x 2 $ + 30 $ for p4d."""
    out = invoke("sweep", str(files["scenario"]), "--vary", "q/B.capacity.ml.g5.xlarge=1,2", "--minimize",
                 "share(q/B).cost", "--prices", str(files["prices"]), "--chargeback", "limit", "--workers", "1",
                 "--quiet")
    assert out.exit_code == 0, out.output
    assert "note: cost metrics are in USD (limit chargeback convention)" in out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith(("│ 1 ", "│ 2 "))]
    assert [[cell.strip() for cell in row.split("│")[2:4]] for row in rows] == [["1", "32.00"], ["2", "38.00"]]
    assert "share(q/B).cost (USD)" in out.stdout  # the objective's column says its currency
    unpriced = invoke("sweep", str(files["scenario"]), "--vary", "q/B.capacity.ml.g5.xlarge=1,2", "--minimize",
                      "idle_cost", "--workers", "1", "--quiet")
    assert unpriced.exit_code == 0, unpriced.output
    assert "note: cost metrics are in instance-hours (all types alike)" in unpriced.stderr


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
            "return Array.from(document.querySelectorAll('#cost-chargeback tbody tr'))"
            ".map(r => Array.from(r.cells).map(c => c.textContent))")
        assert rows == [["q/A", "all", "42.00", "0.00", "42.00"], ["q/B", "all", "10.00", "4.00", "6.00"]]
        flows = browser.execute_script("return document.querySelectorAll('#cost-flows tbody tr').length")
        assert flows == 1
        assert remote == [] and [url for url in ours if not url.startswith(("file:", "data:"))] == []
        assert browser.get_log("browser") == []


def test_a_resumed_sweep_prices_the_runs_read_back_from_its_dataset(files, tmp_path):
    """The ledger travels in the Parquet dataset: a resumed sweep ranks by cost without running anything again."""
    args = ["sweep", str(files["scenario"]), "--vary", "q/B.capacity.ml.g5.xlarge=1,2", "--minimize",
            "share(q/B).cost", "--prices", str(files["prices"]), "--chargeback", "limit", "--workers", "1",
            "--quiet", "--out", str(tmp_path / "runs")]
    first = invoke(*args)
    assert first.exit_code == 0, first.output
    again = invoke(*args, "--resume")
    assert again.exit_code == 0, again.output
    assert again.stdout == first.stdout


def test_tune_minimises_idle_cost(files):
    """A smaller environment leaves less idle: tune picks g5 capacity 3 (the limits' sum) over 4."""
    out = invoke("tune", str(files["scenario"]), "--vary", "env.capacity.ml.g5.xlarge=3,4", "--minimize",
                 "idle_cost", "--prices", str(files["prices"]), "--budget", "2", "--workers", "1", "--quiet",
                 "--format", "json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["recommended"]["values"] == {"env.capacity.ml.g5.xlarge": 3}


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


def test_sweep_json_and_csv_carry_each_runs_cost_as_computed_by_hand(files):
    """B's g5 limit 1 or 2 changes who pays (B's lent credit), not what the cluster costs (84 $, 32 $ idle)."""
    args = ("sweep", str(files["scenario"]), "--vary", "q/B.capacity.ml.g5.xlarge=1,2", "--prices",
            str(files["prices"]), "--workers", "1", "--quiet")
    runs = json.loads(invoke(*args, "--format", "json").stdout)["runs"]
    assert [(r["costs"]["unit"], r["costs"]["total"], r["costs"]["idle"]) for r in runs] == [("USD", 84, 32)] * 2
    assert {c["share"]: c["net"] for c in runs[0]["costs"]["chargeback"]} == {"q/A": 42, "q/B": 6}
    rows = list(csv.DictReader(io.StringIO(invoke(*args, "--format", "csv").stdout)))
    first = rows[0]
    assert (first["cost_unit"], float(first["cost"]), float(first["idle_cost"]), float(first["share(q/A).cost"])) == (
        "USD", 84, 32, 42)
    assert float(rows[0]["utilisation(ml.g5.xlarge)"]) == runs[0]["summary"]["instance_types"]["ml.g5.xlarge"][
        "utilisation"]
    unpriced = list(csv.DictReader(io.StringIO(invoke(*args[:4], "--workers", "1", "--quiet", "--format",
                                                      "csv").stdout)))
    # without prices no all-types figure: instance-hours of g5 and p4d are not added up
    assert unpriced[0]["cost_unit"] == "instance-hours" and "cost" not in unpriced[0]
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
                   "share(q/B).cost", "--prices", str(card), "--workers", "1", "--quiet")
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
    # the hand-computed run with p4d free: capacity 12 g5-hours x 2 = 24 USD, of which 12 used
    assert (costs["total"], costs["used"], costs["idle"]) == (24, 12, 12)
    p4d = [s for s in costs["shares"] if s["instance_type"] == "ml.p4d.24xlarge"]
    assert [s["price_per_instance_hour"] for s in p4d] == [0, 0]
    assert all(set(s["cost"].values()) == {0} for s in p4d)  # zeros, not null, and no -0.0
    assert [(c["share"], c["net"]) for c in costs["chargeback"]] == [("q/A", 12), ("q/B", -4)]
    assert costs["price_weighted_utilisation"] == 0.5  # the g5's own: p4d weighs nothing
    nothing = write_file("nothing.yaml", "currency: USD\nper_instance_hour: {ml.g5.xlarge: 0, ml.p4d.24xlarge: 0.0}\n")
    out = invoke("simulate", str(files["scenario"]), "--prices", str(nothing), "--format", "json")
    assert out.exit_code == 0, out.output
    costs = json.loads(out.stdout)["costs"]
    assert costs["total"] == 0 and costs["price_weighted_utilisation"] is None  # no share of a cost of 0
    text = invoke("simulate", str(files["scenario"]), "--prices", str(nothing)).stdout
    assert "Cost over the run: 0.00 USD of capacity" in text and "price-weighted" not in text


def test_a_type_a_sweep_adds_needs_a_price_and_a_rate_card_may_hold_it(files, write_file):
    """``--vary env.capacity.ml.p5.48xlarge=...`` gives the candidates a type the topology lacks: the prices file
    must price it (one line naming the --vary, exit 2, never a KeyError), and a rate card that does is used."""
    args = ["sweep", str(files["scenario"]), "--vary", "env.capacity.ml.p5.48xlarge=1,2", "--minimize", "cost",
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
    # the run lasts 3 h: one p5 more adds 3 h x 100 USD of capacity to the 84 USD of the hand-computed case
    assert [[cell.strip() for cell in row.split("│")[2:4]] for row in rows] == [["1", "384.00"], ["2", "684.00"]]


def test_used_cost_is_what_jobs_ran_on_and_a_total_cost_objective_says_what_it_measures(files):
    args = ("sweep", str(files["scenario"]), "--vary", "q/B.capacity.ml.g5.xlarge=1,2", "--prices",
            str(files["prices"]), "--workers", "1", "--quiet")
    used = invoke(*args, "--minimize", "used_cost")
    assert used.exit_code == 0, used.output
    assert "note: cost metrics are in USD" in used.stderr and "until its last job ends" not in used.stderr
    assert "used_cost (USD)" in used.stdout and "52.00" in used.stdout  # the hand-computed own use: 52 USD
    total = invoke(*args, "--minimize", "cost")
    assert "note: cost is the capacity over each candidate's whole run, until its last job ends" in total.stderr
