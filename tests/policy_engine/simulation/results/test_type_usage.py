"""Capacity per instance type, never summed across types: JSON keyed by type, text, markdown, parallel merges."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from policy_engine.simulation.results.type_usage import from_summary, weighted_utilisation
from policy_engine.simulation.scenarios.workload import load_scenario
from policy_engine.sweep.executor import InProcess
from policy_engine.sweep.run_record import RunRecord
from policy_engine.sweep.samples import mean_record
from policy_engine.sweep.split import simulate_parallel, split
from tests.cli import invoke
from tests.gfm import tables

P4, G5 = "ml.p4d.24xlarge", "ml.g5.12xlarge"

#: A borrows B's two idle p4d instances for an hour; B runs two g5 instances for two hours; the run ends at 7200 s.
TWO_TYPES = {
    "topology": {
        "service_environments": [{"name": "env", "capacity": {P4: 4, G5: 8}}],
        "job_queues": [{"name": "q", "service_environment": "env", "shares": [
            {"name": "A", "capacity": {P4: 2, G5: 4}, "strategy": "LEND_AND_BORROW", "borrow_limit": 100},
            {"name": "B", "capacity": {P4: 2, G5: 4}, "strategy": "LEND"}]}]},
    "jobs": [
        {"name": "a1", "share": "A", "instance_type": P4, "instances": 4, "submit_at": 0, "duration": 3600},
        {"name": "b1", "share": "B", "instance_type": G5, "instances": 2, "submit_at": 0, "duration": 7200}],
}


def write_two_types(directory: Path) -> Path:
    """``TWO_TYPES`` as a scenario file in ``directory``."""
    path = directory / "two-types.yaml"
    path.write_text(yaml.safe_dump(TWO_TYPES, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture
def two_types(tmp_path: Path) -> Path:
    return write_two_types(tmp_path)


def test_json_gives_each_instance_type_its_own_figures(two_types: Path):
    result = invoke("simulate", str(two_types), "--format", "json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["summary"]
    # p4d: 4 instances x 2 h = 8 instance-hours; a1 used 4 for 1 h, 2 of them borrowed from B's idle own 2
    # g5: 8 x 2 h = 16; b1 used 2 for 2 h, within B's own limit
    assert summary["instance_types"] == {
        P4: {"instances": 4, "jobs": 1, "utilisation": 0.5, "capacity_instance_hours": 8, "used_instance_hours": 4,
             "idle_instance_hours": 4, "borrowed_instance_hours": 2, "lent_instance_hours": 2, "preemptions": 0,
             "instance_hours_lost": 0},
        G5: {"instances": 8, "jobs": 1, "utilisation": 0.25, "capacity_instance_hours": 16, "used_instance_hours": 4,
             "idle_instance_hours": 12, "borrowed_instance_hours": 0, "lent_instance_hours": 0, "preemptions": 0,
             "instance_hours_lost": 0}}
    # kept for compatibility: every instance-hour weighs the same, 8 of 24
    assert summary["cluster_utilisation"] == pytest.approx(8 / 24, abs=1e-6)


def test_the_only_all_types_figure_is_weighted_by_a_price_per_type(two_types: Path):
    summary = json.loads(invoke("simulate", str(two_types), "--format", "json").stdout)["summary"]
    figures = from_summary(summary)
    # p4d at 4 a hour, g5 at 1: (4 x 4 + 1 x 4) / (4 x 8 + 1 x 16)
    assert weighted_utilisation(figures, {P4: 4.0, G5: 1.0}) == pytest.approx(20 / 48)
    assert weighted_utilisation(figures, {P4: 4.0}) is None  # a type without a price: no all-types figure
    # a free type (rate 0: already paid for) weighs nothing: the figure is the other type's own
    assert weighted_utilisation(figures, {P4: 0.0, G5: 1.0}) == pytest.approx(4 / 16)
    # every type free: the capacity is worth nothing, so there is no share of it to give (not 0 %)
    assert weighted_utilisation(figures, {P4: 0.0, G5: 0.0}) is None


def test_text_and_markdown_show_one_row_per_type_and_no_cluster_figure(two_types: Path):
    text = invoke("simulate", str(two_types)).stdout
    rows = [line for line in text.splitlines() if line.startswith("│ ml.")]
    types_table = text.split("Instance types")[1]
    assert "│ ml.p4d.24xlarge │         4 │    1 │       50.0% │        4.00 │        4.00 │" in types_table, text
    assert any(line.startswith(f"│ {G5} ") and "25.0%" in line for line in rows)
    assert f"utilisation {P4} 50.0%, {G5} 25.0%" in text and "cluster utilisation" not in text
    assert f"preemption(s); instance-hours lost {P4} 0.00, {G5} 0.00;" in text  # per type, never one total
    markdown = invoke("simulate", str(two_types), "--format", "markdown").stdout
    assert "instance-hours lost" not in next(t for t in tables(markdown) if t[0][0] == "jobs")[0]
    per_type = next(t for t in tables(markdown) if t[0][0] == "instance type")
    assert [row[:4] for row in per_type[1:]] == [[P4, "4", "1", "50.0%"], [G5, "8", "1", "25.0%"]]
    assert per_type[0][4:8] == ["used inst-h", "idle inst-h", "borrowed inst-h", "lent inst-h"]
    assert "cluster utilisation" not in markdown


def test_a_run_split_over_workers_gives_the_same_figures_per_type(tmp_path: Path):
    data = json.loads(json.dumps(TWO_TYPES))
    data["topology"]["service_environments"].append({"name": "other", "capacity": {G5: 2}})
    data["topology"]["job_queues"].append({"name": "r", "service_environment": "other", "shares": [
        {"name": "C", "capacity": {G5: 2}, "strategy": "RESERVE"}]})
    data["jobs"].append({"name": "c1", "share": "r/C", "instance_type": G5, "instances": 1, "submit_at": 600,
                         "duration": 600})
    path = tmp_path / "two-environments.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    sequential = json.loads(invoke("simulate", str(path), "--format", "json").stdout)["summary"]
    scenario = load_scenario(str(path))
    assert len(split(scenario) or ()) == 2  # one part per environment: the merge is what is tested
    with InProcess() as executor:
        merged = simulate_parallel(scenario, executor).summary
    assert json.loads(json.dumps(merged["instance_types"])) == sequential["instance_types"]
    # g5 of both environments side by side in one row: 10 instances for 2 h, 4 + 1/6 instance-hours used
    assert sequential["instance_types"][G5]["instances"] == 10
    assert sequential["instance_types"][G5]["used_instance_hours"] == pytest.approx(4 + 1 / 6, abs=1e-6)


def test_workload_samples_average_each_types_figures():
    runs = [RunRecord(index=0, values={},
                      summary={"jobs": jobs, "instance_types": {P4: {"utilisation": u, "jobs": jobs}}})
            for jobs, u in ((2, 0.5), (4, 0.25))]
    mean = mean_record(runs)
    assert mean.summary["instance_types"] == {P4: {"utilisation": 0.375, "jobs": 3}}
    assert [sample.summary for sample in mean.samples] == [run.summary for run in runs]  # each sample's own


def test_the_reports_hook_for_prices_shows_an_all_types_figure_only_when_every_type_has_one(two_types: Path):
    from policy_engine.reports.tables.type_tables import all_types_text, utilisation_phrase

    summary = json.loads(invoke("simulate", str(two_types), "--format", "json").stdout)["summary"]
    assert all_types_text(summary) == "-" and all_types_text(summary, {P4: 4.0}) == "-"
    assert utilisation_phrase(summary, {P4: 4.0, G5: 1.0}).endswith("; all types 41.7% (price-weighted)")
    assert "all types" not in utilisation_phrase(summary)
