"""Costs as a user asks for them: ``simulate --prices/--costs/--chargeback`` in every format and the HTML page,
the hostile prices files (exit 2, one line each), ``sweep``'s ``share(X).cost`` and ``diff --scenario``'s column.

The scenario is the hand-computed one of ``tests/policy_engine/simulation/test_costs.py``.
"""

from __future__ import annotations

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
    "prices-missing-type.yaml": ["the topology has no ml.p4d.24xlarge", "no price for ml.g5.xlarge"],
    "prices-nan.yaml": [".nan is not a finite number"],
    "prices-negative.yaml": ["must be above 0, got -1.5"],
    "prices-string-rate.yaml": ["input should be a valid number, got '1.2'"],
    "prices-typo-key.yaml": ["unknown key 'per_instance_hours' (did you mean 'per_instance_hour'?)"],
    "prices-unknown-type.yaml": ["the topology has no ml.g5.xlrage", "did you mean 'ml.g5.xlarge'?"],
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
    if name != "prices-unknown-type.yaml":
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
    assert [[cell.strip() for cell in row.split("│")[2:4]] for row in rows] == [["1", "32"], ["2", "38"]]
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
