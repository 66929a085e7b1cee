"""The borrow graph: edges per the strategies, edge capacities, and burst by max-flow."""

from __future__ import annotations

import networkx as nx

from policy_engine.analysis.borrow import graph as graph_module
from policy_engine.analysis.borrow.graph import BorrowGraph
from policy_engine.analysis.checks import check_topology
from policy_engine.inputs.examples import large_topology
from tests.builders import GPU, share, topology

OTHER = "ml.p4d.24xlarge"


def _count_max_flows(monkeypatch) -> list[object]:
    """Record every networkx max-flow ``BorrowGraph`` solves (one entry per solve)."""
    solves: list[object] = []
    solve = graph_module.edmonds_karp

    def counted(*args, **kwargs):
        solves.append(args)
        return solve(*args, **kwargs)

    monkeypatch.setattr(graph_module, "edmonds_karp", counted)
    return solves


def test_example_edges_follow_the_strategies(example):
    graph = BorrowGraph(example)
    # QS2 (LEND) lends to QS1 (LEND_AND_BORROW); QS1 lends too but nobody else borrows; QS3 reserves.
    assert sorted(graph.graph.edges(keys=True)) == [("training/QS2", "training/QS1", GPU)]
    assert graph.lenders("training/QS1", GPU) == ["training/QS2"]
    assert graph.borrowers("training/QS2", GPU) == ["training/QS1"]
    assert graph.lenders("training/QS3") == [] and graph.borrowers("training/QS3") == []
    assert isinstance(graph.graph, nx.MultiDiGraph)


def test_example_burst_is_own_plus_lender(example):
    graph = BorrowGraph(example)
    burst = graph.burst("training/QS1", GPU)
    assert (burst.own, burst.borrowed) == (1, {"training/QS2": 1})
    assert graph.max_burst("training/QS1", GPU) == 2
    assert graph.max_burst("training/QS2", GPU) == 1  # LEND never borrows
    assert graph.max_burst("training/QS3", GPU) == 1


def test_edges_are_per_instance_type():
    lender = share("L", strategy="LEND", capacity={GPU: 2})
    borrower = share("B", strategy="LEND_AND_BORROW", capacity={GPU: 1, OTHER: 1})
    graph = BorrowGraph(topology(lender, borrower))
    assert graph.lenders("training/B", GPU) == ["training/L"]
    assert graph.lenders("training/B", OTHER) == []
    assert graph.max_burst("training/B", OTHER) == 1


def test_borrow_limit_caps_edge_and_burst():
    lenders = [share(f"L{i}", 4, "LEND") for i in range(3)]
    borrower = share("B", 2, "LEND_AND_BORROW", borrow_limit=150)  # ceiling floor(2 * 2.5) = 5
    graph = BorrowGraph(topology(borrower, *lenders))
    assert graph.borrow_allowance("training/B", GPU) == 3
    assert graph.edge_capacity("training/L0", "training/B", GPU) == 3
    assert graph.max_burst("training/B", GPU) == 5
    assert sum(graph.burst("training/B", GPU).borrowed.values()) == 3


def test_unlimited_borrow_takes_every_lender():
    lenders = [share(f"L{i}", 2, "LEND") for i in range(3)]
    graph = BorrowGraph(topology(share("B", 1, "LEND_AND_BORROW"), *lenders))
    assert graph.borrow_allowance("training/B", GPU) is None
    assert graph.max_burst("training/B", GPU) == 7


def test_oversubscribed_environment_caps_burst():
    lenders = [share(f"L{i}", 3, "LEND") for i in range(2)]
    graph = BorrowGraph(topology(share("B", 2, "LEND_AND_BORROW"), *lenders, environment=4))
    # Own 2 + lenders 6, but the environment only has 4 instances.
    assert graph.edge_capacity("training/L0", "training/B", GPU) == 2
    assert graph.max_burst("training/B", GPU) == 4


def test_share_larger_than_environment_bursts_to_environment():
    graph = BorrowGraph(topology(share("B", 5, "LEND_AND_BORROW"), share("L", 1, "LEND"), environment=3))
    assert graph.max_burst("training/B", GPU) == 3


def test_no_transitive_lending():
    # A lends to B, B lends to C; but C may only borrow B's own capacity, never A's through B.
    a = share("A", 5, "LEND")
    b = share("B", 1, "LEND_AND_BORROW")
    c = share("C", 1, "LEND_AND_BORROW")
    graph = BorrowGraph(topology(a, b, c))
    assert graph.max_burst("training/C", GPU) == 1 + 5 + 1
    burst = graph.burst("training/C", GPU)
    assert burst.borrowed == {"training/A": 5, "training/B": 1}


def test_lending_stays_inside_a_job_queue(example):
    second = example.job_queues[0].model_copy(update={"name": "other"})
    graph = BorrowGraph(example.model_copy(update={"job_queues": (*example.job_queues, second)}))
    assert graph.lenders("other/QS1", GPU) == ["other/QS2"]
    assert graph.borrowers("training/QS2", GPU) == ["training/QS1"]


def test_large_topology_bursts():
    graph = BorrowGraph(large_topology(queues=2))
    # Every LEND_AND_BORROW share (borrow_limit 100) has 13 lenders of 2 each: ceiling 4 binds.
    assert graph.max_burst("queue-00/team-00-00", GPU) == 4
    assert graph.max_burst("queue-01/team-01-01", GPU) == 2  # LEND
    assert graph.graph.number_of_nodes() == 40


def test_borrowers_of_the_same_shape_get_their_own_lenders(monkeypatch):
    """Flows are shared by network shape; each borrower's result still names its own lenders."""
    solves = _count_max_flows(monkeypatch)
    a, b = share("A", 1, "LEND_AND_BORROW", borrow_limit=100), share("B", 1, "LEND_AND_BORROW", borrow_limit=100)
    graph = BorrowGraph(topology(a, b, share("L", 1, "LEND"), environment=4))
    # A's lenders are B and L; B's lenders are A and L: same shape (limits 1, 1; room 1), different shares.
    assert graph.burst("training/A", GPU).borrowed == {"training/B": 1}
    assert graph.burst("training/B", GPU).borrowed == {"training/A": 1}
    assert len(solves) == 1


def test_large_topology_with_guarantees_proves_every_promise(monkeypatch):
    """The benchmark's topology: a satisfiable guarantee on each of 1,000 shares, max-flows solved once per shape."""
    large = large_topology(guarantees=True)
    assert len(large.guarantees) == 1000
    assert check_topology(large).findings == []
    solves = _count_max_flows(monkeypatch)
    graph = BorrowGraph(large)
    bursts = {(graph.share(node).strategy, len(graph.lenders(node, t)), graph.burst(node, t).total)
              for node in graph.shares() for t in graph.share(node).capacity}
    assert len(solves) == 1
    # Identically shaped shares burst identically: one result per strategy and number of lenders.
    assert len({shape[:2] for shape in bursts}) == len(bursts)
