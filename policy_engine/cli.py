"""The ``batch-quota`` command line.

Exit codes, shared by every sub-command: 0 fine, 1 a rule found an error,
2 the input cannot be loaded or the command is misused (click's usage errors
already exit 2). Users never see a traceback: ``LoadError`` becomes one line
per problem on stderr.
"""

from __future__ import annotations

from pathlib import Path

import click

from policy_engine.examples import example_topology
from policy_engine.loading import LoadError, load_topology
from policy_engine.model import Topology

EXIT_OK, EXIT_FINDINGS, EXIT_BAD_INPUT = 0, 1, 2


def fail_input(problems: list[str]) -> None:
    """Print every problem on its own line and exit 2."""
    for problem in problems:
        click.echo(f"error: {problem}", err=True)
    raise SystemExit(EXIT_BAD_INPUT)


def topology_or_exit(path: str | Path | None) -> Topology:
    """Load ``path`` (or the embedded example when ``None``), exiting 2 on bad input."""
    if path is None:
        return example_topology()
    try:
        return load_topology(path)
    except LoadError as error:
        fail_input(error.problems)
        raise  # unreachable, for type checkers


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="batch-quota")
def main() -> None:
    """Define, check, simulate and deploy AWS Batch quota shares."""


def _register() -> None:
    """Attach each sub-command module's ``command`` to the group."""
    from policy_engine.commands import check
    from policy_engine.commands import explain, graph
    from policy_engine.commands import generate, simulate, walkthrough

    for module in (check, explain, graph, generate, simulate, walkthrough):
        main.add_command(module.command)


_register()
