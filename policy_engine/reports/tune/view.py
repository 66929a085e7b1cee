"""``tune``'s view: what its text format and HTML page say, computed once from ``TuneOutput``: the
answer and its details, the bill line, the evidence table (title, column, rows) and the Pareto front's rows."""

from __future__ import annotations

from policy_engine.foundation.units import Unit, figure_text, money_text
from policy_engine.simulation.results.worsening import most_harmed
from policy_engine.sweep.expressions import UNITS, record_types, type_figure
from policy_engine.sweep.grammar import values_text, vary_text
from policy_engine.sweep.run_record import RunRecord
from policy_engine.sweep.run_status import RunStatus
from policy_engine.sweep.subjects import TuneOutput
from policy_engine.sweep.tune import TuneResult, changes, invalid_reasons, share_evidence


def figure(value: object, unit: Unit = Unit.NUMBER) -> str:
    """A figure as the evidence shows it: a duration, a percentage, instance-hours, or a number without float noise."""
    return figure_text(value, unit) if isinstance(value, (int, float)) else str(value)


def answer_lines(output: TuneOutput) -> list[str]:
    """The answer, as text and the HTML report say it: what is recommended, or why the current topology stays,
    or that nothing met every constraint."""
    result, out_file = output.result, output.out_file
    if result.best is None:
        return ["no candidate met every constraint: nothing to recommend"]
    first = output.objectives[0]
    if result.chosen is not None:
        return [f"recommended: {values_text(result.chosen.values)}"
                + (f" (written to {out_file})" if out_file else "")]
    if not result.keep_reason:
        return []
    # the best may be the current topology itself (the varied fields at their current values)
    values = values_text(result.best.values) + ("" if changes(result.best, result.current) else
                                                   ", the current topology itself")
    return [f"keep the current topology: {result.keep_reason} (best candidate: {values}; "
            f"{first.label} {figure(first.expression(result.best), first.expression.unit)} against "
            f"{figure(first.expression(result.current), first.expression.unit)})"
            f"{'; nothing written' if out_file else ''}"]


#: The invalid candidates text lists one by one; the rest are counted (JSON has every run's findings).
INVALID_SHOWN = 20


def invalid_lines(result: TuneResult) -> list[str]:
    """How many candidates were invalid, counted by their first rule, then each one's reason (the first
    ``INVALID_SHOWN``)."""
    reasons = invalid_reasons(result.runs)
    if not reasons:
        return []
    invalid = [record for record in result.runs if record.status == RunStatus.INVALID]
    lines = [f"invalid candidates: {len(invalid)} of {len(result.runs)} ("
             + ", ".join(f"{rule}: {count}" for rule, count in reasons.most_common()) + ")"]
    for record in invalid[:INVALID_SHOWN]:
        errors = [f for f in record.errors() if not f.get("suppressed")]
        why = f"{errors[0]['rule']} {errors[0]['object']}: {errors[0]['message']}" if errors else "fails check"
        lines.append(f"  {values_text(record.values)}: {why}")
    if len(invalid) > INVALID_SHOWN:
        lines.append(f"  ... and {len(invalid) - INVALID_SHOWN} more (--format json has every run's findings)")
    return lines


def detail_lines(output: TuneOutput) -> list[str]:
    """The nearest miss with each shortfall, or the gain that made the recommendation."""
    result = output.result
    first = output.objectives[0]
    lines = []
    if result.best is None and result.nearest is not None:
        values = values_text(result.nearest.values)
        by_text = {constraint.text: constraint for constraint in output.constraints}
        misses = "; ".join(f"{text} missed by "
                           f"{by_text[text].margin_text(amount) if text in by_text else figure(amount)}"
                           for text, amount in result.misses)
        lines.append(f"nearest candidate: {values}: {misses}")
    by_text = {constraint.text: constraint for constraint in output.constraints}
    for text, closest, amount in result.unmet:
        shortfall = by_text[text].margin_text(amount) if text in by_text else figure(amount)
        lines.append(f"no candidate meets {text}; nearest: {values_text(closest.values)}, short by {shortfall}")
    lines += invalid_lines(result)
    other = result.chosen or result.best or result.nearest
    if other is not None and result.current.status == RunStatus.OK:
        worst = most_harmed(share_evidence(result.current, other))
        which = "recommendation" if result.chosen else "candidate"
        lines.append(f"most harmed by the {which}: {worst.text()}" if worst
                     else f"no share fares worse with the {which}")
    if result.chosen is not None and result.gain is not None:
        gain = (f"{result.gain:.1%} of the current value" if result.relative_gain
                else f"{figure(result.gain, first.expression.unit)} (absolute)")
        lines.append(f"gain on {first.label}: {gain}, the margin being {result.min_gain:.1%}"
                     + (f"; better on {result.wins} of {result.samples} workload samples" if result.samples else ""))
    if (bill := bill_line(output)) is not None:
        lines.append(bill)
    return lines


def bill_line(output: TuneOutput) -> str | None:
    """With prices: what AWS would bill for the current topology and the recommended (or best) one, and its waste."""
    result, costs = output.result, output.costs
    other = result.chosen or result.best
    if costs is None or not costs.priced or other is None or not result.current.costs:
        return None
    from policy_engine.reports.tables.cost_tables import period_text

    before, after = costs.report(result.current), costs.report(other)
    if before is None or after is None:
        return None
    return (f"bill for {period_text(costs.pricing.period)}: current {money_text(before.bill.total)} -> "
            f"{'recommended' if result.chosen else 'best'} {money_text(after.bill.total)} {costs.unit} (waste "
            f"{money_text(before.waste.total)} -> {money_text(after.waste.total)})")


def evidence_title(output: TuneOutput) -> str:
    result = output.result
    if result.chosen is not None:
        return "Evidence: recommended against the current topology"
    if result.best is not None:
        return "Evidence: the best candidate against the current topology (not recommended)"
    return "Evidence: the nearest candidate against the current topology (it misses a constraint)"


def evidence_column(output: TuneOutput) -> str:
    result = output.result
    return "recommended" if result.chosen else "best candidate" if result.best else "nearest candidate"


def evidence_rows(output: TuneOutput) -> list[tuple[str, str, str]]:
    """The evidence table: each objective, constraint and figure for the current topology and the recommended
    (or best, or nearest) candidate."""
    result, objectives, constraints = output.result, output.objectives, output.constraints
    rows = []
    current, chosen = result.current, result.chosen or result.best or result.nearest
    for objective in objectives:
        unit = objective.expression.unit
        rows.append((objective.heading,
                     figure(objective.expression(current), unit) if current.status == RunStatus.OK else "-",
                     figure(objective.expression(chosen), unit) if chosen else "-"))
    for constraint in constraints:
        rows.append((f"constraint {constraint.text}",
                     constraint.verdict(current) if current.status == RunStatus.OK else "-",
                     constraint.verdict(chosen) if chosen else "-"))
    for key, label in (("wait_p95", "wait p95"), ("wait_max", "wait max"), ("preemptions", "preemptions")):
        rows.append((label, figure(current.summary[key], UNITS[key]) if current.status == RunStatus.OK else "-",
                     figure(chosen.summary[key], UNITS[key]) if chosen else "-"))
    for metric, label, unit in (("utilisation", "utilisation", Unit.FRACTION),
                                ("instance_hours_lost", "instance-hours lost", Unit.INSTANCE_HOURS)):
        for instance_type in dict.fromkeys([*record_types(current), *record_types(chosen)]):  # never added up
            of = type_figure(metric, instance_type)
            rows.append((f"{label} {instance_type}",
                         figure(of(current), unit) if current.status == RunStatus.OK else "-",
                         figure(of(chosen), unit) if chosen else "-"))
    # per share and instance type, the most harmed first (not only totals)
    shares = share_evidence(current, chosen)
    for row in shares.rows:
        for each in shares.figures[1:]:
            rows.append((f"{row.share} {row.instance_type} {each.label}",
                         figure(row.value(0, each), each.unit) if row.values[0] is not None else "-",
                         figure(row.value(1, each), each.unit) if row.values[1] is not None else "-"))
    if current.status != RunStatus.OK:
        rows.append(("status", current.status, chosen.status if chosen else "-"))
    if result.samples and chosen is not None:
        first = objectives[0]

        def spread(record: RunRecord) -> str:
            values = [first.expression(sample) for sample in record.samples]
            unit = first.expression.unit
            return f"{figure(min(values), unit)} .. {figure(max(values), unit)}" if values else "-"

        rows.append((f"{first.label}: spread over {result.samples} workload samples (min .. max; the rows above "
                     f"are means)", spread(current), spread(chosen)))
        rows.append(("workload samples on which the recommendation is better", "-",
                     f"{result.wins} of {result.samples}"))
    return rows


def front_rows(output: TuneOutput) -> list[tuple[str, ...]]:
    """The Pareto front: its rank, the varied values, the objectives."""
    result, axes, objectives = output.result, output.axes, output.objectives
    return [(str(rank), *(vary_text(r.values[a.path]) for a in axes),
             *(figure(o.expression(r), o.expression.unit) for o in objectives))
            for rank, r in enumerate(result.front, start=1)]
