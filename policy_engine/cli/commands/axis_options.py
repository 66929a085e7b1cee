"""``--vary`` and ``--guarantee-policy``: the search-space options ``sweep`` and ``tune`` share, defined once, so a
transfer axis over a share with a declared guarantee means the same in both."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from policy_engine.sweep.guarantee_policy import GuaranteePolicy

F = TypeVar("F", bound=Callable[..., Any])


def axis_options(vary_help: str) -> Callable[[F], F]:
    """Add ``--vary PATH=VALUES`` (repeatable) and ``--guarantee-policy keep|follow|drop`` to a click command."""

    def add(function: F) -> F:
        function = click.option(
            "--guarantee-policy", "guarantee_policy", type=click.Choice([p.value for p in GuaranteePolicy]),
            default=GuaranteePolicy.KEEP.value, show_default=True,
            help="A declared guarantee when its share's limit moves: keep it (a candidate that breaks it is "
                 "invalid), follow (min(declared, proven)) or drop it; follow and drop are promise changes, "
                 "printed, which diff fails on until reviewed.")(function)
        return click.option("--vary", "vary", multiple=True, metavar="PATH=VALUES", help=vary_help)(function)

    return add
