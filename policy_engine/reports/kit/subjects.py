"""What each command hands its renderers: the result, and where it came from.

The renderers (``reports.<command>.<format>``) and the format tables in
``reports.registry`` both import these; the tables import the renderers only when one is chosen.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from policy_engine.adapters.aws.drift import Difference
    from policy_engine.analysis.checks import CheckReport
    from policy_engine.changes.report import ChangeReport
    from policy_engine.foundation.model import Topology
    from policy_engine.inputs.loading import LoadError
    from policy_engine.simulation.profiles.fitting import FitResult
    from policy_engine.simulation.results.calibration import ShareCalibration
    from policy_engine.simulation.results.costs import CostReport
    from policy_engine.simulation.results.plan_account import PlanAccount
    from policy_engine.simulation.results.records import SimulationResult
    from policy_engine.simulation.results.sampled_types import SampledTypeUsage
    from policy_engine.simulation.results.spread import Spread
    from policy_engine.simulation.results.targets import TargetResult
    from policy_engine.simulation.results.wait_causes import WaitCauses
    from policy_engine.sweep.advice import Advice, HelpsRule


@dataclass(frozen=True)
class CheckOutput:
    """What ``check`` found, with where the topology came from (``file`` locates findings for SARIF)."""

    report: CheckReport
    topology: Topology
    source: str  # as the header names it: the path given, ``(stdin)`` or ``(embedded example)``
    file: Path
    strict: bool = False
    root: Path | None = None  # file locations are relative to this directory (default: the working directory)

    def uri(self) -> str:
        return file_uri(self.file, self.root)

    def lines(self) -> Mapping[tuple[str | int, ...], int]:
        """Line numbers per object path (YAML only); a file that loaded once reads again without problems."""
        from policy_engine.inputs.loading import LoadError, read_data

        if self.file.suffix.lower() not in (".yaml", ".yml"):
            return {}
        try:
            return dict(read_data(self.file)[1])
        except LoadError:
            return {}


@dataclass(frozen=True)
class CheckLoadFailure:
    """A topology ``check`` could not load: the document CI reads says so (the command then exits 2)."""

    error: LoadError
    source: str  # the argument as given
    file: Path
    root: Path | None = None

    @property
    def problems(self) -> list[str]:
        """One line per problem, as the command prints them on stderr."""
        return self.error.problems

    def uri(self) -> str:
        return file_uri(self.file, self.root)


def file_uri(path: Path, root: Path | None = None) -> str:
    """The file as code scanning wants it: relative to ``root`` (default: the working directory, the repository
    root in CI), as the user named it, so a symlink in the repository is reported as itself and not as its target.
    Outside ``root`` the uri is an absolute ``file://`` one, which code scanning cannot place on a diff."""
    base = Path(os.path.abspath(root or Path.cwd()))
    absolute = Path(os.path.abspath(path))  # normalises ``..`` without resolving symlinks
    if absolute.is_relative_to(base):
        return absolute.relative_to(base).as_posix()
    if absolute.resolve().is_relative_to(base.resolve()):  # e.g. the working directory is reached via a symlink
        return absolute.resolve().relative_to(base.resolve()).as_posix()
    return absolute.as_uri()


@dataclass(frozen=True)
class SimulateOutput:
    """A finished simulation; ``calibration`` compares it with observed jobs when the workload has them."""

    result: SimulationResult
    source: str
    calibration: list[ShareCalibration] | None = None
    #: the topology's objects named at deploy (a template's logical IDs stand in for their names)
    named_at_deploy: tuple[str, ...] = ()
    #: cost and chargeback (``--prices``, ``--costs``); None when not asked for
    costs: CostReport | None = None
    #: every waiting second charged to a cause (``results.wait_causes``); ``None`` when not worked out
    waits: WaitCauses | None = None
    #: the topology's targets judged on the run (``simulation.results.targets``), one per criterion
    targets: tuple[TargetResult, ...] = ()
    #: the run's training plans accounted for (``results.plan_account``); ``None`` without plans
    plan_account: PlanAccount | None = None
    #: the topology the run was on (the plan account's sentences name its shares' limits)
    topology: Topology | None = None
    #: ``--samples N``: ``result.shares`` are the medians across N samples (``SampledShareMetrics``, with spreads);
    #: everything else is the first sample's
    samples: int = 1
    #: ``--seed``: sample ``n`` was drawn with ``seed + n``
    seed: int = 0
    #: each sample's jobs, in sample order
    sample_jobs: tuple[int, ...] = ()
    #: the samples start from recorded jobs: sample 1 is them, samples 2..N resampled by day (seeds ``seed + n``)
    recorded: bool = False
    #: ``--samples N``: each instance type's figures across the samples (medians and spreads), in topology order
    sample_types: tuple[SampledTypeUsage, ...] = ()
    #: with ``--samples N`` and prices: each bill and waste figure's spread over the samples (``costs.bill_spreads``)
    bill_spread: dict[str, Spread] | None = None

    def shares_label(self) -> str:
        """What the shares table is, said in its title: one sample of the workload, or the medians across N."""
        from policy_engine.simulation.results.spread import ONE_SAMPLE

        if self.samples <= 1:
            return f"from {ONE_SAMPLE}"
        return f"the medians across {self.samples} samples (their spread below)"

    def samples_line(self) -> str:
        """With samples, what the shares' figures are and which sample the rest shows; else ''."""
        if self.samples <= 1:
            return ""
        from policy_engine.simulation.scenarios.samples import seeds_text

        return (f"across {self.samples} samples of the workload ({seeds_text(self.recorded, self.samples, self.seed)}"
                f", {min(self.sample_jobs):,}-{max(self.sample_jobs):,} jobs): each share's and instance type's "
                "figures are the medians with their p10-p90, the bill's beside its tables; every table titled "
                "sample 1 (the jobs, the summary, --events, --report, the cost tables, the targets) is the first "
                "sample's alone")

    def sample_one(self) -> str:
        """``sample 1 of 5 (the recorded jobs)``: what a table of the first sample alone is titled; '' without
        samples."""
        if self.samples <= 1:
            return ""
        from policy_engine.simulation.scenarios.samples import sample_one

        return sample_one(self.recorded, self.samples, self.seed)

    def deploy_note(self) -> str:
        """One line saying which names are a template's logical IDs (empty when none is)."""
        if not self.named_at_deploy:
            return ""
        return (f"named at deploy: {', '.join(self.named_at_deploy)} (their names here are the template's logical "
                "IDs; CloudFormation names them when it deploys)")


@dataclass(frozen=True)
class ExplainOutput:
    """One share (``QUEUE/SHARE``) of a checked topology, to be explained to its team."""

    topology: Topology
    share: str
    report: CheckReport
    #: ``explain --scenario``: the run's wait attribution, which the view turns into the share's wait sentences
    waits: WaitCauses | None = None
    #: ``explain --scenario``: whether the scenario's scheduler backfills (the advice differs)
    backfill: bool = False
    #: ``explain --scenario``: the run's plans accounted for (why they sat idle, what hazards cost); ``None``: no plans
    plan_account: PlanAccount | None = None
    #: ``explain --scenario``: each knob the advice considers, replayed with that one change (``None``: no scenario,
    #: so nothing was replayed and no knob is judged)
    advice: tuple[Advice, ...] | None = None
    #: what counts as helping in those replays
    helps: HelpsRule | None = None


@dataclass(frozen=True)
class DiffOutput:
    """What ``diff`` found between two topologies; ``fail_on`` is what makes it fail (the verdict says so)."""

    report: ChangeReport
    fail_on: tuple[str, ...]


@dataclass(frozen=True)
class DiffLoadFailure:
    """``diff`` inputs that did not load: the document CI reads says so (the command then exits 2)."""

    problems: list[str]
    base: str
    head: str


@dataclass(frozen=True)
class DriftOutput:
    """The account against a topology: each difference, and the calls that could not be read (one line each)."""

    differences: list[Difference]
    source: str
    region: str
    unreadable: list[str]


@dataclass(frozen=True)
class WalkthroughStep:
    """One step of AWS's example: when, what is done, what AWS's example says happens, and the jobs after it."""

    time: float
    title: str
    expected: str
    result: SimulationResult


@dataclass(frozen=True)
class GenerateOutput:
    """What ``generate`` wrote: the jobs file, the scenario beside it (if asked for), and the notes it said."""

    jobs: int
    output: str
    scenario: str | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class FitOutput:
    """A fitted workload profile (``batch-quota fit``); ``written`` is the profile file, when one was written."""

    result: FitResult
    source: str
    written: str | None = None
