"""``batch-quota graph``: DOT on standard output, SVG/PNG/DOT files by suffix, bad input in one line."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from policy_engine.cli.app import main
from tests.builders import GPU
from tests.policy_engine.cli.commands.test_input_robustness import one_line, run
from tests.policy_engine.reports.graph.test_borrow_graph_render import cluster_attrs, edges, flagged_rules, needs_dot


def test_command_writes_dot_and_reports_bad_input(tmp_path: Path):
    runner = CliRunner()
    out = tmp_path / "g.dot"
    result = runner.invoke(main, ["graph", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert edges(out.read_text()) == {("training/QS2", f"training pool {GPU}", "lends"): "1",
                                      (f"training pool {GPU}", "training/QS1", "borrows"): "1"}
    assert edges(runner.invoke(main, ["graph"]).output) == edges(out.read_text())  # stdout without -o
    bad = runner.invoke(main, ["graph", "-o", str(tmp_path / "g.txt")])
    assert bad.exit_code == 2 and "unknown picture format '.txt'" in bad.output and "Traceback" not in bad.output
    assert bad.output.rstrip().endswith("use .svg, .png or .dot")
    for name in ("g.gv", "G.DOT"):  # the other DOT suffix, and suffixes in any case
        assert runner.invoke(main, ["graph", "-o", str(tmp_path / name)]).exit_code == 0
        assert edges((tmp_path / name).read_text()) == edges(out.read_text())
    missing = runner.invoke(main, ["graph", "--queue", "nope"])
    assert missing.exit_code == 2 and "no job queue 'nope'" in missing.output


@needs_dot
def test_command_writes_png_of_the_default_topology(tmp_path: Path):
    out = tmp_path / "borrow-graph.png"
    result = CliRunner().invoke(main, ["graph", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_graph_command_shows_environment_findings(tmp_path: Path):
    bad = tmp_path / "over.yaml"
    bad.write_text("service_environments: [{name: e, capacity: {ml.g5.xlarge: 3}}]\n"
                   "job_queues: [{name: q, service_environment: e, shares: [\n"
                   "  {name: A, capacity: {ml.g5.xlarge: 2}, strategy: LEND_AND_BORROW},\n"
                   "  {name: B, capacity: {ml.g5.xlarge: 2}, strategy: LEND}]}]\n")
    result = CliRunner().invoke(main, ["graph", str(bad)])
    assert result.exit_code == 0
    assert "BQ201" in flagged_rules(cluster_attrs(result.output, "cluster_q"))


def test_graph_refuses_more_edges_than_a_picture_can_show(tmp_path, monkeypatch):
    from policy_engine.reports.graph import view as graph_view

    monkeypatch.setattr(graph_view, "MAX_DOT_EDGES", 0)
    one_line(run("graph"), "the borrow graph has", "edges", "--queue NAME")
