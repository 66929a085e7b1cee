"""The JSON report: every finding field and the summaries, as plain data."""

from __future__ import annotations

import json

from policy_engine.analysis.checks import check_topology
from policy_engine.foundation.findings import finding_to_dict
from policy_engine.reports.check import json as check_json


def test_round_trips_through_json(example):
    report = check_topology(example)
    data = json.loads(check_json.render(report, source="example.yaml"))
    assert data["source"] == "example.yaml" and data["ok"] is True and data["warnings"] == 1
    assert data["findings"] == [finding_to_dict(f) for f in report.findings]
    assert data["summaries"]["training/QS1"]["max_burst"] == {"ml.g5.xlarge": 2}
