#!/usr/bin/env python3
"""A CDK app built construct by construct, checked by ``BatchQuotaChecks`` and monitored by ``QuotaMonitoring``.

    npx cdk synth --app "python examples/hand_built/app.py"
    npx cdk synth --app "python examples/hand_built/app.py" -c gpus=32     # 40 instances of shares in 32: BQ201

Two stacks, as teams often split them: the capacity (environment) in one, the queue, its shares and the
monitoring in another (CDK turns the environment's ARN into an export and an import; the plugin reads
both templates as one account). A finding fails ``cdk synth`` naming the construct path of the resource.
"""

# ruff: noqa: I001 (quota_constructs is imported first: it quiets jsii's Node banner before aws_cdk starts jsii)
from __future__ import annotations

import quota_constructs
from quota_constructs.app_errors import reported_errors

from aws_cdk import Acknowledgment, App, Duration, Stack, Validations

GPU = "ml.g5.xlarge"


def build(app: App) -> None:
    """The app's stacks; ``-c gpus=N`` sizes the environment (default 40, what the shares add up to)."""
    Validations.of(app).add_plugins(quota_constructs.BatchQuotaChecks())
    gpus = app.node.try_get_context("gpus")
    capacity = Stack(app, "GpuCapacity")
    env = quota_constructs.ServiceEnvironment(capacity, "Gpu", service_environment_name="gpu",
                                              capacity={GPU: 40 if gpus is None else int(gpus)})
    teams = Stack(app, "TrainingQueue")
    queue = quota_constructs.TrainingJobQueue(teams, "Queue", job_queue_name="training", service_environment=env)
    shares = [
        quota_constructs.QuotaShare(teams, "Research", job_queue=queue, quota_share_name="research",
                                    capacity={GPU: 16}, strategy="LEND_AND_BORROW", borrow_limit=100),
        quota_constructs.QuotaShare(teams, "Product", job_queue=queue, quota_share_name="product",
                                    capacity={GPU: 16}, strategy="LEND"),
        quota_constructs.QuotaShare(teams, "Interns", job_queue=queue, quota_share_name="interns",
                                    capacity={GPU: 8}, strategy="LEND_AND_BORROW", borrow_limit=500),
    ]
    # interns may borrow 40 but at most 32 can be lent (BQ302, a warning): accepted, the reason kept in the report
    Validations.of(shares[2]).acknowledge(Acknowledgment(id="batch-quota::BQ302",
                                                         reason="interns take whatever is idle at night"))
    quota_constructs.QuotaMonitoring(teams, "Monitoring", [queue], shares=shares,
                                     wait_targets={"training/product": Duration.minutes(30)})


def main() -> None:
    with reported_errors():
        app = App()
        build(app)
        app.synth()


if __name__ == "__main__":
    main()
