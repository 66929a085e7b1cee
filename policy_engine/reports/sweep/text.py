"""``sweep --format text``: the best runs by the objective as a table, then every run that did not finish."""

from __future__ import annotations

from typing import TextIO

from rich.table import Table

from policy_engine.foundation.units import Unit, duration_text, figure_text, instance_hours_text
from policy_engine.reports.kit import terminal
from policy_engine.reports.tables.target_tables import summary_line
from policy_engine.simulation.results.billable import period_text
from policy_engine.simulation.results.targets import from_json
from policy_engine.sweep.cost_metrics import cluster_figure
from policy_engine.sweep.expressions import record_types, type_figure
from policy_engine.sweep.grammar import values_text, vary_text
from policy_engine.sweep.ranking import ranked
from policy_engine.sweep.run_status import RunStatus
from policy_engine.sweep.subjects import SweepOutput
from policy_engine.sweep.target_constraints import missed_targets, targets_summary


def write(output: SweepOutput, stream: TextIO) -> None:
    records, axes, objective, maximize, top = (output.records, output.axes, output.objective, output.maximize,
                                               output.top)
    console = (terminal.console(file=stream, width=terminal.FILE_WIDTH) if not stream.isatty()
               else terminal.console(file=stream))
    if output.costs is not None and (output.costs.priced or not output.costs.pricing.period.whole):
        # what every run's bill covers, first, as simulate says it (--period, docs/costs.md)
        console.print(f"Bill for {period_text(output.costs.pricing.period)}.", markup=False, highlight=False)
    best = ranked(records, objective, maximize)
    table = Table(title=f"Best {min(top, len(best))} of {len(best)} run(s) by "
                        f"{'max' if maximize else 'min'} {objective.text}")
    table.add_column("#", justify="right")
    for axis in axes:
        table.add_column(axis.path, overflow="fold")
    types = list(dict.fromkeys(t for _, record in best[:top] for t in record_types(record)))
    costs = output.costs if output.costs is not None and output.costs.priced else None  # money adds up across types
    # the run's bill and waste, unless the objective already is one of them
    cost_figures = [(name, label) for name, label in (("bill", "bill"), ("waste_cost", "waste"))
                    if objective.text != name]
    cost_columns = [f"{label} {costs.unit}" for _, label in cost_figures] if costs is not None else []
    heading = objective.heading
    for column in (heading, *(f"util {t}" for t in types), "wait p95", "wait max", "preemptions",
                   *(f"inst-h lost {t}" for t in types), *cost_columns, "targets"):
        table.add_column(column, justify="right", overflow="fold", no_wrap=column == heading)  # the ranking's own
    for rank, (score, record) in enumerate(best[:top], start=1):
        summary = record.summary
        report = costs.report(record) if costs is not None else None
        priced = ([figure_text(cluster_figure(report, name), Unit.COST) for name, _ in cost_figures]
                  if report else ["-"] * len(cost_columns))
        table.add_row(str(rank), *(vary_text(record.values[axis.path]) for axis in axes),
                      figure_text(score, objective.unit),
                      *(figure_text(type_figure("utilisation", t)(record), Unit.FRACTION) for t in types),
                      duration_text(summary["wait_p95"]), duration_text(summary["wait_max"]),
                      f"{summary['preemptions']:,}",
                      *(instance_hours_text(type_figure("instance_hours_lost", t)(record)) for t in types),
                      *priced, targets_summary(record))
    console.print(table)
    if best and best[0][1].targets:  # the margins of the run a reader would pick, not only a count
        line = summary_line([from_json(entry) for entry in best[0][1].targets])
        console.print(f"#1 {line}", highlight=False, soft_wrap=True)
    counts: dict[str, int] = {}
    for record in records:
        counts[record.status] = counts.get(record.status, 0) + 1
    where = f"; results in {output.out_dir}" if output.out_dir else ""
    console.print(f"{len(records):,} run(s): " + ", ".join(f"{n:,} {status}" for status, n in sorted(counts.items()))
                  + where)
    infeasible = sum(1 for record in records if record.status == RunStatus.OK and missed_targets(record))
    if infeasible:
        console.print(f"{infeasible:,} ok run(s) miss a target of the topology (infeasible; ranked last)")
    for record in records:
        if record.status == RunStatus.OK:
            continue
        values = values_text(record.values)
        if record.status == RunStatus.ERROR:
            console.print(f"  error  {values}: {record.error}", highlight=False)
        else:
            errors = record.errors()
            first = errors[0] if errors else {"rule": "?", "object": "?", "message": "?"}
            more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
            console.print(f"  invalid  {values}: {first['rule']} {first['object']}: {first['message']}{more}",
                          highlight=False, soft_wrap=True)
