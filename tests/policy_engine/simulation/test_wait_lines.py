"""A wait-sweep line's head is the lowest rank still waiting, whatever order stretches start and end in.

``wait_sweep.Line`` keeps its waiting ranks in a few ascending runs and a heap for the rest (``Line.push``), and
``Line.first`` passes over ended stretches. Hypothesis drives one line of a real pool with starts in any rank
order (runs of ascending ranks as a priority's submissions make, more of them than the line keeps, and ranks out of
order as requeued stretches make) and ends of any waiting stretch, and after every step compares its head with the
lowest rank of a plain set; a long run read from its front lets go of what it passed (and still answers right).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from policy_engine.inputs.examples import large_topology
from policy_engine.simulation.core import wait_sweep
from policy_engine.simulation.core.capacity import build_pools

RANKS = 4_000


def _line() -> wait_sweep.Line:
    return wait_sweep.Sweep(build_pools(large_topology(queues=1, shares_per_queue=2, instance_types=1))).lines[0]


def _replay(steps: list[tuple[bool, int]]) -> wait_sweep.Line:
    """``(True, rank)`` starts a stretch of that rank, ``(False, k)`` ends the k-th waiting one (in start order)."""
    line = _line()
    state = [0] * RANKS  # per rank, its stretch code while it waits (as ``Sweep.state``)
    waiting: list[int] = []
    for starts, value in steps:
        if starts:
            state[value] = wait_sweep.stretch_code(1, False, False)
            waiting.append(value)
            line.push(value)
        elif waiting:
            state[waiting.pop(value % len(waiting))] = 0
        head = line.first(state)
        assert (head if head >= 0 else None) == min(waiting, default=None)
    return line


@st.composite
def steps(draw) -> list[tuple[bool, int]]:
    """Starts of distinct ranks (ascending stretches in several interleaved streams, and some out of order),
    ends between them."""
    ranks = draw(st.lists(st.integers(0, RANKS - 1), unique=True, min_size=1, max_size=600))
    streams = draw(st.integers(1, 7))  # more than the line's runs: the heap takes the rest
    ordered = [sorted(ranks[number::streams]) for number in range(streams)]
    out: list[tuple[bool, int]] = []
    while any(ordered):
        stream = draw(st.sampled_from([s for s in ordered if s]))
        out.append((True, stream.pop(0)))
        for _ in range(draw(st.integers(0, 2))):
            out.append((False, draw(st.integers(0, 10_000))))
    return out


@settings(max_examples=60, deadline=None)
@given(steps())
def test_head_is_the_lowest_waiting_rank(replayed):
    _replay(replayed)


def test_a_long_run_read_from_its_front():
    """1,500 ascending starts ended lowest first, higher ranks starting in between: the run's passed-over front is
    let go on the way, and the head stays right."""
    steps: list[tuple[bool, int]] = [(True, rank) for rank in range(1_500)]
    for number in range(1_400):
        steps.append((False, 0))
        if number % 100 == 0:
            steps.append((True, 2_000 + number))
    line = _replay(steps)
    assert len(line.runs) == 1 and len(line.runs[0]) < 200  # one run, its read part let go
