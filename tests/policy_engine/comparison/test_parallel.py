"""Where ``compare`` runs its designs when nothing says: in-process when a local cluster would not pay for its
start (one core, or few job-runs to take off the critical path), else one worker process per design."""

from __future__ import annotations

import pytest

from policy_engine.comparison.parallel import (
    IN_PROCESS_JOB_RUNS,
    SAMPLE_DRAW_JOB_RUNS,
    local_workers,
    runs_in_process,
)


@pytest.mark.parametrize(("jobs", "designs", "cores", "in_process"), [
    (9_319, 2, 2, True),  # a month of eight teams: 0.9 s in-process, 3 to 5 s on a cluster
    (IN_PROCESS_JOB_RUNS, 2, 2, True),  # one design off the critical path, at the bound
    (IN_PROCESS_JOB_RUNS + 1, 2, 2, False),
    (1_000_000, 2, 1, True),  # one core: the cluster would run them one after another too
    (1_000_000, 5, 1, True),
    (IN_PROCESS_JOB_RUNS // 2, 3, 2, True),  # 3 designs on 2 cores: one round saved
    (IN_PROCESS_JOB_RUNS // 7 + 1, 8, 8, False),  # 8 designs side by side save 7 runs
    (IN_PROCESS_JOB_RUNS // 7, 8, 8, True),
])
def test_in_process_when_a_cluster_would_save_too_little(jobs, designs, cores, in_process):
    assert runs_in_process(jobs, designs, cores) is in_process


@pytest.mark.parametrize(("jobs", "designs", "samples", "cores", "in_process"), [
    (100_000, 2, 5, 2, True),  # measured: 39.9 s in-process, 49.0 s on a cluster (load 9 to 14)
    (100_000, 2, 10, 2, True),  # 68.5 s against 111.8 s
    (1_000_000, 2, 5, 2, True),  # 336 s against 339 s, with 97 s of CPU against 159 s
    (1_000_000, 2, 5, 4, False),  # 4 workers take 7 of the 10 runs off the critical path
    (100_000, 2, 1, 2, True),  # without samples the rule is as before
    (IN_PROCESS_JOB_RUNS + 1, 2, 1, 2, False),
])
def test_samples_make_a_cluster_pay_for_drawing_them_again(jobs, designs, samples, cores, in_process):
    assert runs_in_process(jobs, designs * samples, cores, samples) is in_process


def test_the_sample_term_is_the_bound_exactly():
    jobs, samples = 100_000, 4  # 4 workers: (8 - 2) x jobs saved against 200,000 + 1.25 x 4 x jobs
    bound = IN_PROCESS_JOB_RUNS + SAMPLE_DRAW_JOB_RUNS * samples * jobs
    assert (6 * jobs <= bound) is runs_in_process(jobs, 2 * samples, 4, samples)
    small = int(IN_PROCESS_JOB_RUNS / (6 - SAMPLE_DRAW_JOB_RUNS * samples))  # the largest in-process size
    assert runs_in_process(small, 2 * samples, 4, samples) and not runs_in_process(small + 1, 2 * samples, 4, samples)


def test_a_local_cluster_has_a_worker_per_design_up_to_the_cores():
    assert [local_workers(designs, 4) for designs in (1, 2, 4, 9)] == [1, 2, 4, 4]
    assert local_workers(3, 1) == 1
