"""``--prices`` and ``--chargeback``: the options every command that reports costs shares (simulate, sweep, tune,
diff), and reading the prices file against the topologies it prices (one line per problem, exit 2)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from policy_engine.commands.shared import SafePath, fail_input

if TYPE_CHECKING:
    from policy_engine.model import Topology
    from policy_engine.prices import Prices
    from policy_engine.simulation.outputs.costs import Convention
    from policy_engine.sweep.cost_metrics import Pricing

F = TypeVar("F", bound=Callable[..., Any])
CONVENTIONS = ("usage", "limit")


def cost_options(function: F) -> F:
    """Add ``--prices FILE`` and ``--chargeback usage|limit`` to a click command."""
    function = click.option(
        "--chargeback", type=click.Choice(CONVENTIONS), default=None,
        help="What a share's cost is: usage (default: own use + borrowed charged, lent capacity credited) or limit "
             "(its own limit charged for the whole run, + borrowed, - lent). See docs/costs.md.")(function)
    function = click.option(
        "--prices", "prices_path", type=SafePath(dir_okay=False), metavar="FILE",
        help="Your rates per instance-hour (YAML/JSON: {currency: USD, per_instance_hour: {TYPE: number}}); "
             "costs are then in that currency, else in instance-hours.")(function)
    return function


def prices_or_exit(path: str | None, topologies: Iterable[Topology]) -> Prices | None:
    """The prices file checked against ``topologies``; every problem is one line and exit 2."""
    if path is None:
        return None
    from policy_engine.diagnostics import LoadError
    from policy_engine.prices import load_prices

    try:
        return load_prices(path, topologies)
    except LoadError as error:
        fail_input(error.problems)


def convention(value: str | None) -> Convention:
    from policy_engine.simulation.outputs.costs import Convention

    return Convention(value or Convention.USAGE.value)


def pricing_or_exit(path: str | None, chargeback: str | None, topology: Topology,
                    expressions: Iterable[str] = ()) -> Pricing:
    """How sweep and tune price ``cost``, ``idle_cost`` and ``share(X).cost``; says the unit when one is used."""
    from policy_engine.sweep.cost_metrics import Pricing, uses_cost

    pricing = Pricing(prices_or_exit(path, [topology]), convention(chargeback))
    if uses_cost(expressions):
        click.echo(f"note: cost metrics are in {pricing.unit} ({pricing.convention.value} chargeback convention"
                   + ("; give --prices FILE to price them)" if pricing.prices is None else ")"), err=True)
    return pricing
