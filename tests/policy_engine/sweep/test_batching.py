"""Several runs per Dask task: sized from the measured run time, smaller towards the end of a sweep."""

from __future__ import annotations

from policy_engine.sweep.batching import BatchSizer, run_batch


def test_one_run_per_task_until_a_task_has_been_timed():
    assert BatchSizer(workers=2).size(remaining=1000) == 1


def test_quick_runs_are_batched_up_to_the_target_and_the_largest_batch():
    sizer = BatchSizer(workers=2, target_seconds=0.5, largest=64)
    sizer.observe(items=1, seconds=0.1)
    assert sizer.size(remaining=1000) == 5
    millisecond = BatchSizer(workers=2, target_seconds=0.5, largest=64)
    millisecond.observe(items=10, seconds=0.01)
    assert millisecond.size(remaining=1000) == 64
    assert millisecond.size(remaining=None) == 64


def test_slow_runs_go_one_per_task():
    sizer = BatchSizer(workers=2)
    sizer.observe(items=1, seconds=30.0)
    assert sizer.size(remaining=1000) == 1


def test_the_last_runs_are_spread_over_every_worker():
    sizer = BatchSizer(workers=2, target_seconds=0.5, largest=64)
    sizer.observe(items=4, seconds=0.004)
    assert sizer.size(remaining=40) == 10  # at least two tasks per worker for what is left
    assert sizer.size(remaining=3) == 1


def test_the_estimate_follows_the_runs_as_they_change():
    sizer = BatchSizer(workers=1, target_seconds=1.0)
    sizer.observe(items=1, seconds=0.1)
    sizer.observe(items=1, seconds=0.3)
    assert sizer.seconds_per_item == 0.2
    assert sizer.size(remaining=None) == 5


def test_a_batch_returns_each_result_in_item_order_and_its_duration():
    results, seconds = run_batch(lambda shared, item: shared + item, 10, [1, 2, 3])
    assert results == [11, 12, 13] and seconds >= 0
