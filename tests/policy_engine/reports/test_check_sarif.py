"""SARIF specifics not covered by the command tests: Python topologies without lines, rule metadata."""

from __future__ import annotations

from policy_engine.checks import check_topology
from policy_engine.reports import check_sarif
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
