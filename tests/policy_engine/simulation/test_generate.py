"""Workload generation (``simulation.generate``): heavy-tailed durations keep their mean, bursts stay in one share."""

from __future__ import annotations

from itertools import pairwise


def _profile(**changes):
    from policy_engine.simulation.inputs.generate import GenerateOptions

    return GenerateOptions(**{"jobs": 20_000, "arrival_rate": 3600.0, "duration_mean": 3600.0, "seed": 3, **changes})


def _jobs(profile):
    from policy_engine.inputs.examples import large_topology
    from policy_engine.simulation.inputs.generate import generate_jobs

    return list(generate_jobs(large_topology(queues=2, shares_per_queue=4, instance_types=2), profile))


def test_heavy_tailed_durations_keep_their_mean_and_cap():
    pareto = [j.duration for j in _jobs(_profile(duration_distribution="pareto", duration_shape=2.5))]
    assert min(pareto) >= 3600 * 1.5 / 2.5 - 0.1  # the Pareto minimum for this mean
    assert abs(sum(pareto) / len(pareto) - 3600) < 3600 * 0.1
    light = [j.duration for j in _jobs(_profile(duration_distribution="lognormal"))]
    heavy = [j.duration for j in _jobs(_profile(duration_distribution="lognormal", duration_shape=2.5,
                                                duration_max=14 * 86400))]
    assert max(heavy) <= 14 * 86400 and min(heavy) >= 1
    assert sorted(heavy)[len(heavy) // 2] < sorted(light)[len(light) // 2] / 4  # most jobs short ...
    assert max(heavy) > 10 * max(light)  # ... and a tail of weeks


def test_bursts_go_to_one_share_within_their_spread():
    jobs = _jobs(_profile(burst_mean=500, burst_spread=120))
    assert len(jobs) == 20_000 and [j.submit_at for j in jobs] == sorted(j.submit_at for j in jobs)
    bursts, start = [[jobs[0]]], jobs[0].submit_at
    for previous, current in pairwise(jobs):
        same = (current.share, current.instance_type) == (previous.share, previous.instance_type)
        if same and current.submit_at - start <= 120:
            bursts[-1].append(current)
        else:
            bursts.append([current])
            start = current.submit_at
    assert 15 <= len(bursts) <= 80  # about 20,000 / 500 (two bursts to the same share in a row merge)
    plain = _jobs(_profile())
    assert plain == _jobs(_profile()) and plain != jobs  # seeded; bursts change the arrivals
