"""The borrow graph draws each training plan's windows beside the shares whose jobs use it: the shares the plan
lists (``shares:``, "the shares that use or own the plan") and those a guarantee names with ``during:``."""

from __future__ import annotations

import html
import shutil
from pathlib import Path

import pytest

from policy_engine.analysis.checks import check_topology
from policy_engine.foundation.model import Guarantee, PlanWindow, ReservedCapacity, TrainingPlan
from policy_engine.inputs.loading import load_topology
from policy_engine.reports.graph.borrow_graph import EdgeMode, build_dot, plan_id, write_svg
from tests.builders import share, topology

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "training_plans" / "topology.yaml"
P5 = "ml.p5.48xlarge"


def test_the_examples_plan_is_drawn_with_its_windows_beside_its_three_shares():
    loaded = load_topology(EXAMPLE)
    source = build_dot(loaded, check_topology(loaded), edge_mode=EdgeMode.POOL).source
    assert f'"{plan_id("p5-plan")}" [label="training plan p5-plan\n' in source
    assert "window 0: 4 x ml.p5.48xlarge, 2026-12-07T08:00:00Z → 2026-12-08T08:00:00Z (1d 0h)" in source
    assert "window 1: 8 x ml.p5.48xlarge, 2026-12-08T12:00:00Z → 2026-12-09T12:00:00Z (1d 0h)" in source
    for team in ("vision", "speech", "search"):
        assert f'"{plan_id("p5-plan")}" -> "training/{team}" [label="plan jobs (the plan\'s shares)"' in source


def test_a_guarantee_during_a_plan_window_puts_its_share_beside_the_plan_and_a_queue_filter_keeps_it_out():
    base = topology(share("A", 4, "RESERVE", instance_type=P5), share("B", 4, "RESERVE", instance_type=P5),
                    environment={P5: 8})
    plan = TrainingPlan(name="night", instance_type=P5,
                        reserved_capacities=(ReservedCapacity(instances=4, start=0, end=86400),))
    promised = Guarantee(share="B", during=PlanWindow("night", 0), min_capacity={P5: 4})
    with_plan = base.model_copy(update={"training_plans": (plan,), "guarantees": (promised,)})
    source = build_dot(with_plan, check_topology(with_plan)).source
    queue = with_plan.job_queues[0].name
    assert f'-> "{queue}/B" [label="plan jobs (a guarantee during the plan)"' in source
    assert f'-> "{queue}/A"' not in source.split(plan_id("night"), 1)[1].split("\n", 2)[-1]  # A is not a user
    assert "window 0: 4 x ml.p5.48xlarge, t=0.0 s → 86400.0 s" in source or "t=0 s → 86400 s" in source
    assert plan_id("night") not in build_dot(with_plan, None, queues=("nothing",)).source


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot not installed (make system-deps)")
def test_graphviz_lays_the_plan_out(tmp_path: Path):
    loaded = load_topology(EXAMPLE)
    write_svg(build_dot(loaded, check_topology(loaded)), tmp_path / "plans.svg")
    svg = html.unescape((tmp_path / "plans.svg").read_text())
    assert "training plan p5-plan" in svg and "window 1: 8 x ml.p5.48xlarge" in svg
