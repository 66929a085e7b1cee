"""``batch-quota iam-policy``: print the read-only IAM policy the account commands need (JSON)."""

from __future__ import annotations

import json

import click

from policy_engine.adapters.aws.iam_policy import COMMAND_OPERATIONS, policy_document


@click.command("iam-policy")
@click.option("--command", "commands", multiple=True, type=click.Choice(list(COMMAND_OPERATIONS)),
              help="Only what this command needs (repeatable; default: every account command).")
@click.option("--region", default="*", show_default=True, help="Region in the resource ARNs.")
@click.option("--account", default="*", show_default=True, help="Account ID in the resource ARNs.")
def command(commands: tuple[str, ...], region: str, account: str) -> None:
    """Print the least-privilege read-only IAM policy for import, drift, snapshot and history."""
    click.echo(json.dumps(policy_document(commands or None, region, account), indent=2))
