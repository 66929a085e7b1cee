"""``--prices``, ``--chargeback`` and ``--period``: the options every command that reports the bill shares
(simulate, compare, sweep, tune, diff), reading the prices file against the topologies it prices and the period
against the scenario (one line per problem, exit 2)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import click

from policy_engine.cli.commands.shared import SafePath, fail_input

if TYPE_CHECKING:
    from policy_engine.foundation.model import Topology
    from policy_engine.inputs.prices import Prices
    from policy_engine.simulation.results.billable import Period
    from policy_engine.simulation.results.costs import Convention
    from policy_engine.sweep.cost_metrics import Pricing
    from policy_engine.sweep.grammar import Axis

F = TypeVar("F", bound=Callable[..., Any])
#: How far from time 0 a ``--period`` edge may lie (a century: any real billing window, never an overflow).
MAX_PERIOD_SECONDS = 100 * 366 * 86400
CONVENTIONS = ("usage", "limit")


def cost_options(function: F) -> F:
    """Add ``--prices FILE``, ``--chargeback usage|limit`` and ``--period START..END`` to a click command."""
    function = click.option(
        "--period", "period_text", metavar="START..END", default=None,
        help="Bill only this window: durations from the scenario's time 0 (0s..30d) or ISO 8601 dates when the "
             "scenario has a start; attempts are cut at its edges, plan fees prorated by reserved instance-hours "
             "inside it. Default: the whole workload, each plan's whole fee.")(function)
    function = click.option(
        "--chargeback", type=click.Choice(CONVENTIONS), default=None,
        help="Which per-share view: usage (default: each share's bill, its jobs' on-demand spend and its part of "
             "the plans' fees) or limit (the budget view: limit x rate as the maximum spend, the bill over it). "
             "See docs/costs.md.")(function)
    function = click.option(
        "--prices", "prices_path", type=SafePath(dir_okay=False), metavar="FILE",
        help="Your rates per instance-hour (YAML/JSON: {currency: USD, per_instance_hour: {TYPE: number}}); "
             "costs are then in that currency, else in instance-hours.")(function)
    return function


def prices_or_exit(path: str | None, topologies: Iterable[Topology], varied: Mapping[str, str] | None = None
                   ) -> Prices | None:
    """The prices file checked against ``topologies`` (and the types ``varied`` adds: type -> the ``--vary``);
    every problem is one line and exit 2."""
    if path is None:
        return None
    from policy_engine.foundation.diagnostics import LoadError
    from policy_engine.inputs.prices import load_prices

    topologies = list(topologies)
    try:
        prices = load_prices(path, topologies, varied)
    except LoadError as error:
        fail_input(error.problems)
    note_unused(prices, len(topologies))
    return prices


def note_unused(prices: Prices, topologies: int) -> None:
    """One stderr note naming the priced instance types no topology of the run uses (accepted: a team keeps one
    rate card for all its topologies; ignored for this run)."""
    if prices.unused:
        users = {1: "the topology", 2: "either topology"}.get(topologies, f"any of the {topologies} topologies")
        click.echo(f"note: {prices.source}: {', '.join(prices.unused)} priced but not used by {users}: "
                   "ignored for this run", err=True)


def convention(value: str | None) -> Convention:
    from policy_engine.simulation.results.costs import Convention

    return Convention(value or Convention.USAGE.value)


def period_or_exit(text: str | None, origin: datetime | None) -> Period:
    """``--period START..END`` as seconds from the scenario's time 0 (``origin``: its start, for ISO 8601 dates);
    one line and exit 2 when it cannot be read."""
    from policy_engine.simulation.results.billable import Period

    if text is None:
        return Period()
    start_text, sep, end_text = text.partition("..")
    if not sep or not start_text.strip() or not end_text.strip():
        fail_input([f"--period {text!r}: expected START..END, such as 0s..30d or 2026-11-01..2026-12-01"])
    bounds = [_period_edge(part.strip(), origin, text) for part in (start_text, end_text)]
    if not all(math.isfinite(bound) and abs(bound) <= MAX_PERIOD_SECONDS for bound in bounds):
        fail_input([f"--period {text!r}: each edge must lie within {MAX_PERIOD_SECONDS // 86400:,} days of time 0"])
    if not bounds[1] > bounds[0]:
        fail_input([f"--period {text!r}: its end must come after its start"])
    return Period(bounds[0], bounds[1])


def _period_edge(part: str, origin: datetime | None, text: str) -> float:
    from policy_engine.foundation.units import parse_duration

    if part in ("0", "0s"):
        return 0.0
    try:
        return parse_duration(part)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(part.replace("Z", "+00:00"))
    except ValueError:
        fail_input([f"--period {text!r}: {part!r} is neither a duration from time 0 (30d, 12h, 90m, 3600s) nor an "
                    "ISO 8601 date"])
    if origin is None:
        fail_input([f"--period {text!r}: {part!r} is a date, and the scenario has no start (an ISO 8601 start: "
                    "to count from); write it as a duration from time 0 instead"])
    if (moment.tzinfo is None) != (origin.tzinfo is None):
        moment = moment.replace(tzinfo=origin.tzinfo) if moment.tzinfo is None else moment.replace(tzinfo=None)
    return (moment - origin).total_seconds()


def pricing_or_exit(path: str | None, chargeback: str | None, topology: Topology,
                    expressions: Iterable[str] = (), axes: Iterable[Axis] = (), period_text: str | None = None,
                    origin: datetime | None = None) -> Pricing:
    """How sweep and tune price ``bill``, ``waste_cost`` and ``share(X).bill`` over ``--period`` (``note_pricing``
    says the unit once the expressions are parsed). An instance type a ``--vary`` adds to the candidates
    (``gpu.capacity.ml.p5.48xlarge=0..2``) needs a price too. A retired capacity-priced metric (``cost``,
    ``idle_cost``...) is one line naming the new one."""
    from policy_engine.sweep.cost_metrics import Pricing, retired

    expressions = list(expressions)
    refusals = [refusal for text in expressions if (refusal := retired(text)) is not None]
    if refusals:
        fail_input(list(dict.fromkeys(refusals)))
    varied = {axis.instance_type: axis.path for axis in axes if axis.field == "capacity" and axis.instance_type}
    return Pricing(prices_or_exit(path, [topology], varied), convention(chargeback),
                   period_or_exit(period_text, origin))


def note_pricing(pricing: Pricing, reads_bill: bool) -> None:
    """Say the unit of the bill metrics when an objective or constraint reads one (``Expression.reads_bill``), or
    when prices or a period were given."""
    if reads_bill or pricing.prices is not None or not pricing.period.whole:
        from policy_engine.reports.tables.cost_tables import period_text as words

        click.echo(f"note: bill metrics are in {pricing.unit}, over {words(pricing.period)}"
                   + ("; give --prices FILE to price them" if pricing.prices is None else ""), err=True)
