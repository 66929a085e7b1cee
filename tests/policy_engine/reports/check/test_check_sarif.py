"""SARIF specifics not covered by the command tests: Python topologies without lines, rule metadata."""

from __future__ import annotations

import json

import pytest

from policy_engine.analysis.checks import check_topology
from policy_engine.foundation.diagnostics import Named, Problem
from policy_engine.inputs.loading import load_topology, read_data
from policy_engine.reports.check import sarif as check_sarif
from tests.builders import share, topology


def test_without_line_table_there_is_no_region():
    report = check_topology(topology(share("A", 1), environment=2))
    log = check_sarif.to_dict(report, uri="topology.py", topology=None)
    (result,) = log["runs"][0]["results"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical == {"artifactLocation": {"uri": "topology.py"}}
    assert result["locations"][0]["logicalLocations"] == [{"fullyQualifiedName": "service_environments[gpu-env]"}]


def test_driver_rule_names_are_identifiers():
    log = check_sarif.to_dict(check_topology(topology(share("A", 1))), uri="t.yaml")
    names = [rule["name"] for rule in log["runs"][0]["tool"]["driver"]["rules"]]
    assert all(name.isidentifier() and name[0].isupper() for name in names)
    assert "NoOversubscription" in names


ODD_NAMES = ["team.a", "t]b", "a/b", "x: y", "sp ace"]


@pytest.mark.parametrize("name", ODD_NAMES)
def test_a_finding_on_an_oddly_named_queue_points_at_that_queues_line(tmp_path, name):
    """Names AWS refuses (BQ101) still lead SARIF to their own line, whatever characters they hold."""
    path = tmp_path / "t.yaml"
    path.write_text(f"""\
service_environments:
  - name: env
    capacity: {{ml.g5.xlarge: 2}}
job_queues:
  - name: fine
    service_environment: env
    shares:
      - {{name: A, capacity: {{ml.g5.xlarge: 1}}, strategy: LEND}}
  - name: {json.dumps(name)}
    service_environment: env
    shares:
      - {{name: {json.dumps(name + "]s")}, capacity: {{ml.g5.xlarge: 1}}, strategy: LEND}}
""")
    loaded = load_topology(path)
    lines = read_data(path)[1]
    log = check_sarif.to_dict(check_topology(loaded), uri="t.yaml", topology=loaded, lines=lines)
    at = {(result["ruleId"], result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]):
          result["locations"][0]["physicalLocation"]["region"]["startLine"] for result in log["runs"][0]["results"]}
    assert at[("BQ101", f"job_queues[{name}]")] == 9
    assert at[("BQ101", f"{name}/{name}]s")] == 12


def test_load_problems_keep_their_line_without_parsing_text():
    problem = Problem("odd: name.yaml", 7, ("job_queues", Named(0, "a: b"), "priority"), "must be an integer")
    log = check_sarif.load_failure_to_dict([problem], uri="odd.yaml", source="odd: name.yaml")
    (result,) = log["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 7}
    assert result["message"]["text"] == "job_queues[a: b].priority: must be an integer"


def test_every_driver_rule_carries_its_help_link():
    """``helpUri``: the AWS page for the rules AWS documents, the catalogue entry for the project's own (and BQ000)."""
    from policy_engine.analysis.checks import check_topology
    from policy_engine.analysis.rules import all_rules
    from policy_engine.inputs.examples import example_topology
    from policy_engine.reports.check.sarif import LOAD_RULE, to_dict

    log = to_dict(check_topology(example_topology()), uri="t.yaml")
    driver = {rule["id"]: rule for rule in log["runs"][0]["tool"]["driver"]["rules"]}
    assert {rule_id: rule["helpUri"] for rule_id, rule in driver.items()} == {r.id: r.source_url for r in all_rules()}
    assert driver["BQ116"]["helpUri"] == "https://docs.aws.amazon.com/batch/latest/userguide/tag-restrictions.html"
    assert driver["BQ401"]["helpUri"] == "docs/rules.md#bq401" and LOAD_RULE["helpUri"] == "docs/rules.md#bq000"
