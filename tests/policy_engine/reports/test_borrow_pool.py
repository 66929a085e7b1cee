"""The pool view of the borrow graph: what the model is (lenders feed a pool per queue and instance type,
borrowers draw from it), at most two edges per share and type, drawn by real Graphviz without a warning."""

from __future__ import annotations

import subprocess
from pathlib import Path

from click.testing import CliRunner

from policy_engine.analysis.checks import borrow_graph, check_topology
from policy_engine.cli.app import main
from policy_engine.inputs.examples import large_topology
from policy_engine.reports.graph.borrow_graph import EdgeMode, build_dot, pool_edges
from tests.policy_engine.reports.graph.test_borrow_graph_render import needs_dot

TYPES = ("ml.g5.xlarge", "ml.g5.12xlarge", "ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.trn1.32xlarge")


def test_the_example_pools_qs2s_lending_for_qs1_with_the_max_flow_as_label(example):
    graph = borrow_graph(example, check_topology(example))
    assert [(e.source, e.target, e.most) for e in pool_edges(graph, example)] == [
        ("training/QS2", "training pool ml.g5.xlarge", 1), ("training pool ml.g5.xlarge", "training/QS1", 1)]
    source = build_dot(example, check_topology(example), edge_mode=EdgeMode.POOL).source
    assert '"training/QS2" -> "training pool ml.g5.xlarge" [label="lends ≤ 1"' in source
    assert '"training pool ml.g5.xlarge" -> "training/QS1" [label="borrows ≤ 1"' in source
    assert "pool → borrower: most it can borrow" in source


@needs_dot
def test_twenty_shares_of_five_types_draw_at_most_two_edges_per_share_and_type_without_a_warning(tmp_path: Path):
    topology = large_topology(queues=1, shares_per_queue=20, instance_types=5)
    report = check_topology(topology)
    pairwise = build_dot(topology, report, edge_mode=EdgeMode.PAIRWISE).source.count(" -> ")
    pooled = build_dot(topology, report, edge_mode=EdgeMode.POOL)
    edges = pooled.source.count(" -> ")
    assert edges <= 2 * 20 * 5 < pairwise
    dot_file = tmp_path / "g.dot"
    dot_file.write_text(pooled.source, encoding="utf-8")
    drawn = subprocess.run(["dot", "-Tsvg", str(dot_file), "-o", str(tmp_path / "g.svg")], capture_output=True,
                           text=True, check=False)
    assert drawn.returncode == 0 and drawn.stderr == "", drawn.stderr
    assert (tmp_path / "g.svg").read_text(encoding="utf-8").count("<g id=\"edge") == edges


def test_the_command_draws_pools_by_default_one_type_on_request_and_refuses_an_unknown_type(tmp_path: Path):
    topology = tmp_path / "t.yaml"
    topology.write_text("""\
service_environments: [{name: e, capacity: {ml.g5.xlarge: 8, ml.p4d.24xlarge: 4}}]
job_queues:
  - name: q
    service_environment: e
    shares:
      - {name: a, capacity: {ml.g5.xlarge: 2, ml.p4d.24xlarge: 2}, strategy: LEND_AND_BORROW}
      - {name: b, capacity: {ml.g5.xlarge: 2, ml.p4d.24xlarge: 2}, strategy: LEND}
      - {name: c, capacity: {ml.g5.xlarge: 2}, strategy: LEND_AND_BORROW, borrow_limit: 50}
""", encoding="utf-8")
    pooled = CliRunner().invoke(main, ["graph", str(topology)])
    assert pooled.exit_code == 0
    assert '"q pool ml.g5.xlarge" -> "q/c" [label="borrows ≤ 1"' in pooled.output
    assert '"q pool ml.p4d.24xlarge" -> "q/a" [label="borrows ≤ 2"' in pooled.output
    one = CliRunner().invoke(main, ["graph", str(topology), "--instance-type", "ml.p4d.24xlarge"])
    assert "q pool ml.g5.xlarge" not in one.output and "q pool ml.p4d.24xlarge" in one.output
    pairwise = CliRunner().invoke(main, ["graph", str(topology), "--edges", "pairwise"])
    assert '"q/b" -> "q/c" [label="ml.g5.xlarge ≤ 1"' in pairwise.output and " pool " not in pairwise.output
    wrong = CliRunner().invoke(main, ["graph", str(topology), "--instance-type", "ml.p5.48xlarge"])
    assert wrong.exit_code == 2
    assert wrong.output.splitlines() == ["error: --instance-type ml.p5.48xlarge: no share of the topology has a limit "
                                         "for it (types: ml.g5.xlarge, ml.p4d.24xlarge)"]
