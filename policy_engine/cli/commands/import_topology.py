"""``batch-quota import``: an account's (or a CloudFormation template's) quota resources as a topology file.

Read-only. From the account: DescribeJobQueues, DescribeSchedulingPolicies,
DescribeServiceEnvironments, ListQuotaShares and ListTagsForResource per share (see
``policy_engine.adapters.aws.account``); queues that are not quota-managed SAGEMAKER_TRAINING
queues are listed as skipped with the reason. System tags (``aws:*``) become the
read-only ``system_tags`` note. SageMaker's ListTrainingPlans and DescribeTrainingPlan read the
account's training plans (``--no-training-plans`` skips them). Exit 0 on success, 2 when a call fails or an object
cannot be read (nothing is written then).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import click

from policy_engine.adapters.aws.clients import AwsError
from policy_engine.cli.commands.aws_options import (
    aws_options,
    client_options,
    connect,
    exits_on_aws_errors,
    fail_aws,
    plans_option,
    read_account_plans,
)
from policy_engine.cli.commands.shared import EXIT_OK, SafePath, fail_input
from policy_engine.foundation.output_files import atomic_write
from policy_engine.inputs.input_files import refuse_overwriting_inputs
from policy_engine.inputs.loading import LoadError, topology_from_data


@click.command("import")
@click.option("--queue", "queues", multiple=True, metavar="NAME", help="Import only this job queue (repeatable).")
@click.option("--from-template", "template", type=SafePath(dir_okay=False, exists=True), default=None,
              help="Read a CloudFormation template (JSON or YAML) instead of the account.")
@click.option("-o", "--output", type=SafePath(dir_okay=False), default=None,
              help="Write the topology here (.yaml or .json); default: standard output.")
@plans_option
@aws_options
def command(queues: tuple[str, ...], template: str | None, output: str | None, training_plans: bool,
            **connection: Any) -> None:
    """Import quota-managed job queues, their environments and shares as a topology file."""
    from policy_engine.adapters.aws.topology_file import topology_text

    if template is not None:
        if queues:
            fail_input(["--queue applies to the account; a template's queues are all imported"])
        if overwritten := refuse_overwriting_inputs({"--output": output}, [template]):
            fail_input(overwritten)
        from policy_engine.inputs.template import load_template

        try:
            topology = load_template(template)
        except LoadError as error:
            fail_input(error.problems)
        header = [f"imported from CloudFormation template {click.format_filename(template)} by batch-quota import"]
        if topology.named_at_deploy:
            header += ["named at deploy: the template names none of " + ", ".join(topology.named_at_deploy) + ";",
                       "  their names here are the template's logical IDs (CloudFormation generates the real ones at",
                       "  deploy). check and simulate work with them; drift needs the deployed names"]
    else:
        from policy_engine.adapters.aws.account import read_account

        with exits_on_aws_errors():
            options = client_options(**connection)
            api = connect(options)
            read = read_account(api, queues)
            plans, plans_api = read_account_plans(options, training_plans)
        if plans is not None:
            read.errors += plans.errors
            if plans.plans:
                read.data["training_plans"] = plans.plans
        for name, reason in read.skipped:
            click.echo(f"skipped job queue {name}: {reason}", err=True)
        if queues and read.skipped:  # asked for by name: importing nothing for it would be a silent pass
            read.errors += [AwsError("DescribeJobQueues", f"job queue {name}", f"cannot be imported: {reason}",
                                     "NotQuotaQueue") for name, reason in read.skipped]
        for note in read.notes:
            click.echo(f"note: {note}", err=True)
        if read.errors or read.missing:
            fail_aws(read.missing_errors(api.region) + read.errors)
        source = f"account, Region {api.region}"
        try:
            topology = topology_from_data(read.data, source)
        except LoadError as error:
            fail_input(error.problems)
        calls = sum(api.calls.values()) + (sum(plans_api.calls.values()) if plans_api is not None else 0)
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        header = [f"imported from the {source} by batch-quota import at {stamp} ({calls} API calls)",
                  "system_tags: system tags (aws:*) that say which stack owns an object; read-only, never deployed"]
        click.echo(f"imported {len(topology.job_queues)} job queue(s), "
                   f"{sum(len(q.shares) for q in topology.job_queues)} quota share(s), "
                   f"{len(topology.training_plans)} training plan(s) in {calls} API call(s)", err=True)
    text = topology_text(topology, output, header)
    if output is None:
        click.echo(text, nl=False)
    else:
        with exits_on_aws_errors(), atomic_write(output) as handle:
            handle.write(text)
    raise SystemExit(EXIT_OK)
