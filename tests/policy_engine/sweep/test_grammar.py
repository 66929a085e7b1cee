"""The ``--vary`` grammar and the grid: typed values, ranges, and one clear line (exit 2) per mistake."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli.app import main
from policy_engine.inputs.examples import example_topology
from policy_engine.sweep.grammar import VaryError, parse_vary
from policy_engine.sweep.grid import expand, grid_size

SCENARIO = str((Path(__file__).parents[3] / "scenarios" / "walkthrough.yaml").resolve())


def test_paths_resolve_and_values_are_typed():
    axes = parse_vary(["QS1.borrow_limit=0,100,-1", "training/QS2.capacity.ml.g5.xlarge=1..3",
                       "training/QS1.strategy=LEND,LEND_AND_BORROW", "settings.backfill=false,true",
                       "settings.victim_policy=fewest-instances", "workload.scale=0.8..1.2:0.2",
                       "workload.duration_scale=1,1.5", "training/QS3.in_share_preemption=true",
                       "gpu-env.capacity.ml.g5.xlarge=3,4"], example_topology())
    by_path = {axis.path: axis for axis in axes}
    assert by_path["training/QS1.borrow_limit"].values == (0, 100, -1)  # SHARE alone resolves to QUEUE/SHARE
    qs2 = by_path["training/QS2.capacity.ml.g5.xlarge"]
    assert (qs2.field, qs2.instance_type, qs2.values) == ("capacity", "ml.g5.xlarge", (1, 2, 3))
    assert by_path["settings.backfill"].values == (False, True)
    assert by_path["workload.scale"].values == (0.8, 1.0, 1.2)
    assert by_path["workload.duration_scale"].values == (1.0, 1.5)
    assert by_path["gpu-env.capacity.ml.g5.xlarge"].kind == "environment"


@pytest.mark.parametrize(("argument", "expected"), [
    ("training/QS9.borrow_limit=0", "no quota share or service environment 'training/QS9'"),
    ("QS1.borow_limit=0", "did you mean 'borrow_limit'?"),
    ("QS1.borrow_limit=abc", "'abc' is not an integer"),
    ("QS1.borrow_limit=-2", "-2 is below the minimum -1"),
    ("QS1.borrow_limit=5..1", "is empty: 1 is below 5"),
    ("QS1.strategy=LEND..BORROW", "range 'LEND..BORROW' on a field that takes one of"),
    ("QS1.strategy=LEDN", "did you mean 'LEND'?"),
    ("QS1.in_share_preemption=yes", "'yes' is not true or false"),
    ("QS1.capacity=1", "capacity needs the instance type"),
    ("QS1.capacity.=1", "capacity needs the instance type after 'capacity.'"),
    ("QS1.strategy=lend", "did you mean 'LEND'?"),
    ("QS1.borrow_limit=1..", "range '1..' needs both ends: LOW..HIGH"),
    ("QS1.borrow_limit=..5", "range '..5' needs both ends: LOW..HIGH"),
    ("workload.scale=1e999", "1e999 is too large to be a number"),
    ("QS1.borrow_limit=", "no values"),
    ("QS1.borrow_limit=1,,2", "empty value between commas"),
    ("QS1.borrow_limit=1,1", "value 1 is listed twice"),
    ("settings.victim_policy=oldest", "is not one of"),
    ("settings.color=red", "settings has no field 'color'"),
    ("workload.scale=0", "must be >= 1e-06 and <= 1e+06"),
    ("workload.scale=0.5..1", "a range of decimals needs a step"),
    ("QS1.borrow_limit", "expected PATH=VALUES"),
    ("gpu-env.strategy=LEND", "service environment gpu-env has no field 'strategy'"),
    ("QS1.capacity.ml.p4d.24xlarg=1..3", "ml.p4d.24xlarg is not a SageMaker training instance type; did you mean "
                                         "'ml.p4d.24xlarge'?"),
    ("gpu-env.capacity.ml.g5.xlrage=2", "ml.g5.xlrage is not a SageMaker training instance type"),
])
def test_each_mistake_is_one_line_naming_the_argument_and_exit_2(argument, expected):
    result = CliRunner().invoke(main, ["sweep", SCENARIO, "--vary", argument, "--workers", "1"])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: --vary {argument!r}: ") and expected in lines[0], lines[0]
    assert "Traceback" not in result.output


def test_every_problem_is_reported_at_once():
    with pytest.raises(VaryError) as raised:
        parse_vary(["QS1.borrow_limit=x", "QS9.strategy=LEND", "QS3.state=ENABLED"], example_topology())
    assert len(raised.value.problems) == 2  # the third is fine on its own
    with pytest.raises(VaryError, match="varied twice"):
        parse_vary(["QS1.borrow_limit=0", "training/QS1.borrow_limit=100"], example_topology())


def test_full_grid_and_seeded_sample():
    axes = parse_vary(["QS1.borrow_limit=0..4", "QS2.strategy=LEND,RESERVE", "settings.backfill=false,true"],
                      example_topology())
    grid = list(expand(axes))
    assert grid_size(axes) == len(grid) == 20
    assert len({candidate.key for candidate in grid}) == 20
    assert grid[1].values == {"training/QS1.borrow_limit": 0, "training/QS2.strategy": "LEND",
                              "settings.backfill": True}  # the last field varies fastest
    sample = list(expand(axes, sample=7, seed=3))
    assert len(sample) == 7 and sample == list(expand(axes, sample=7, seed=3))
    assert all(grid[c.index] == c for c in sample)  # each drawn point is the grid point of its index
    assert [c.index for c in sample] != [c.index for c in expand(axes, sample=7, seed=4)]
