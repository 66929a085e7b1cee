"""``--samples N`` on ``simulate``, ``compare`` and ``diff --scenario`` (and ``tune``'s alias): N workloads by the one
resampler, each per-share figure's median and p10-p90, differences paired and marked significant, ``--samples 1``
as before, bad values refused in one line; a distributed run on a real Dask cluster started here."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from policy_engine.cli import main
from tests import gfm
from tests.policy_engine.cli.commands.test_compare import DESIGN_A, DESIGN_B

DAY = 86_400


def week_jobs(seed: int = 5, days: int = 6) -> str:
    """A few days of jobs whose load differs day by day (so day-block samples differ)."""
    rng = random.Random(seed)
    rows = []
    for day in range(days):
        for index in range(rng.randrange(3, 16)):
            share = rng.choice(("vision", "language", "speech"))
            kind = "ml.g5.12xlarge" if share == "speech" else "ml.p4d.24xlarge"
            rows.append(f"  - {{name: d{day}j{index}, share: {share}, instance_type: {kind}, "
                        f"instances: {rng.choice((1, 2))}, submit_at: {day * DAY + rng.randrange(0, 20_000)}, "
                        f"duration: {rng.randrange(3_600, 30_000)}}}")
    return "jobs:\n" + "\n".join(rows) + "\n"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {"A": tmp_path / "A.yaml", "B": tmp_path / "B.yaml", "scenario": tmp_path / "week.yaml"}
    out["A"].write_text(DESIGN_A)
    out["B"].write_text(DESIGN_B)
    out["scenario"].write_text("topology: A.yaml\n" + week_jobs())
    return out


def run(*args: object) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [*map(str, args)])
    return result.exit_code, result.stdout, result.stderr
