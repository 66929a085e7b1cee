"""``simulate --format json``: every job, every share and the summary, streamed job by job."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from policy_engine.reports.kit.subjects import SimulateOutput
from policy_engine.simulation.results.type_usage import from_summary, weighted_utilisation


def write(output: SimulateOutput, stream: TextIO) -> None:
    """``observed_vs_simulated`` follows the summary when the workload carried observed jobs."""
    calibration = output.calibration
    extra: dict = {}
    if calibration is not None:
        extra["observed_vs_simulated"] = [row.to_json() for row in calibration]
    if output.result.plans is not None:
        from policy_engine.reports.tables.plan_tables import to_json

        extra["training_plans"] = to_json(output.result.plans)  # hours: the plans' fees are in ``costs.plans``
        if output.plan_account is not None:
            from policy_engine.reports.tables.plan_account_tables import add_to_json

            add_to_json(extra["training_plans"], output.plan_account)
    if output.waits is not None:
        extra["wait_causes"] = output.waits.to_json()
    if output.named_at_deploy:
        extra["named_at_deploy"] = list(output.named_at_deploy)
    if output.costs is not None:
        extra["costs"] = output.costs.to_json()
        if output.costs.prices is not None:
            # ``summary.cluster_utilisation`` counts every instance-hour the same; this one what each costs
            weighted = weighted_utilisation(from_summary(output.result.summary), output.costs.prices.per_instance_hour)
            # null when the capacity is worth nothing at the rates given (every type at 0 per instance-hour)
            extra["costs"]["price_weighted_utilisation"] = None if weighted is None else round(weighted, 6)
    if output.targets:
        extra["targets"] = [result.to_json() for result in output.targets]
    fields: dict[str, Sequence[object]] = {}
    if output.waits is not None:  # per job, the cause it waited longest for (null: it never waited)
        fields["wait_cause"] = [None if cause is None else cause.value for cause in output.waits.job_causes]
    if output.plan_account is not None:  # per job, SCHEDULED seconds waiting for its plan's window (null: no plan)
        fields["plan_hold_seconds"] = output.plan_account.plan_hold
    output.result.write_json(stream, extra or None, fields or None)
    stream.write("\n")
