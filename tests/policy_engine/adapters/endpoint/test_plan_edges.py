"""``serve`` runs the simulator, so a plan's edges are the simulator's (docs/training_plans.md): a job naming a plan
with no window left fails when dispatched, holding nothing, with the simulator's ValidationException reason."""

from __future__ import annotations

from tests.policy_engine.adapters.endpoint.conftest import client
from tests.policy_engine.adapters.endpoint.test_training_plans import HOUR, _plan_job, plans_endpoint, sagemaker

__all__ = ["plans_endpoint"]  # the fixture, used by name


def test_a_job_naming_an_expired_plan_fails_at_dispatch_over_http(plans_endpoint):
    """SageMaker: "The training plan must be in the Scheduled or Active status to be used by a training job.\""""
    api, batch = sagemaker(plans_endpoint), client(plans_endpoint)
    plans_endpoint.advance(7 * HOUR)
    assert api.describe_training_plan(TrainingPlanName="night")["Status"] == "Expired"
    job = _plan_job(batch, "too-late", 4)
    described = batch.describe_service_job(jobId=job)
    assert described["status"] == "FAILED"
    assert described["statusReason"] == "ValidationException: training plan night has no window left (Expired)"
    assert not described.get("attempts")  # never dispatched to capacity
    usage = batch.get_job_queue_snapshot(jobQueue="training")["queueUtilization"]["quotaShareUtilization"]
    assert all(entry["quantity"] == 0 for share in usage["topCapacityUtilization"]
               for entry in share["capacityUsage"])  # nothing held
