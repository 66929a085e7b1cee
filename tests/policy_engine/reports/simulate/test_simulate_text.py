"""``simulate``'s text report: tables that never cut a number."""

from __future__ import annotations

from pathlib import Path

NARROW_SCENARIO = """\
topology:
  service_environments:
    - name: gpu-env
      capacity: {ml.p4d.24xlarge: 1}
  job_queues:
    - name: training
      service_environment: gpu-env
      shares:
        - {name: research-team, capacity: {ml.p4d.24xlarge: 1}, strategy: LEND_AND_BORROW}
jobs:
  - {name: first, share: research-team, instances: 1, submit_at: 0, duration: 3900.125}
  - {name: second, share: research-team, instances: 1, submit_at: 0, duration: 5}
"""


def test_shares_table_on_an_80_column_terminal_never_cuts_a_number(tmp_path: Path):
    import io

    from rich.console import Console

    from policy_engine.reports.simulate.text import print_tables
    from policy_engine.simulation import Engine, load_scenario
    from policy_engine.simulation.results.records import build_result

    path = tmp_path / "narrow.yaml"
    path.write_text(NARROW_SCENARIO, encoding="utf-8")
    scenario = load_scenario(str(path))
    engine = Engine(scenario.topology, scenario.jobs, scenario.updates, scenario.settings)
    engine.run(None, None)
    result = build_result(engine)
    buffer = io.StringIO()
    print_tables(result, Console(file=buffer, width=80, color_system=None))
    shares = buffer.getvalue().split("Shares (time-weighted over the run)")[1]
    assert all(len(line) <= 80 for line in shares.splitlines())
    assert "…" not in shares
    (row,) = result.shares
    # second waited 3900.125 s for first: read as a duration, never cut
    for number in ("1h 05m", f"{row.own_utilisation:.1%}", f"{row.instance_hours_lost:.2f}"):
        assert number in shares, number
