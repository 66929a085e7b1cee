"""``tune``'s view: what its text format and HTML page say, computed once from ``TuneOutput``: the
answer and its details, the bill line, the evidence table (title, column, rows) and the Pareto front's rows."""

from __future__ import annotations

from typing import Any

from policy_engine.foundation.units import Unit, figure_text, money_text
from policy_engine.simulation.results.worsening import most_harmed, worsenings
from policy_engine.sweep.expressions import UNITS, record_types, type_figure
from policy_engine.sweep.grammar import values_text, vary_text
from policy_engine.sweep.run_record import RunRecord
from policy_engine.sweep.run_status import RunStatus
from policy_engine.sweep.subjects import TuneOutput
from policy_engine.sweep.tune import (
    Objective,
    SensitivityRow,
    TuneResult,
    changes,
    feasible,
    invalid_reasons,
    share_evidence,
)


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


# --- what the text format adds: the billing period, the counts, the promises changed, the sensitivity table --


def bill_period(output: TuneOutput) -> str | None:
    """What every run's bill covers (``--period``, docs/costs.md); ``None`` when nothing is priced over a part."""
    costs = output.costs
    if costs is not None and (costs.priced or not costs.pricing.period.whole):
        from policy_engine.simulation.results.billable import period_text

        return period_text(costs.pricing.period)
    return None


def counts_line(output: TuneOutput) -> str:
    """``N candidate(s) simulated or checked: n ok, n meeting every constraint``."""
    runs = output.result.runs
    ok = sum(1 for r in runs if r.status == RunStatus.OK)
    good = sum(1 for r in runs if feasible(r, output.constraints))
    return f"{len(runs)} candidate(s) simulated or checked: {ok} ok, {good} meeting every constraint"


def promise_lines(output: TuneOutput) -> list[str]:
    """The guarantee declarations the recommendation changes (``--guarantee-policy``): a heading, one line each."""
    if not output.promises:
        return []
    from policy_engine.reports.tables.promise_lines import promise_line

    named = output.policy.value if output.policy else "keep"
    return [f"promise changes made by --guarantee-policy {named} (diff fails on them until reviewed):",
            *(f"  {promise_line(change)}" for change in output.promises)]


def sensitivity_title(output: TuneOutput) -> str:
    return (f"Assumption sensitivity: {output.objectives[0].label} under each assumption (never written into "
            f"the topology)")


def sensitivity_columns(output: TuneOutput) -> tuple[str, ...]:
    return ("assumption", "current", "recommended" if output.result.chosen else "best candidate", "best under it",
            "best candidate's values")


def sensitivity_rows(output: TuneOutput) -> list[tuple[str, str, str, str, str]]:
    """Per assumption: the first objective for the current, the recommended (or best) and the best under it, and
    the best candidate's values."""
    result, first = output.result, output.objectives[0]

    def shown(record: RunRecord | None) -> str:
        if record is None or record.status != RunStatus.OK:
            return "-"
        return figure(first.expression(record), first.expression.unit)

    return [(values_text(row.assumption), shown(row.current), shown(row.recommended), shown(row.best),
             ", ".join(f"{k}={vary_text(v)}" for k, v in row.best.values.items()
                       if k in result.current.values) if row.best else "-")
            for row in result.sensitivity]


# --- the page's chart, the JSON document -------------------------------------------------------------------


def chart_points(output: TuneOutput) -> list[tuple[float, float, bool, bool]]:
    """Per ok run: the first two objectives, whether it is on the Pareto front, whether it meets every constraint."""
    result, objectives = output.result, output.objectives
    on_front = {id(r) for r in result.front}
    return [(objectives[0].expression(r), objectives[1].expression(r), id(r) in on_front,
             feasible(r, output.constraints)) for r in result.runs if r.status == RunStatus.OK]


def _evidence_json(result: TuneResult) -> dict[str, Any]:
    other = result.chosen or result.best or result.nearest
    if other is None or result.current.status != RunStatus.OK:
        return {"evidence": None, "harmed": []}
    evidence = share_evidence(result.current, other)
    return {"evidence": evidence.to_json(), "harmed": [w.to_json() for w in worsenings(evidence)]}


def document(output: TuneOutput) -> dict[str, Any]:
    """``tune --format json``'s document (each run as ``sweep --format json`` writes it)."""
    from policy_engine.reports.tables.sweep_runs import run_json as run_record_json

    result = output.result

    def run_json(record: RunRecord) -> dict[str, Any]:
        return run_record_json(record, output.costs)

    return {
        "objectives": [o.label for o in output.objectives],
        "constraints": [c.text for c in output.constraints],
        "cost_unit": output.costs.unit if output.costs is not None else None,
        "recommended": run_json(result.chosen) if result.chosen else None,
        "keep_current": bool(result.keep_reason),
        "keep_reason": result.keep_reason or None,
        "best": run_json(result.best) if result.best else None,
        "gain": result.gain, "gain_relative": result.relative_gain, "min_gain": output.min_gain,
        "workload_samples": result.samples, "wins": result.wins,
        "spread": _spreads(result, output.objectives) if result.samples else None,
        "nearest": ({"run": run_json(result.nearest),
                     "misses": [{"constraint": text, "by": amount} for text, amount in result.misses]}
                    if result.nearest else None),
        "unmet": [{"constraint": text, "nearest": run_json(closest), "by": amount}
                  for text, closest, amount in result.unmet],
        "invalid_by_rule": dict(invalid_reasons(result.runs).most_common()),
        "promise_changes": [p.to_dict() for p in output.promises],
        "sensitivity": [_sensitivity_json(row, output.objectives) for row in result.sensitivity],
        "current": run_json(result.current),
        # per share and type, the current topology against the recommended (or best, or nearest) candidate, the
        # most harmed first, and every share it harms (``worsening``): the evidence is per share, not only totals
        **_evidence_json(result),
        "front": [run_json(r) for r in result.front],
        "runs": [run_json(r) for r in result.runs],
    }


def _spreads(result: TuneResult, objectives: list[Objective]) -> dict[str, Any]:
    def spread(record: RunRecord | None) -> dict[str, Any] | None:
        if not record or not record.samples:
            return None
        values = [objectives[0].expression(sample) for sample in record.samples]
        return {"values": values, "min": min(values), "max": max(values)}

    return {"current": spread(result.current), "best": spread(result.best)}


def _sensitivity_json(row: SensitivityRow, objectives: list[Objective]) -> dict[str, Any]:
    def value(record: RunRecord | None) -> float | None:
        return objectives[0].expression(record) if record and record.status == RunStatus.OK else None

    return {"assumption": row.assumption, "current": value(row.current),
            "recommended": value(row.recommended), "best": value(row.best),
            "best_values": row.best.values if row.best else None}
