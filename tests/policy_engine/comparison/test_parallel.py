"""Where ``compare`` runs its designs when nothing says: in-process when a local cluster would not pay for its
start (one core, or few job-runs to take off the critical path), else one worker process per design."""

from __future__ import annotations

import pytest

from policy_engine.comparison.parallel import IN_PROCESS_JOB_RUNS, local_workers, runs_in_process


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


def test_a_local_cluster_has_a_worker_per_design_up_to_the_cores():
    assert [local_workers(designs, 4) for designs in (1, 2, 4, 9)] == [1, 2, 4, 4]
    assert local_workers(3, 1) == 1
