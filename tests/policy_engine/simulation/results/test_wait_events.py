"""The events as the wait sweep reads them: the usage log in time order (``wait_causes._usage_changes``), and the
four streams merged in time order a window at a time (``wait_causes._windows``).

The windows hold every event once, by time, then kind, then place in its stream, cut only between instants.
Hypothesis draws logs (merged logs of runs in parallel out of time order) and streams (instants shared between
streams, windows of one event), and compares with a plain replay.
"""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from policy_engine.simulation.results import wait_causes


def _plain(times: list[float], who: list[int], used: list[int]) -> list[tuple[float, int, int]]:
    """The log's entries by time, an instant's in log order."""
    order = sorted(range(len(times)), key=lambda at: times[at])  # stable
    return [(times[at], who[at], used[at]) for at in order]


@st.composite
def logs(draw) -> tuple[list[float], list[int], list[int]]:
    instants = draw(st.lists(st.integers(0, 30), min_size=0, max_size=200))
    if draw(st.booleans()):
        instants.sort()  # one run's log, else logs of runs in parallel merged one after the other
    who = [draw(st.integers(0, 5)) for _ in instants]
    used = [draw(st.integers(0, 400)) for _ in instants]
    return [float(time) for time in instants], who, used


@settings(max_examples=80, deadline=None)
@given(logs())
def test_the_log_in_time_order_an_instants_entries_in_log_order(log):
    times, who, used = log
    lines = np.array([10, 11, 12, 13, 14, 15])  # the log's share numbers as the sweep's line numbers
    got_times, got_lines, got_used = wait_causes._usage_changes(
        np.array(times, dtype=np.float64), np.array(who, dtype=np.int32), np.array(used, dtype=np.int32), lines)
    got = list(zip(got_times.tolist(), (got_lines - 10).tolist(), got_used.tolist(), strict=True))
    assert got == _plain(times, who, used)


@st.composite
def streams(draw) -> list[wait_causes.Stream]:
    """Four streams in time order (the last but one with codes), on a few instants so that they share many; some
    with their columns in their own order, taken in time order."""
    out = []
    for kind in range(4):
        times = sorted(draw(st.lists(st.integers(0, 12), max_size=40)))
        values = [draw(st.integers(0, 1000)) for _ in times]
        codes = np.array([value + 1 for value in values]) if kind == 2 else None
        lines = np.full(len(times), kind + 20)
        stream = wait_causes.Stream(np.array(times, dtype=np.float64), lines, np.array(values), codes)
        if draw(st.booleans()):  # the columns shuffled, taken back in time order
            mixed = np.array(draw(st.permutations(range(len(times)))), dtype=np.int64)
            back = np.argsort(mixed)
            stream = stream._replace(values=stream.values[mixed], codes=None if codes is None else codes[mixed],
                                     take=back)
        out.append(stream)
    return out


@settings(max_examples=120, deadline=None)
@given(streams(), st.sampled_from([1, 2, 5, 16_384]))
def test_windows_merge_the_streams_by_time_then_kind_cut_between_instants(drawn, size):
    plain = []  # every event as (time, kind, place in its stream's time order, value, code)
    for kind, stream in enumerate(drawn):
        for place, time in enumerate(stream.times.tolist()):
            at = place if stream.take is None else int(stream.take[place])
            code = 0 if stream.codes is None else int(stream.codes[at])
            plain.append((time, kind, place, int(stream.values[at]), code))
    plain.sort()
    got = []
    windows = list(wait_causes._windows(drawn, size))
    for window in windows:
        assert window.times, "no empty window"
        assert window.times == sorted(set(window.times)), "one entry per instant, in time order"
        begin = 0
        for at, time in enumerate(window.times):
            counts = (window.usages[at], window.limits[at], window.starts[at], window.ends[at])
            for kind, count in enumerate(counts):
                for event in range(begin, begin + count):
                    assert window.lines[event] == kind + 20, "its line says its kind"
                    got.append((time, kind, window.values[event], window.codes[event]))
                begin += count
        assert begin == len(window.lines)
    assert got == [(time, kind, value, code) for time, kind, _, value, code in plain]
    for before, after in itertools.pairwise(windows):  # cut between instants only
        assert before.times[-1] < after.times[0]
