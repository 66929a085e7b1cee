"""``settings.plan_dispatch``: what Batch does with a plan job before its window, a value from the file's text."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.simulation.scenarios.workload import load_scenario
from policy_engine.simulation.settings import PlanDispatch, SimulationSettings

TOPOLOGY = Path(__file__).parents[3] / "topologies" / "example.yaml"


def test_dispatch_is_the_default_and_hold_the_alternative(tmp_path):
    assert SimulationSettings().plan_dispatch is PlanDispatch.DISPATCH
    assert SimulationSettings(plan_dispatch="hold").plan_dispatch is PlanDispatch.HOLD  # type: ignore[arg-type]
    (tmp_path / "s.yaml").write_text(f"topology: {TOPOLOGY.as_posix()}\nsettings: {{plan_dispatch: hold}}\njobs: []\n",
                                     encoding="utf-8")
    assert load_scenario(tmp_path / "s.yaml").settings.plan_dispatch is PlanDispatch.HOLD
    with pytest.raises(ValueError, match=r"unknown plan_dispatch 'later' \(known: dispatch, hold\)"):
        SimulationSettings(plan_dispatch="later")  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["later", "[a, b]", "true"])
def test_an_unknown_plan_dispatch_is_one_line(tmp_path, value):
    (tmp_path / "s.yaml").write_text(f"topology: {TOPOLOGY.as_posix()}\nsettings: {{plan_dispatch: {value}}}\n"
                                     "jobs: []\n", encoding="utf-8")
    out = CliRunner().invoke(main, ["simulate", str(tmp_path / "s.yaml")])
    assert out.exit_code == 2
    (line,) = out.output.splitlines()
    assert line.startswith(f"error: {tmp_path / 's.yaml'}:2: settings.plan_dispatch: unknown plan_dispatch ")
    assert line.endswith("(known: dispatch, hold)")
