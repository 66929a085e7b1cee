"""checkov over the templates the constructs synthesize (a quota stack with ``QuotaMonitoring``): every check passes
but the few accepted below, each with its reason. checkov's pins conflict with the project's, so it runs from its
own environment (``make test-checkov``, as ``make test-sdk`` does for the SageMaker SDK); not part of ``make test``.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from aws_cdk import App, Duration, Stack

from quota_constructs import QuotaMonitoring, QuotaShare, ServiceEnvironment, TrainingJobQueue
from tests.quota_constructs.conftest import CDK_CONTEXT

CHECKOV = os.environ.get("BATCH_QUOTA_CHECKOV")
pytestmark = [pytest.mark.checkov,
              pytest.mark.skipif(not CHECKOV, reason="checkov environment not set up (make test-checkov)")]

#: checkov's findings the project accepts, and why.
ACCEPTED = {
    "CKV_AWS_117": "the monitoring function calls only AWS APIs (Batch, CloudWatch): a VPC would add NAT or "
                   "interface endpoints and protect nothing it holds",
}
GPU = "ml.g5.xlarge"


def test_checkov_finds_nothing_but_the_accepted(tmp_path):
    app = App(outdir=str(tmp_path / "out"), builtin_cloud_formation_validation=False, context=CDK_CONTEXT)
    stack = Stack(app, "Quota")
    env = ServiceEnvironment(stack, "Env", service_environment_name="gpu", capacity={GPU: 4})
    queue = TrainingJobQueue(stack, "Queue", job_queue_name="training", service_environment=env)
    shares = [QuotaShare(stack, "A", quota_share_name="A", job_queue=queue, capacity={GPU: 2},
                         strategy="LEND_AND_BORROW"),
              QuotaShare(stack, "B", quota_share_name="B", job_queue=queue, capacity={GPU: 2}, strategy="LEND")]
    QuotaMonitoring(stack, "Monitoring", [queue], shares=shares, wait_targets={"training/B": Duration.minutes(30)})
    app.synth()
    template = tmp_path / "out" / "Quota.template.json"
    result = subprocess.run([CHECKOV, "-f", str(template), "--framework", "cloudformation", "--output", "json",
                             "--quiet", "--skip-download", "--compact"], capture_output=True, text=True, timeout=300)
    report = json.loads(result.stdout)
    report = report[0] if isinstance(report, list) else report
    failed = {(c["check_id"], c["resource"]) for c in report["results"]["failed_checks"]}
    print(f"checkov {report['summary']['checkov_version']}: {report['summary']['passed']} passed, "
          f"{report['summary']['failed']} failed: {sorted(failed)}")
    assert report["summary"]["parsing_errors"] == 0
    assert report["summary"]["passed"] >= 25  # it read the resources
    assert {check for check, _ in failed} <= set(ACCEPTED), sorted(failed)
