"""``--prices`` and ``--chargeback``: the options every command that reports costs shares (simulate, sweep, tune,
diff), and reading the prices file against the topologies it prices (one line per problem, exit 2)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import click

from policy_engine.cli.commands.shared import SafePath, fail_input

if TYPE_CHECKING:
    from policy_engine.foundation.model import Topology
    from policy_engine.inputs.prices import Prices
    from policy_engine.simulation.results.costs import Convention
    from policy_engine.sweep.cost_metrics import Pricing
    from policy_engine.sweep.grammar import Axis

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


def pricing_or_exit(path: str | None, chargeback: str | None, topology: Topology,
                    expressions: Iterable[str] = (), axes: Iterable[Axis] = ()) -> Pricing:
    """How sweep and tune price ``cost``, ``idle_cost`` and ``share(X).cost``; says the unit when one is used. An
    instance type a ``--vary`` adds to the candidates (``gpu.capacity.ml.p5.48xlarge=0..2``) needs a price too."""
    from policy_engine.sweep.cost_metrics import Pricing, uses_cost, uses_total_cost

    varied = {axis.instance_type: axis.path for axis in axes if axis.field == "capacity" and axis.instance_type}
    pricing = Pricing(prices_or_exit(path, [topology], varied), convention(chargeback))
    if uses_cost(expressions):
        click.echo(f"note: cost metrics are in {pricing.unit} ({pricing.convention.value} chargeback convention"
                   + ("; give --prices FILE to price them)" if pricing.prices is None else ")"), err=True)
    if uses_total_cost(expressions):
        click.echo("note: cost is the capacity over each candidate's whole run, until its last job ends: one that "
                   "drains its backlog later costs more with the same capacity; used_cost is what jobs ran on",
                   err=True)
    return pricing
