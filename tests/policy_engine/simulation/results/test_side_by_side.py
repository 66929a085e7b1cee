"""The before/after table model: rows lined up across runs (renames, shares only one run has), every
difference a number, and the cells every format shows."""

from __future__ import annotations

from policy_engine.reports.tables import share_comparison as sc
from policy_engine.simulation.results.metrics import ShareMetrics
from policy_engine.simulation.results.side_by_side import OWN_UTILISATION, WAIT_P95, from_metrics


def metrics(share: str, wait_p95: float, utilisation: float, instance_type: str = "ml.g5.xlarge") -> ShareMetrics:
    return ShareMetrics(share, instance_type, "LEND", 2, 0, 3, utilisation, 0.0, 0.0, 0.0, 0.0, wait_p95, wait_p95,
                        0, 0.0)


def test_rows_line_up_by_the_first_runs_names_and_a_missing_share_counts_as_zero():
    first = [metrics("q/A", 3600, 0.5), metrics("q/B", 60, 0.2)]
    second = [metrics("q/A2", 1800, 0.75), metrics("q/C", 10, 0.1)]
    table = from_metrics(("A", "B"), [first, second], [{}, {"q/A": "q/A2"}])
    rows = {row.share: row for row in table.rows}
    assert list(rows) == ["q/A", "q/B", "q/C"]
    assert rows["q/A"].difference(1, WAIT_P95) == -1800 and rows["q/A"].names == ("q/A", "q/A2")
    assert rows["q/B"].present == (True, False) and rows["q/B"].difference(1, WAIT_P95) == -60
    assert rows["q/C"].present == (False, True)
    cells = dict(zip(sc.share_header(table), sc.share_rows(table)[0], strict=True))
    assert cells["share"] == "q/A (B: q/A2)"
    assert cells["wait p95"] == "1h 00m → 30m 00s (−30m 00s)"
    assert cells["own utilisation (%)"] == "50.0% → 75.0% (+25.0 points)"
    assert sc.share_rows(table)[1][sc.share_header(table).index("wait p95")] == "1m 00s → – (−1m 00s)"
    data = table.to_json()
    assert data[1]["runs"]["B"] is None and data[1]["differences"]["B"]["wait_p95"] == -60
    assert data[0]["differences"]["B"][OWN_UTILISATION.key] == 0.25


def test_equal_runs_differ_by_zero_and_say_so():
    run = [metrics("q/A", 3600, 0.5)]
    table = from_metrics(("A", "A#2"), [run, run])
    assert not table.changed(table.rows[0])
    assert all(cell.endswith("(±0)") for cell in sc.share_rows(table)[0][2:])
