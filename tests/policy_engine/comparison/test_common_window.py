"""Runs that are compared are measured over one window, from 0 to the latest end among them.

Design B gives share ``a`` a second p4d instance, so B's run ends ten hours sooner; g5 runs the same jobs the
same way in both. Over each run's own end, B's g5 utilisation, own utilisation and mean borrowed/lent came out
higher; over the common window they are exactly equal, in ``compare`` (with and without ``--samples``),
``diff --scenario`` and ``sweep``.
"""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from policy_engine.cli.app import main

P4, G5 = "ml.p4d.24xlarge", "ml.g5.xlarge"
HOUR = 3600
G5_FIGURES = ("utilisation", "capacity_instance_hours", "used_instance_hours", "idle_instance_hours",
              "borrowed_instance_hours", "lent_instance_hours")
SHARE_FIGURES = ("own_utilisation", "mean_own", "mean_borrowed", "mean_lent")


def _design(p4d_limit: int) -> dict:
    return {
        "service_environments": [{"name": "gpu", "capacity": {P4: 2, G5: 3}}],
        "job_queues": [{"name": "q", "service_environment": "gpu", "shares": [
            {"name": "a", "capacity": {P4: p4d_limit}, "strategy": "RESERVE"},
            {"name": "b", "capacity": {G5: 2}, "strategy": "LEND"},
            {"name": "c", "capacity": {G5: 1}, "strategy": "LEND_AND_BORROW", "borrow_limit": -1}]}],
    }


def _jobs() -> list[dict]:
    p4d = [{"name": f"p{i}", "share": "a", "instance_type": P4, "instances": 1, "submit_at": 0,
            "duration": 5 * HOUR} for i in range(4)]
    g5 = [{"name": f"g{i}", "share": "c" if i % 2 else "b", "instance_type": G5, "instances": 1 + i % 2,
           "submit_at": i * 600, "duration": HOUR * (1 + i % 3)} for i in range(6)]
    return p4d + g5


def _files(write_file, **scenario: object):
    base = write_file("base.yaml", yaml.safe_dump(_design(1)))
    head = write_file("head.yaml", yaml.safe_dump(_design(2)))
    month = write_file("month.yaml", yaml.safe_dump({"topology": "base.yaml", "jobs": _jobs(), **scenario}))
    return base, head, month


def _invoke(args: list[str]) -> dict:
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def test_compare_untouched_type_exactly_equal(write_file):
    base, head, month = _files(write_file)
    out = _invoke(["compare", str(month), "--topology", str(base), "--topology", str(head), "--workers", "1",
                   "--format", "json"])
    first, second = out["runs"]
    assert first["time"] == 20 * HOUR and second["time"] == 10 * HOUR  # B ends sooner
    assert out["window_seconds"] == 20 * HOUR
    assert first["summary"]["window_seconds"] == second["summary"]["window_seconds"] == 20 * HOUR
    assert first["utilisation"][G5] == second["utilisation"][G5]
    for figure in G5_FIGURES:
        assert first["summary"]["instance_types"][G5][figure] == second["summary"]["instance_types"][G5][figure]
    # p4d: 20 instance-hours of 2 instances over the 20-hour window in both designs
    assert first["utilisation"][P4] == second["utilisation"][P4] == 0.5
    rows = {(row["share"], row["instance_type"]): row["runs"] for row in out["shares"]}
    for (name, instance_type), runs in rows.items():
        if instance_type == G5:
            one, two = runs.values()
            assert one["own_utilisation"] == two["own_utilisation"], name
    text = CliRunner().invoke(main, ["compare", str(month), "--topology", str(base), "--topology", str(head),
                                     "--workers", "1", "--format", "text"], env={"COLUMNS": "400"})
    assert "time-weighted over 0 to 20h 00m, the longest run" in " ".join(text.output.split())


def test_compare_with_samples_untouched_type_exactly_equal(write_file):
    base, head, month = _files(write_file)
    result = CliRunner().invoke(main, ["compare", str(month), "--topology", str(base), "--topology", str(head),
                                       "--workers", "1", "--samples", "3", "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    out = json.loads(result.output)
    types = {row["instance_type"]: row for row in out["instance_types"]}
    cells = list(types[G5]["runs"].values())
    assert cells[0]["utilisation"] == cells[1]["utilisation"]
    assert out["runs"][0]["utilisation"][G5] == out["runs"][1]["utilisation"][G5]


def test_diff_scenario_untouched_type_exactly_equal(write_file):
    base, head, month = _files(write_file)
    out = _invoke(["diff", str(base), str(head), "--scenario", str(month), "--at", "0", "--format", "json"])
    impact = out["impact"]
    rows = [row for row in impact["shares"] if row["instance_type"] == G5]
    assert rows
    for row in rows:
        assert row["own_utilisation_before"] == row["own_utilisation_after"], row["share"]
    (share_a,) = [row for row in impact["shares"] if row["instance_type"] == P4]
    assert share_a["own_utilisation_before"] == 1.0  # 20 instance-hours of a 1-instance limit over 20 h
    assert share_a["own_utilisation_after"] == 0.5  # of a 2-instance limit over the same 20 h
    assert any("time-weighted over 0 to 20h 00m, the longer replay" in note for note in impact["notes"])


def test_sweep_untouched_type_exactly_equal(write_file):
    _, _, month = _files(write_file)
    out = _invoke(["sweep", str(month), "--vary", f"q/a.capacity.{P4}=1,2", "--workers", "1", "--format", "json"])
    runs = out["runs"]
    assert [run["status"] for run in runs] == ["ok", "ok"]
    assert {run["summary"]["window_seconds"] for run in runs} == {20 * HOUR}
    first, second = (run["summary"]["instance_types"][G5] for run in runs)
    assert first == second
    shares = [[row for row in run["shares"] if row["instance_type"] == G5] for run in runs]
    for one, two in zip(*shares, strict=True):
        for figure in SHARE_FIGURES:
            assert one[figure] == two[figure], (one["share"], figure)


def test_sweep_text_says_the_window(write_file):
    _, _, month = _files(write_file)
    result = CliRunner().invoke(main, ["sweep", str(month), "--vary", f"q/a.capacity.{P4}=1,2", "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert ("util: time-weighted over 0 to 20h 00m, the longest run; 1 run(s) ended sooner, idle after their end "
            "counted as idle") in result.stdout
