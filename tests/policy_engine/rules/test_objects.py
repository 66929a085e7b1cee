"""Object names in findings lead back to the object's place in the file (for SARIF line numbers)."""

from __future__ import annotations

from policy_engine.rules.objects import (
    ObjectLocation,
    environment_object,
    guarantee_object,
    locate,
    object_path,
    queue_object,
)


def test_each_object_name_resolves_to_its_data_path(example):
    assert object_path(example, environment_object("gpu-env")) == ("service_environments", 0)
    assert object_path(example, queue_object("training")) == ("job_queues", 0)
    assert object_path(example, "training/QS3") == ("job_queues", 0, "shares", 2)
    assert object_path(example, guarantee_object(1, example.guarantees[1])) == ("guarantees", 1)
    assert object_path(example, "job_queues") == ("job_queues",)


def test_unknown_names_resolve_to_nothing_or_their_list(example):
    assert object_path(example, "training/QS9") == ()
    assert object_path(example, "service_environments[nope]") == ("service_environments",)
    assert object_path(example, "(topology)") == ()


def test_object_names_locate_their_environment_queue_and_share(example):
    assert locate(example, "training/QS3") == ObjectLocation("gpu-env", "training", "QS3")
    assert locate(example, queue_object("training")) == ObjectLocation("gpu-env", "training", None)
    assert locate(example, environment_object("gpu-env")) == ObjectLocation("gpu-env", None, None)
    assert locate(example, guarantee_object(1, example.guarantees[1])).share_id == "training/QS2"
    assert locate(example, "(topology)") == ObjectLocation()
    assert locate(example, "service_environments[nope]") == ObjectLocation()
