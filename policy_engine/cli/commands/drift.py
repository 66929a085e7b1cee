"""``batch-quota drift TOPOLOGY``: the account against the topology, per object and field.

Exit 0 when equal, 1 on drift, 2 on bad input, an API error, or objects that could not
be read (each named with its call; the drift found among the readable ones is still shown).
Training plans are compared with SageMaker's ListTrainingPlans (``--no-training-plans`` skips them).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from policy_engine.cli.commands.aws_options import (
    aws_options,
    client_options,
    connect,
    exits_on_aws_errors,
    fail_aws,
    plans_option,
    read_account_plans,
)
from policy_engine.cli.commands.shared import (
    EXIT_FINDINGS,
    EXIT_OK,
    SafePath,
    fail_input,
    python_topologies,
    topology_or_exit,
)
from policy_engine.inputs.loading import LoadError, topology_from_data
from policy_engine.reports.kit.subjects import DriftOutput
from policy_engine.reports.registry import DRIFT_FORMATS

if TYPE_CHECKING:
    from policy_engine.adapters.aws.clients import AwsError
    from policy_engine.adapters.aws.drift import Difference
    from policy_engine.foundation.model import Topology


@python_topologies()
@click.command("drift")
@click.argument("topology", type=SafePath(dir_okay=False))
@DRIFT_FORMATS.option()
@plans_option
@aws_options
def command(topology: str, output_format: str, training_plans: bool, **connection: Any) -> None:
    """Compare the account with TOPOLOGY: missing, extra and different objects and fields."""
    from policy_engine.adapters.aws import drift as drift_module
    from policy_engine.adapters.aws.account import read_account

    desired = topology_or_exit(topology)
    if desired.named_at_deploy:
        fail_input([f"{topology}: {label} is named at deploy (its name is a template's logical ID); drift compares "
                    "the account's names: write the deployed name (the stack's physical ID) in the file and drop "
                    "the entry from named_at_deploy, or name the resource in the template"
                    for label in desired.named_at_deploy])
    with exits_on_aws_errors():
        options = client_options(**connection)
        api = connect(options)
        read = read_account(api, [q.name for q in desired.job_queues])
        plans, _ = read_account_plans(options, training_plans)
    if plans is not None:
        read.errors += plans.errors
        read.data["training_plans"] = plans.plans
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
    if plans is not None and not plans.errors:  # plans not read (or partly unread) are not compared
        differences += drift_module.plan_drift(desired, account)
    differences = [d for d in differences if not _unread(d, desired, [e.about for e in read.errors])]
    DRIFT_FORMATS.renderer(output_format)(DriftOutput(differences, topology, api.region,
                                                      [e.line for e in read.errors]), sys.stdout)
    if read.errors:
        fail_aws(read.errors)
    raise SystemExit(EXIT_FINDINGS if differences else EXIT_OK)


def _unread(difference: Difference, desired: Topology, abouts: list[tuple[str, ...]]) -> bool:
    """Whether a missing object is only missing because a call about it (or about everything) failed; a call is
    about the objects its error names (``AwsError.about``)."""
    from policy_engine.adapters.aws.drift import MISSING

    if difference.kind is not MISSING or not abouts:
        return False
    ref = difference.ref
    if ref.environment is not None:
        names = [ref.environment] + [q.name for q in desired.job_queues if q.service_environment == ref.environment]
    else:
        names = [name for name in (ref.share_id, ref.queue) if name is not None]
    every = [q.name for q in desired.job_queues] + [e.name for e in desired.service_environments]
    for about in abouts:
        if not any(name in about for name in every):
            return True  # a call about everything failed: nothing can be said to be missing
        if any(name in about for name in names):
            return True
    return False


def _skipped_error(name: str, reason: str) -> AwsError:
    from policy_engine.adapters.aws.clients import AwsError

    return AwsError("DescribeJobQueues", f"job queue {name}", f"not a quota-managed queue: {reason}", "Skipped",
                    (name,))
