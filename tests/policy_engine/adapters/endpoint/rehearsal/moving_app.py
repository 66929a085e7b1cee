#!/usr/bin/env python3
"""A CDK app for the deploy rehearsal's tests, built from the project's constructs: two queues on two
environments; ``-c moved=1`` raises a limit (an in-place change) and moves share ``batch`` to the other queue
(its ``JobQueue`` is create-only: CloudFormation replaces it)."""

# ruff: noqa: I001 (quota_constructs is imported first: it quiets jsii's Node banner before aws_cdk starts jsii)
from __future__ import annotations

import quota_constructs
from quota_constructs.app_errors import reported_errors

from aws_cdk import App, Stack

GPU = "ml.g5.xlarge"


def build(app: App) -> None:
    moved = app.node.try_get_context("moved") == "1"
    stack = Stack(app, "Rehearsal")
    day_env = quota_constructs.ServiceEnvironment(stack, "DayEnv", service_environment_name="day-env",
                                                  capacity={GPU: 4})
    night_env = quota_constructs.ServiceEnvironment(stack, "NightEnv", service_environment_name="night-env",
                                                    capacity={GPU: 2})
    day = quota_constructs.TrainingJobQueue(stack, "Day", job_queue_name="day", service_environment=day_env)
    night = quota_constructs.TrainingJobQueue(stack, "Night", job_queue_name="night", service_environment=night_env)
    quota_constructs.QuotaShare(stack, "Research", job_queue=day, quota_share_name="research",
                                capacity={GPU: 3 if moved else 2}, strategy="LEND_AND_BORROW", borrow_limit=100)
    quota_constructs.QuotaShare(stack, "Batch", job_queue=night if moved else day, quota_share_name="batch",
                                capacity={GPU: 1}, strategy="RESERVE")
    quota_constructs.QuotaShare(stack, "Spare", job_queue=night, quota_share_name="spare",
                                capacity={GPU: 1}, strategy="LEND")


def main() -> None:
    with reported_errors():
        app = App()
        build(app)
        app.synth()


if __name__ == "__main__":
    main()
