"""AWS's quota-management notebook, written with the SageMaker Python SDK (``sagemaker-train``) as a user would.

Run by ``test_sagemaker_sdk.py`` with the Python of a separate virtual environment that has the SDK
(``make test-sdk`` creates it: the SDK pins versions this project's environment does not share).
Talks to the endpoint in ``AWS_ENDPOINT_URL_BATCH`` and prints what it saw as one JSON document.
Offline: explicit role, image and output path, dummy credentials, and ``SAGEMAKER_VALIDATE_ROLE=false``
(otherwise ``ModelTrainer`` asks IAM to check the role).
"""

import json
import os
import urllib.request

from sagemaker.train.aws_batch.training_queue import TrainingQueue
from sagemaker.train.configs import Compute, OutputDataConfig, StoppingCondition
from sagemaker.train.model_trainer import ModelTrainer


def advance(seconds):
    url = f"{os.environ['AWS_ENDPOINT_URL_BATCH']}/_batch-quota/clock/advance?seconds={seconds}"
    request = urllib.request.Request(url, method="POST", headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request).read()


def trainer(name):
    return ModelTrainer(training_image="123456789012.dkr.ecr.us-east-1.amazonaws.com/train:latest",
                        role="arn:aws:iam::123456789012:role/SageMakerRole",
                        compute=Compute(instance_type="ml.g5.xlarge", instance_count=1),
                        output_data_config=OutputDataConfig(s3_output_path="s3://bucket/output"),
                        stopping_condition=StoppingCondition(max_runtime_in_seconds=3600), base_job_name=name)


queue = TrainingQueue("training")
jobs = {}
seen = {}


def states():
    return {name: job.describe()["status"] for name, job in jobs.items()}


for name, priority in (("qs1_job_high", 3), ("qs1_job_med", 2), ("qs1_job_low", 1)):
    jobs[name] = queue.submit(trainer(name), None, job_name=name, priority=priority, quota_share_name="QS1",
                              preemption_config={"preemptionRetriesBeforeTermination": 5})
seen["step1"] = states()
advance(100)
jobs["qs2_job_1"] = queue.submit(trainer("qs2"), None, job_name="qs2_job_1", priority=1, quota_share_name="QS2")
seen["step2"] = states()
advance(100)
jobs["qs1_job_low"].update(scheduling_priority=4)
seen["step3"] = states()
seen["list_jobs"] = sorted(job.job_name for job in queue.list_jobs())
seen["list_jobs_by_share"] = sorted(job.job_name for job in queue.list_jobs_by_share(status="RUNNABLE",
                                                                                   quota_share_name="QS1"))
seen["get_job"] = queue.get_job("qs2_job_1").job_arn == jobs["qs2_job_1"].job_arn
described = jobs["qs1_job_high"].describe()
seen["high_preempted"] = described["preemptionSummary"]["preemptedAttemptCount"]
seen["high_payload_instance"] = json.loads(described["serviceRequestPayload"])["ResourceConfig"]["InstanceType"]
jobs["qs1_job_med"].terminate(reason="not needed")
seen["med_after_terminate"] = jobs["qs1_job_med"].describe()["status"]
print(json.dumps(seen))
