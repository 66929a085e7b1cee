"""``batch-quota iam-policy``: print the read-only IAM policy the account commands need (JSON)."""

from __future__ import annotations

import json

import click

from policy_engine.adapters.aws.iam_policy import COMMAND_OPERATIONS, policy_document
from policy_engine.cli.commands.shared import fail_input
from policy_engine.foundation.limits import ACCOUNT_ID
from policy_engine.foundation.regions import region_problem


@click.command("iam-policy")
@click.option("--command", "commands", multiple=True, type=click.Choice(list(COMMAND_OPERATIONS)),
              help="Only what this command needs (repeatable; default: every account command).")
@click.option("--region", default="*", show_default=True, help="Region in the resource ARNs.")
@click.option("--account", default="*", show_default=True, help="Account ID in the resource ARNs.")
def command(commands: tuple[str, ...], region: str, account: str) -> None:
    """Print the least-privilege read-only IAM policy for import, drift, snapshot and history.

    Exit 2 when --account is not 12 digits or --region not a Region name (either may be *): the value goes into
    every ARN, where a wrong one shifts the ARN's segments."""
    problems = []
    if account != "*" and not ACCOUNT_ID.fullmatch(account):
        problems.append(f"--account {account!r}: expected an account ID of 12 digits (or *)")
    if region != "*" and (why := region_problem(region)) is not None:  # AWS's own pattern per partition
        problems.append(f"--region {region!r}: expected a Region name such as us-east-1 (or *): {why}")
    if problems:
        fail_input(problems)
    click.echo(json.dumps(policy_document(commands or None, region, account), indent=2))
