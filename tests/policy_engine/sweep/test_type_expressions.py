"""``utilisation(TYPE)`` and the other per-instance-type figures in sweep and tune expressions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from policy_engine.foundation.units import Unit
from policy_engine.inputs.loading import topology_from_data
from policy_engine.sweep.expressions import ExpressionError, parse_constraint, parse_expression
from policy_engine.sweep.run_record import RunRecord
from tests.cli import invoke
from tests.policy_engine.simulation.results.test_type_usage import G5, P4, TWO_TYPES, write_two_types

VARY = ("--vary", "q/A.borrow_limit=0,100")


@pytest.fixture
def two_types(tmp_path: Path) -> Path:
    return write_two_types(tmp_path)


def test_a_sweep_ranks_by_one_types_utilisation(two_types: Path):
    result = invoke("sweep", str(two_types), *VARY, "--maximize", f"utilisation({P4})", "--workers", "1",
                    "--format", "json", "--quiet")
    assert result.exit_code == 0, result.output
    runs = {run["values"]["q/A.borrow_limit"]: run for run in json.loads(result.stdout)["runs"]}
    # without borrowing A's 4-instance p4d job never fits its 2 (the job fails): p4d idles; with +100 % it borrows
    assert runs[0]["summary"]["instance_types"][P4]["utilisation"] == 0
    assert runs[100]["summary"]["instance_types"][P4]["utilisation"] == 0.5
    assert runs[0]["summary"]["instance_types"][G5]["utilisation"] == 0.25  # the other type is untouched
    text = invoke("sweep", str(two_types), *VARY, "--maximize", f"utilisation({P4})", "--workers", "1", "--quiet")
    best = [line for line in text.stdout.splitlines() if line.startswith("│ 1 ")]
    assert best and "│ 100 " in best[0] and "50.0%" in best[0], text.stdout  # borrow_limit 100 ranks first
    assert f"util {P4}" in text.stdout and f"util {G5}" in text.stdout and "cluster util" not in text.stdout


def test_per_type_and_per_share_type_figures_read_the_run(two_types: Path):
    topology = topology_from_data(TWO_TYPES["topology"])
    simulated = json.loads(invoke("simulate", str(two_types), "--format", "json").stdout)
    record = RunRecord(index=0, values={}, summary=simulated["summary"], shares=tuple(simulated["shares"]))
    assert parse_expression(f"utilisation({P4})", topology)(record) == 0.5
    assert parse_expression(f"idle_instance_hours({G5})", topology)(record) == 12
    # A's own 2 p4d instances were busy for 1 h of 2; B lent its 2 for that hour
    assert parse_expression(f"share(A).utilisation({P4})", topology)(record) == 0.5
    assert parse_expression(f"share(q/B).mean_lent({P4})", topology)(record) == 1.0
    assert parse_expression(f"share(A).utilisation({G5})", topology)(record) == 0
    assert parse_constraint(f"utilisation({G5}) >= 0.2", topology).holds(record)
    assert parse_expression(f"utilisation({P4})", topology).unit is Unit.FRACTION
    assert parse_expression("max(wait_p95)", topology).unit is Unit.SECONDS
    assert parse_expression("cluster_utilisation", topology)(record) == pytest.approx(8 / 24, abs=1e-6)


@pytest.mark.parametrize(("expression", "message"), [
    ("utilisation(ml.p5.48xlarge)", "'utilisation(ml.p5.48xlarge)': 'ml.p5.48xlarge' is not an instance type of "
                                    f"the topology (known: {P4}, {G5})"),
    ("utilisation(ml.p4d.24xlarg)", f"did you mean '{P4}'?"),
    ("share(A).utilisation(ml.x)", "'ml.x' is not an instance type of the topology"),
    (f"share(A).speed({P4})", "'speed' is not a per-share metric"),
])
def test_an_unknown_instance_type_is_one_line_and_exit_2(two_types: Path, expression: str, message: str):
    result = invoke("sweep", str(two_types), *VARY, "--maximize", expression, "--workers", "1", "--quiet")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    with pytest.raises(ExpressionError):
        parse_expression(expression, topology_from_data(TWO_TYPES["topology"]))
