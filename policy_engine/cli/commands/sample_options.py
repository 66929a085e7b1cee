"""``--samples N`` and ``--seed``: the one pair of options that runs a command on N workload samples
(``simulate``, ``compare``, ``diff --scenario``; ``tune --samples``, alias ``--workload-samples``), drawn by the one
resampler (``simulation.scenarios.samples``; docs/simulator.md, "Workload samples")."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from policy_engine.cli.commands.shared import fail_input
from policy_engine.foundation.bounds import MAX_SEED, MAX_WORKLOAD_SAMPLES

if TYPE_CHECKING:
    from policy_engine.simulation.scenarios.workload import Scenario

#: What ``--samples`` does, said the same in every command's help.
SAMPLES_HELP = ("Run on N workloads drawn from the scenario: a profile's (workload: {profile: ...}) drawn with seeds "
                "SEED..SEED+N-1, else the recorded jobs (sample 1) and N-1 resamples of them by whole days (seeds "
                "SEED+1..SEED+N-1; all shares together; training-plan jobs keep their day)")


def samples_option(what: str, *aliases: str, minimum: int = 1) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--samples N`` (passed as ``samples``), with ``what`` it adds to ``SAMPLES_HELP`` and any older names."""
    return click.option("--samples", *aliases, "samples", type=click.IntRange(minimum, MAX_WORKLOAD_SAMPLES),
                        default=1, show_default=True, metavar="N", help=f"{SAMPLES_HELP}; {what}")


def seed_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--seed N`` (passed as ``seed``): the first sample's seed."""
    option = click.option("--seed", "seed", type=int, default=None, metavar="N",
                          help="With --samples: sample n (from 0) is drawn with seed N+n, N from 0 (default: the "
                               "profile's own seed, so the first sample is the scenario's own workload; for "
                               "recorded jobs 0, and sample 1 is the recorded jobs themselves, samples 2..N "
                               "resampled with seeds N+1..).")
    return option(function)


def sample_seed_or_exit(scenario: Scenario, samples: int, seed: int | None) -> int:
    """The first sample's seed, after refusing what cannot be sampled (one line per problem, exit 2)."""
    from policy_engine.simulation.scenarios.samples import default_seed, sample_problems

    if seed is not None and not 0 <= seed <= MAX_SEED:  # Random(-1) is Random(1): samples would repeat unseen
        fail_input([f"--seed {seed}: must be from 0 to {MAX_SEED:,} (each sample n is drawn with seed N+n; a "
                    "negative seed would draw the same workloads as its positive twin)"])
    if samples <= 1:
        if seed is not None:
            fail_input([f"--seed {seed}: it seeds the workload samples; add --samples N (N of at least 2)"])
        return 0
    problems = sample_problems(scenario)
    first = default_seed(scenario) if seed is None else seed
    if not 0 <= first <= MAX_SEED:  # a profile's own seed (workload: {seed: -1}) is the default
        problems.append(f"{scenario.source}: workload: seed {first}: --samples draws seeds from it, which must be "
                        f"from 0 to {MAX_SEED:,} (give --seed N)")
    if problems:
        fail_input(problems)
    return first
