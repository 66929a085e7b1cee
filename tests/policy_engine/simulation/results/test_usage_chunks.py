"""The usage log as the wait sweep reads it (``wait_causes._usage_chunks``): one change per share and instant.

The sweep applies an instant's usage changes before it reads any, so a share's changes within one instant add up to
its last; the feed keeps that last use in the place of the share's first change of the instant, in time order, cut
in chunks only between instants. Hypothesis draws logs (several changes of a share at one instant, merged logs of
runs in parallel out of time order, instants longer than a chunk) and compares the chunks with a plain replay.
"""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from policy_engine.simulation.results import wait_causes


def _plain(times: list[float], who: list[int], used: list[int]) -> list[tuple[float, int, int]]:
    """Per instant in time order (changes of one instant in log order), each share's last use, in the order the
    shares first changed in that instant."""
    order = sorted(range(len(times)), key=lambda at: times[at])  # stable: an instant's changes in log order
    out: dict[tuple[float, int], int] = {}
    for at in order:
        out[(times[at], who[at])] = used[at]  # a key keeps the place it was first given
    return [(time, share, value) for (time, share), value in out.items()]


@st.composite
def logs(draw) -> tuple[list[float], list[int], list[int]]:
    instants = draw(st.lists(st.integers(0, 30), min_size=0, max_size=200))
    if draw(st.booleans()):
        instants.sort()  # one run's log, else logs of runs in parallel merged one after the other
    who = [draw(st.integers(0, 5)) for _ in instants]
    used = [draw(st.integers(0, 400)) for _ in instants]
    return [float(time) for time in instants], who, used


@settings(max_examples=80, deadline=None)
@given(logs(), st.sampled_from([1, 3, 16, 16_384]))
def test_one_change_per_share_and_instant_in_time_order(log, chunk):
    times, who, used = log
    lines = np.array([10, 11, 12, 13, 14, 15])  # the log's share numbers as the sweep's line numbers
    chunks = list(wait_causes._usage_chunks(np.array(times, dtype=np.float64), np.array(who, dtype=np.int32),
                                            np.array(used, dtype=np.int32), lines, chunk))
    got = [(time, line - 10, value) for chunk_times, chunk_lines, chunk_used in chunks
           for time, line, value in zip(chunk_times, chunk_lines, chunk_used, strict=True)]
    assert got == _plain(times, who, used)
    assert all(chunk_times for chunk_times, _, _ in chunks)  # no empty chunk
    for before, after in itertools.pairwise(chunks):  # cut between instants only
        assert before[0][-1] < after[0][0]

