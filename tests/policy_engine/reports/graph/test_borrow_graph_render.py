"""The borrow-graph picture: nodes, clusters, edges and highlights read back from the DOT source."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from policy_engine.analysis.checks import check_topology
from policy_engine.foundation.model import JobQueue, QuotaShare, ServiceEnvironment, Topology
from policy_engine.inputs.examples import large_topology
from policy_engine.reports.graph import borrow_graph as borrow_graph_render
from policy_engine.reports.graph.borrow_graph import (
    FINDING_COLOUR,
    RenderError,
    build_dot,
    write_dot,
    write_png,
    write_svg,
)
from tests.builders import GPU, guarantee, share, topology

BIG = "ml.p4d.24xlarge"
_EDGE = re.compile(r'^\t"([^"]+)" -> "([^"]+)" \[label="([^"]+)"(.*)\]$', re.M)
_NODE = re.compile(r'^\t+"([^"]+)" \[label="([^"]*)"(.*?)\]$', re.M | re.S)


def edges(source: str) -> dict[tuple[str, str, str], str]:
    """``(lender, borrower, instance type) -> most`` from the DOT source."""
    out = {}
    for lender, borrower, label, _ in _EDGE.findall(source):
        instance_type, most = label.split(" ≤ ")
        out[(lender, borrower, instance_type)] = most
    return out


def nodes(source: str) -> dict[str, tuple[str, str]]:
    """``node -> (label, other attributes)`` for share nodes."""
    return {name: (label, rest) for name, label, rest in _NODE.findall(source) if "/" in name}


def cluster_of(source: str, node: str) -> str:
    """Name of the innermost cluster whose body declares ``node``."""
    position = source.index(f'"{node}" [label=')
    stack = []
    for match in re.finditer(r"subgraph (\w+) \{|^\t*\}$", source[:position], re.M):
        if match.group(1):
            stack.append(match.group(1))
        elif stack:
            stack.pop()
    return stack[-1] if stack else ""


def two_queues() -> Topology:
    """Queue a: a borrower of two types, a lender of both, a lender of only GPU, a RESERVE; queue b: an orphan."""
    return Topology(
        service_environments=(ServiceEnvironment(name="env-a", capacity={GPU: 6, BIG: 4}),
                              ServiceEnvironment(name="env-b", capacity={GPU: 2})),
        job_queues=(
            JobQueue(name="a", service_environment="env-a", shares=(
                QuotaShare(name="borrower", capacity={GPU: 1, BIG: 1}, strategy="LEND_AND_BORROW", borrow_limit=100),
                QuotaShare(name="both", capacity={GPU: 2, BIG: 3}, strategy="LEND"),
                QuotaShare(name="gpu-only", capacity={GPU: 2}, strategy="LEND"),
                QuotaShare(name="vault", capacity={GPU: 1}, strategy="RESERVE"),
            )),
            JobQueue(name="b", service_environment="env-b", shares=(
                QuotaShare(name="orphan", capacity={GPU: 1}, strategy="LEND_AND_BORROW"),
                QuotaShare(name="locked", capacity={GPU: 1}, strategy="RESERVE"),
            )),
        ),
    )


def test_example_has_one_node_per_share_and_the_one_edge_qs2_lends_qs1(example):
    source = build_dot(example, check_topology(example)).source
    shares = nodes(source)
    assert set(shares) == {"training/QS1", "training/QS2", "training/QS3"}
    label, _ = shares["training/QS1"]
    assert label.splitlines()[:3] == ["QS1", "ml.g5.xlarge: 1", "LEND_AND_BORROW, borrow limit 200%"]
    assert shares["training/QS2"][0].splitlines() == ["QS2", "ml.g5.xlarge: 1", "LEND"]
    # QS2 lends its one instance; QS1 may borrow 2 (200 %) and the environment has 2 beside QS1's own.
    assert edges(source) == {("training/QS2", "training/QS1", GPU): "1"}


def test_strategies_look_different_and_reserve_is_boxed_apart(example):
    source = build_dot(example).source
    looks = {name: rest for name, (_, rest) in nodes(source).items()}
    fills = {name: re.search(r'fillcolor="([^"]+)"', rest).group(1) for name, rest in looks.items()}
    assert len(set(fills.values())) == 3
    assert "peripheries=2" in looks["training/QS3"] and "dashed" in looks["training/QS3"]
    assert cluster_of(source, "training/QS1") == "cluster_training"
    assert cluster_of(source, "training/QS3") == "cluster_training__reserved"
    assert not any("training/QS3" in key[:2] for key in edges(source))


def test_edges_per_instance_type_labelled_with_the_most_that_can_flow():
    source = build_dot(two_queues()).source
    # borrower: GPU room = min(allowance 1, env 6 - own 1) = 1; BIG room = min(1, 4 - 1) = 1.
    assert edges(source) == {
        ("a/both", "a/borrower", GPU): "1",
        ("a/both", "a/borrower", BIG): "1",
        ("a/gpu-only", "a/borrower", GPU): "1",
    }
    for lender, borrower, _ in edges(source):
        assert lender.split("/")[0] == borrower.split("/")[0]  # lending never crosses job queues
    assert cluster_of(source, "a/both") == "cluster_a" and cluster_of(source, "b/orphan") == "cluster_b"
    assert cluster_of(source, "b/locked") == "cluster_b__reserved"


def test_findings_are_highlighted_on_their_share():
    t = two_queues()
    report = check_topology(t)
    shares = nodes(build_dot(t, report).source)
    orphan_label, orphan_look = shares["b/orphan"]
    assert "BQ301" in orphan_label  # can never borrow: nobody in queue b lends
    assert FINDING_COLOUR[borrow_graph_render.Flag.WARNING] in orphan_look and "penwidth=3" in orphan_look
    assert "⚠" not in shares["a/both"][0] and "penwidth" not in shares["a/both"][1]


def test_refuted_guarantee_marks_its_share_in_error_colour():
    t = topology(share("A", 1, "LEND_AND_BORROW"), share("B", 1, "LEND"),
                 guarantees=[guarantee("A", burst_capacity={GPU: 5})])
    label, look = nodes(build_dot(t, check_topology(t)).source)["training/A"]
    assert "BQ402" in label and FINDING_COLOUR[borrow_graph_render.Flag.ERROR] in look


def test_a_suppressed_finding_stays_flagged_in_grey():
    from policy_engine.foundation.model import Suppression

    t = topology(share("A", 1, "LEND_AND_BORROW"), share("B", 1, "LEND"),
                 guarantees=[guarantee("A", burst_capacity={GPU: 5})])
    report = check_topology(t, suppress=[Suppression(rule="BQ402", object="training/A", reason="on paper")])
    label, look = nodes(build_dot(t, report).source)["training/A"]
    assert "BQ402 (suppressed)" in label and borrow_graph_render.SUPPRESSED_COLOUR in look
    assert FINDING_COLOUR[borrow_graph_render.Flag.ERROR] not in look


def test_queue_filter_keeps_only_that_queue():
    source = build_dot(two_queues(), queues=("b",)).source
    assert set(nodes(source)) == {"b/orphan", "b/locked"}
    assert edges(source) == {}


needs_dot = pytest.mark.skipif(shutil.which("dot") is None and not os.environ.get("CI"),
                               reason="Graphviz 'dot' not installed (CI installs it)")


@needs_dot
def test_svg_and_png_are_rendered_by_graphviz(example, tmp_path: Path):
    dot = build_dot(example, check_topology(example))
    write_svg(dot, tmp_path / "g.svg")
    svg = (tmp_path / "g.svg").read_text()
    assert "<svg" in svg and "training/QS2&#45;&gt;training/QS1" in svg  # the edge's title
    write_png(dot, tmp_path / "g.png")
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_missing_dot_is_one_clear_line(example, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RenderError) as caught:
        write_svg(build_dot(example), tmp_path / "g.svg")
    assert "'dot' program" in str(caught.value) and "\n" not in str(caught.value)
    write_dot(build_dot(example), tmp_path / "g.dot")  # DOT needs no Graphviz
    assert (tmp_path / "g.dot").read_text().startswith("digraph borrow_graph {")


def test_too_big_a_picture_asks_for_fewer_queues(tmp_path: Path):
    big = large_topology(queues=4)
    with pytest.raises(RenderError, match="--queue"):
        write_svg(build_dot(big), tmp_path / "g.svg")
    assert not (tmp_path / "g.svg").exists()


def cluster_attrs(source: str, cluster: str) -> str:
    """The attribute block of one cluster (label, colour, tooltip) from the DOT source."""
    body = source[source.index(f"subgraph {cluster} {{"):]
    return body[:re.search(r'\n\t\t(?:"|subgraph )', body).start()]


def flagged_rules(attrs: str) -> list[str]:
    """Rule IDs on the ``⚠`` line of a label."""
    match = re.search(r"⚠ ([A-Z0-9, ]+)", attrs)
    return match.group(1).split(", ") if match else []


def test_environment_findings_colour_every_queue_cluster_on_that_environment():
    t = two_queues()
    # Queue c shares env-a with queue a; env-a's 6 GPU are oversubscribed by c's share (BQ201, error).
    t = t.model_copy(update={"job_queues": (*t.job_queues, JobQueue(name="c", service_environment="env-a", shares=(
        QuotaShare(name="extra", capacity={GPU: 2}, strategy="RESERVE"),)))})
    source = build_dot(t, check_topology(t)).source
    red = FINDING_COLOUR[borrow_graph_render.Flag.ERROR]
    for cluster in ("cluster_a", "cluster_c"):
        attrs = cluster_attrs(source, cluster)
        assert "BQ201" in flagged_rules(attrs) and f'color="{red}"' in attrs and "penwidth=3" in attrs
        assert "BQ201 error service_environments[env-a]" in attrs  # the tooltip has the whole finding
    assert "BQ201" not in cluster_attrs(source, "cluster_b")


def test_queue_findings_are_on_their_cluster_and_warnings_are_orange():
    t = two_queues()
    queue_b = t.job_queues[1].model_copy(update={"priority": 5000})  # outside 0-1000: an error on job_queues[b]
    t = t.model_copy(update={"job_queues": (t.job_queues[0], queue_b)})
    report = check_topology(t)
    rule_id = next(f.rule for f in report.findings if str(f.object) == "job_queues[b]")
    source = build_dot(t, report).source
    assert rule_id in flagged_rules(cluster_attrs(source, "cluster_b"))
    assert rule_id not in cluster_attrs(source, "cluster_a")
    idle = topology(share("A", 1, "LEND"), environment=3)  # BQ203 warning: 2 instances belong to no share
    attrs = cluster_attrs(build_dot(idle, check_topology(idle)).source, "cluster_training")
    assert flagged_rules(attrs) == ["BQ203"] and FINDING_COLOUR[borrow_graph_render.Flag.WARNING] in attrs


def test_findings_about_the_whole_topology_are_under_the_title():
    t = topology(share("A", 1, "LEND"), guarantees=[guarantee("training/nobody", min_capacity={GPU: 1})])
    report = check_topology(t)
    assert any(f.rule == "BQ001" for f in report.findings)
    title = build_dot(t, report).source.split("\n")[1]
    assert "⚠ BQ001" in title
