"""The SageMaker Python SDK's TrainingQueue / TrainingQueuedJob against the endpoint (optional: ``make test-sdk``).

The SDK is large (about 4 minutes and 0.9 GB to install) and pins versions of shared libraries, so it lives in
its own virtual environment; ``BATCH_QUOTA_SDK_PYTHON`` names that environment's Python. Without it, skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from policy_engine.adapters.endpoint.server import start_in_thread
from policy_engine.adapters.endpoint.service import Options, Service
from policy_engine.inputs.examples import example_topology

SDK_PYTHON = os.environ.get("BATCH_QUOTA_SDK_PYTHON")
pytestmark = [pytest.mark.sdk,
              pytest.mark.skipif(not SDK_PYTHON, reason="SageMaker SDK environment not set up (make test-sdk)")]


def test_the_notebook_steps_through_the_sagemaker_sdk():
    with start_in_thread(Service(Options(speed=0), example_topology())) as running:
        env = dict(os.environ, AWS_ENDPOINT_URL_BATCH=running.url, AWS_ACCESS_KEY_ID="testing",
                   AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1", SAGEMAKER_VALIDATE_ROLE="false")
        script = Path(__file__).with_name("sdk_walkthrough.py")
        result = subprocess.run([SDK_PYTHON, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["step1"] == {"qs1_job_high": "RUNNING", "qs1_job_med": "RUNNING", "qs1_job_low": "RUNNABLE"}
    assert seen["step2"]["qs1_job_med"] == "RUNNABLE" and seen["step2"]["qs2_job_1"] == "RUNNING"
    assert seen["step3"] == {"qs1_job_high": "RUNNABLE", "qs1_job_med": "RUNNABLE", "qs1_job_low": "RUNNING",
                             "qs2_job_1": "RUNNING"}
    assert seen["list_jobs"] == ["qs1_job_low", "qs2_job_1"]  # no status: RUNNING jobs
    assert seen["list_jobs_by_share"] == ["qs1_job_high", "qs1_job_med"]
    assert seen["get_job"] is True
    assert seen["high_preempted"] == 1 and seen["high_payload_instance"] == "ml.g5.xlarge"
    assert seen["med_after_terminate"] == "FAILED"
