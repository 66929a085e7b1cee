"""Plan ahead with a profile: scale a team (``--scale vision=2``), add one like another (``--add-share``),
and give the shares a profile does not name the ``generate`` options, as the issue of a new team would.

Each returns the problems it found as lines (the command prints them and exits 2), never a guess.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from policy_engine.foundation.model import Topology, share_id
from policy_engine.simulation.inputs.generate import GenerateOptions, ShareMix
from policy_engine.simulation.profiles.loading import ResolvedProfile
from policy_engine.simulation.profiles.spec import (
    Bursts,
    Empirical,
    Exponential,
    LogNormal,
    Pareto,
    RunTime,
    ShareProfile,
)


def parse_scales(profile: ResolvedProfile, topology: Topology,
                 items: Sequence[str]) -> tuple[dict[str, float], list[str]]:
    """``--scale SHARE=FACTOR`` items as ``{QUEUE/SHARE: factor}`` (a share of the profile, factor >= 0)."""
    scales: dict[str, float] = {}
    problems: list[str] = []
    for item in items:
        ref, sep, text = item.partition("=")
        match = topology.find_share(ref) if sep and ref else None
        try:
            factor = float(text)
        except ValueError:
            factor = math.nan
        if match is None:
            problems.append(f"--scale {item!r}: expected SHARE=FACTOR, e.g. vision=2")
        elif match.share_id is None:
            problems.append(f"--scale {item!r}: {match.error}")
        elif match.share_id not in profile.shares:
            problems.append(f"--scale {item!r}: {match.share_id} is not in the profile {profile.source}")
        elif not (math.isfinite(factor) and factor >= 0):
            problems.append(f"--scale {item!r}: the factor must be a finite number >= 0")
        elif match.share_id in scales:
            problems.append(f"--scale {item!r}: {match.share_id} is scaled twice")
        else:
            scales[match.share_id] = factor
    return scales, problems


def add_shares(profile: ResolvedProfile, topology: Topology,
               items: Sequence[str]) -> tuple[ResolvedProfile, list[str]]:
    """``--add-share NEW=FROM``: NEW (a share of the topology the profile does not name) submits like FROM."""
    shares = dict(profile.shares)
    problems: list[str] = []
    for item in items:
        new_ref, sep, from_ref = item.partition("=")
        new, old = topology.find_share(new_ref), topology.find_share(from_ref)
        if not sep or not new_ref or not from_ref:
            problems.append(f"--add-share {item!r}: expected NEW=FROM, two shares of the topology")
        elif new.share_id is None or old.share_id is None:
            problems.append(f"--add-share {item!r}: {new.error or old.error}")
        elif old.share_id not in profile.shares:
            problems.append(f"--add-share {item!r}: {old.share_id} is not in the profile {profile.source}")
        elif new.share_id in shares:
            problems.append(f"--add-share {item!r}: {new.share_id} already has a profile; it is not overwritten")
        else:
            template = profile.shares[old.share_id]
            capacity = _capacity(topology, new.share_id)
            plan_types = [plan.instance_type for name in template.training_plans or {}
                          if (plan := topology.plan(name)) is not None]
            missing = list(dict.fromkeys(t for t in [*(template.instance_types or {}), *plan_types]
                                         if t not in capacity))
            if missing:
                problems.append(f"--add-share {item!r}: {new.share_id} has no limit for {', '.join(missing)}, "
                                f"which {old.share_id}'s profile submits to")
            else:
                shares[new.share_id] = template
    return replace(profile, shares=shares), problems


def _capacity(topology: Topology, sid: str) -> dict[str, int]:
    for queue, share in topology.shares():
        if share_id(queue, share) == sid:
            return dict(share.capacity)
    return {}


def options_as_share_profile(options: GenerateOptions, jobs_per_day: float, sid: str) -> ShareProfile:
    """The ``generate`` options as one share's profile (its share of ``--rate``, the same laws)."""
    mean, kind, shape = options.duration_mean, options.duration_distribution, options.shape()
    law: Exponential | LogNormal | Pareto | Empirical
    quantiles: dict[float, float] = {}
    if kind == "lognormal":
        law = LogNormal(distribution="lognormal", median=mean * math.exp(-shape * shape / 2), sigma=shape)
    elif kind == "pareto":
        law = Pareto(distribution="pareto", minimum=mean * (shape - 1) / shape, alpha=shape)
    elif kind == "fixed":
        law, quantiles = Empirical(distribution="empirical"), {0.0: mean, 1.0: mean}
    else:
        law = Exponential(distribution="exponential", mean=mean)
    bursts = Bursts(mean_jobs=options.burst_mean, spread=options.burst_spread) if options.burst_mean > 1 else None
    return ShareProfile(jobs_per_day=jobs_per_day, sizes=dict(options.sizes),
                        priorities=dict(options.share_priorities.get(sid, options.priorities)),
                        run_time=RunTime(law=law, quantiles=quantiles, maximum=options.duration_max), bursts=bursts)


def with_defaults(profile: ResolvedProfile, topology: Topology, options: GenerateOptions) -> tuple[ResolvedProfile,
                                                                                                   list[str]]:
    """Every ENABLED share the profile does not name, drawn from ``options``: ``--rate`` split by ``share_mix``."""
    others = [(share_id(q, s), s) for q, s in topology.shares()
              if s.state == "ENABLED" and share_id(q, s) not in profile.shares]
    if not others:
        return profile, []
    enabled = [(share_id(q, s), s) for q, s in topology.shares() if s.state == "ENABLED"]
    weights = {sid: (float(sum(s.capacity.values())) if options.share_mix is ShareMix.LIMIT else 1.0)
               for sid, s in enabled}
    total = sum(weights.values()) or 1.0  # each gets the part of --rate it would get without a profile
    shares = dict(profile.shares)
    for sid, _ in others:
        shares[sid] = options_as_share_profile(options, options.arrival_rate * 24 * weights[sid] / total, sid)
    names = ", ".join(sid for sid, _ in others)
    note = (f"{len(others)} share(s) the profile does not name follow the generate options "
            f"(their part of --rate {options.arrival_rate:g}/h by --share-mix {options.share_mix.value}): {names}")
    return replace(profile, shares=shares), [note]
