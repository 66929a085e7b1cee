"""``tune --format text``: the recommendation, its evidence against the current topology, the Pareto front."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.table import Table

from policy_engine.foundation.units import Unit, figure_text, money_text
from policy_engine.reports.kit import terminal
from policy_engine.simulation.results.worsening import most_harmed
from policy_engine.sweep.evaluate import INVALID, OK
from policy_engine.sweep.grammar import values_text, vary_text
from policy_engine.sweep.subjects import TuneOutput
from policy_engine.sweep.tune import TuneResult, changes, feasible, invalid_reasons, share_evidence


def answer_lines(output: TuneOutput) -> list[str]:
    """The answer, as text and the HTML report say it: what is recommended, or why the current topology stays,
    or that nothing met every constraint."""
    result, out_file = output.result, output.out_file
    if result.best is None:
        return ["no candidate met every constraint: nothing to recommend"]
    first = output.objectives[0]
    if result.chosen is not None:
        return [f"recommended: {values_text(result.chosen['values'])}"
                + (f" (written to {out_file})" if out_file else "")]
    if not result.keep_reason:
        return []
    # the best may be the current topology itself (the varied fields at their current values)
    values = values_text(result.best["values"]) + ("" if changes(result.best, result.current) else
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
    invalid = [record for record in result.runs if record["status"] == INVALID]
    lines = [f"invalid candidates: {len(invalid)} of {len(result.runs)} ("
             + ", ".join(f"{rule}: {count}" for rule, count in reasons.most_common()) + ")"]
    for record in invalid[:INVALID_SHOWN]:
        errors = [f for f in record.get("findings", []) if f.get("severity") == "error" and not f.get("suppressed")]
        why = f"{errors[0]['rule']} {errors[0]['object']}: {errors[0]['message']}" if errors else "fails check"
        lines.append(f"  {values_text(record['values'])}: {why}")
    if len(invalid) > INVALID_SHOWN:
        lines.append(f"  ... and {len(invalid) - INVALID_SHOWN} more (--format json has every run's findings)")
    return lines


def detail_lines(output: TuneOutput) -> list[str]:
    """The nearest miss with each shortfall, or the gain that made the recommendation."""
    result = output.result
    first = output.objectives[0]
    lines = []
    if result.best is None and result.nearest is not None:
        values = values_text(result.nearest["values"])
        by_text = {constraint.text: constraint for constraint in output.constraints}
        misses = "; ".join(f"{text} missed by "
                           f"{by_text[text].margin_text(amount) if text in by_text else figure(amount)}"
                           for text, amount in result.misses)
        lines.append(f"nearest candidate: {values}: {misses}")
    by_text = {constraint.text: constraint for constraint in output.constraints}
    for text, closest, amount in result.unmet:
        shortfall = by_text[text].margin_text(amount) if text in by_text else figure(amount)
        lines.append(f"no candidate meets {text}; nearest: {values_text(closest['values'])}, short by {shortfall}")
    lines += invalid_lines(result)
    other = result.chosen or result.best or result.nearest
    if other is not None and result.current.get("status") == OK:
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
    if costs is None or not costs.priced or other is None or not result.current.get("costs"):
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


def write(output: TuneOutput, stream: TextIO) -> None:
    result = output.result
    console = (terminal.console(file=stream, width=terminal.FILE_WIDTH) if not stream.isatty()
               else terminal.console(file=stream))
    ok = sum(1 for r in result.runs if r["status"] == OK)
    good = sum(1 for r in result.runs if feasible(r, output.constraints))
    console.print(f"{len(result.runs)} candidate(s) simulated or checked: {ok} ok, {good} meeting every constraint")
    for line in answer_lines(output):
        console.print(line, highlight=False, soft_wrap=True)
    if result.best is not None or result.nearest is not None:
        table = Table(title=evidence_title(output))
        for column in ("", "current", evidence_column(output)):
            table.add_column(column, justify="right" if column else "left")
        for row in output.evidence:
            table.add_row(*row)
        console.print(table)
    if output.front_rows:
        front = Table(title=f"Pareto front ({len(output.front_rows)} point(s); --pick N chooses)")
        front.add_column("#", justify="right")
        for axis in output.axes:
            front.add_column(axis.path, overflow="fold")
        for objective in output.objectives:
            front.add_column(objective.heading, justify="right")
        for point in output.front_rows:
            front.add_row(*point)
        console.print(front)
    _decision(output, console)


def figure(value: object, unit: Unit = Unit.NUMBER) -> str:
    """A figure as the evidence shows it: a duration, a percentage, instance-hours, or a number without float noise."""
    return figure_text(value, unit) if isinstance(value, (int, float)) else str(value)



def _decision(output: TuneOutput, console: Console) -> None:
    """The answer in words: keep the current topology, or the nearest miss; the promises changed; the
    assumption-sensitivity table."""
    from policy_engine.reports.diff.text import promise_line

    result, promises, policy = output.result, output.promises, output.policy
    first = output.objectives[0]
    for line in detail_lines(output):
        console.print(line, highlight=False, soft_wrap=True)
    if promises:
        named = policy.value if policy else "keep"
        console.print(f"promise changes made by --guarantee-policy {named} (diff fails on them until reviewed):",
                      highlight=False)
        for change in promises:
            console.print(f"  {promise_line(change)}", highlight=False, soft_wrap=True)
    if result.sensitivity:
        table = Table(title=f"Assumption sensitivity: {first.label} under each assumption (never written into "
                            f"the topology)")
        for column in ("assumption", "current", "recommended" if result.chosen else "best candidate",
                       "best under it", "best candidate's values"):
            table.add_column(column, justify="left" if column in ("assumption", "best candidate's values")
                             else "right", overflow="fold")
        for row in result.sensitivity:
            def shown(record: dict | None) -> str:
                return (figure(first.expression(record), first.expression.unit) if record and record["status"] == OK
                        else "-")

            table.add_row(values_text(row["assumption"]),
                          shown(row["current"]), shown(row["recommended"]), shown(row["best"]),
                          ", ".join(f"{k}={vary_text(v)}" for k, v in row["best"]["values"].items()
                                    if k in result.current["values"]) if row["best"] else "-")
        console.print(table)
