"""A scenario's workload drawn from a profile (``workload: {profile: FILE, seed: N, days: N}``).

The scenario keeps the profile, not only the jobs, so a sweep can vary a team's scale
(``--vary 'profile.QUEUE/SHARE.scale=0.8..1.2:0.1'``) and draw each candidate's jobs anew, and tune can
draw other seeds of the same profile.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from policy_engine.foundation.model import Topology
from policy_engine.simulation.core.jobs import JobSpec
from policy_engine.simulation.inputs.generate import GenerateOptions, share_reach
from policy_engine.simulation.profiles.loading import ResolvedProfile
from policy_engine.simulation.profiles.planning import with_defaults
from policy_engine.simulation.profiles.sampling import draw_workload


@dataclass(frozen=True)
class ProfileWorkload:
    """A profile, how many days and which seed: everything needed to draw the same jobs again."""

    profile: ResolvedProfile
    days: float
    seed: int = 0
    #: ``QUEUE/SHARE`` -> factor on its arrival rate
    scales: Mapping[str, float] = field(default_factory=dict)
    #: the instant second 0 stands for (the scenario's ``start:``): what plan windows written as dates count from
    start: datetime | None = None

    def jobs(self, topology: Topology, scales: Mapping[str, float] | None = None,
             seed: int | None = None) -> tuple[list[JobSpec], list[str]]:
        """The jobs (shares the profile does not name follow generate's defaults, as ``generate`` does) and
        the notes of what was narrowed."""
        profile, notes = with_defaults(self.profile, topology, GenerateOptions(jobs=1, arrival_rate=60.0))
        merged = {**self.scales, **(scales or {})}
        columns = draw_workload(topology, profile, self.days, self.seed if seed is None else seed,
                                share_reach(topology), merged, self.start)
        return list(columns.jobs()), notes + columns.notes
