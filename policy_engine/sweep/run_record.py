"""One sweep or tune run as a value: the candidate, how it ended, its findings or error, and its figures.

Built where a candidate is evaluated (``evaluate.py``), carried through the sweep, tune, ``--resume`` and the Dask
workers (it pickles: plain fields, a module-level class) to the renderers; a dict only at the edges: the JSON
``runs`` objects (``to_json``), the Parquet dataset and the CSV rows (``dataset.flat_row`` reads the fields, and
``dataset.ResultsDataset`` builds records back from its rows).

The figures are kept as the documents ``simulate --format json`` and ``check --format json`` write (``summary``,
``shares``, ``targets``, the findings) and the price-free ledgers (``costs``): the sweep's JSON output holds them as
they are, and objectives read them by figure name (``expressions.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from policy_engine.foundation.json_data import JsonObject
from policy_engine.simulation.results.type_usage import SUMMARY_KEY
from policy_engine.sweep.run_status import RunStatus

#: The keys of one run in the JSON documents of ``sweep`` and ``tune`` (``RunRecord.to_json``).
RUN_KEYS = ("values", "status", "findings", "error", "summary", "shares", "targets", "costs")


@dataclass(frozen=True, kw_only=True)
class RunFigures:
    """What an objective reads: one run's (or one workload sample's) ``summary``, ``shares`` and ``targets`` as
    simulate's JSON has them, and the ledgers a bill metric prices (``None``: not simulated, or a sample)."""

    summary: JsonObject = field(default_factory=dict)
    shares: tuple[JsonObject, ...] = ()
    #: the billable and capacity ledgers, price-free (``costs.ledgers``), priced when read (``cost_metrics``)
    costs: JsonObject | None = None
    #: the topology's targets judged on the run (``simulate --format json``'s ``targets``; a sample keeps none)
    targets: tuple[JsonObject, ...] = ()

    def types(self) -> list[str]:
        """The instance types the run has figures for, in its order (none for a run that was not simulated)."""
        by_type: Mapping[str, Any] = self.summary.get(SUMMARY_KEY, {}) if self.summary else {}
        return list(by_type)


@dataclass(frozen=True, kw_only=True)
class RunRecord(RunFigures):
    """One candidate's run: its grid index and varied values, how it ended, and (when ok) its figures."""

    #: the candidate's position in the full grid (``-1``: tune's current topology)
    index: int
    #: each varied field's value, by its ``--vary`` path, in axis order
    values: dict[str, Any]
    status: RunStatus = RunStatus.OK
    #: every finding of ``check`` on the candidate's topology (as ``check --format json`` writes them)
    findings: tuple[JsonObject, ...] = ()
    #: what raised, for a run of status ``error`` (else empty)
    error: str = ""
    #: ``tune --workload-samples``: each sample's own figures (the record's figures are their mean)
    samples: tuple[RunFigures, ...] = ()

    def errors(self) -> list[JsonObject]:
        """The findings of severity ``error`` (suppressed ones included, as ``check`` lists them)."""
        return [finding for finding in self.findings if finding["severity"] == "error"]

    def to_json(self, costs: JsonObject | None) -> JsonObject:
        """The run as the JSON documents of ``sweep`` and ``tune`` write it: exactly ``RUN_KEYS``; ``costs`` is the
        run's cost report (priced by the caller, ``cost_metrics.RunCosts``), not its ledgers."""
        return {"values": self.values, "status": self.status, "findings": list(self.findings), "error": self.error,
                "summary": self.summary, "shares": list(self.shares), "targets": list(self.targets), "costs": costs}
