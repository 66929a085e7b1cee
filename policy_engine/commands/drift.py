"""``batch-quota drift TOPOLOGY``: the account against the topology, per object and field.

Exit 0 when equal, 1 on drift, 2 on bad input, an API error, or objects that could not
be read (each named with its call; the drift found among the readable ones is still shown).
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Any

import click

from policy_engine.aws.cli_options import aws_options, client_options, connect, exits_on_aws_errors, fail_aws
from policy_engine.commands.shared import EXIT_FINDINGS, EXIT_OK, SafePath, fail_input, topology_or_exit
from policy_engine.loading import LoadError, topology_from_data
from policy_engine.reports.registry import DRIFT_FORMATS
from policy_engine.reports.subjects import DriftOutput

if TYPE_CHECKING:
    from policy_engine.aws.clients import AwsError
    from policy_engine.aws.drift import Difference
    from policy_engine.model import Topology


@click.command("drift")
@click.argument("topology", type=SafePath(dir_okay=False))
@DRIFT_FORMATS.option()
@aws_options
def command(topology: str, output_format: str, **connection: Any) -> None:
    """Compare the account with TOPOLOGY: missing, extra and different objects and fields."""
    from policy_engine.aws import drift as drift_module
    from policy_engine.aws.account import read_account

    desired = topology_or_exit(topology)
    with exits_on_aws_errors():
        api = connect(client_options(**connection))
        read = read_account(api, [q.name for q in desired.job_queues])
    for name, reason in read.skipped:
        read.errors.append(_skipped_error(name, reason))
    # an environment that could not be described is listed as unreadable; its queues' drift is still shown
    read.fill_unread_environments({env.name: env.model_dump(mode="json", exclude_none=True)
                                   for env in desired.service_environments})
    try:
        account = topology_from_data(read.data, f"account, Region {api.region}")
    except LoadError as error:
        fail_input(error.problems)
    differences = drift_module.drift(desired, account)
    differences = [d for d in differences if not _unread(d, desired, [e.subject for e in read.errors])]
    DRIFT_FORMATS.renderer(output_format)(DriftOutput(differences, topology, api.region,
                                                      [e.line for e in read.errors]), sys.stdout)
    if read.errors:
        fail_aws(read.errors)
    raise SystemExit(EXIT_FINDINGS if differences else EXIT_OK)


def _unread(difference: Difference, desired: Topology, subjects: list[str]) -> bool:
    """Whether a missing object is only missing because a call about it (or about everything) failed."""
    from policy_engine.aws.drift import MISSING

    if difference.kind != MISSING or not subjects:
        return False
    ref = difference.ref
    if ref.environment is not None:
        names = [ref.environment] + [q.name for q in desired.job_queues if q.service_environment == ref.environment]
    else:
        names = [name for name in (ref.share_id, ref.queue) if name is not None]
    every = [q.name for q in desired.job_queues] + [e.name for e in desired.service_environments]
    for subject in subjects:
        if not any(_mentions(subject, name) for name in every):
            return True  # a call about everything failed: nothing can be said to be missing
        if any(_mentions(subject, name) for name in names):
            return True
    return False


def _mentions(subject: str, name: str) -> bool:
    return re.search(rf"(^|[\s,/]){re.escape(name)}($|[\s,/)])", subject) is not None


def _skipped_error(name: str, reason: str) -> AwsError:
    from policy_engine.aws.clients import AwsError

    return AwsError("DescribeJobQueues", f"job queue {name}", f"not a quota-managed queue: {reason}", "Skipped")
