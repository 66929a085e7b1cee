"""Object names in findings lead back to the object's place in the file (for SARIF line numbers)."""

from __future__ import annotations

from policy_engine.rules.objects import environment_object, guarantee_object, object_path, queue_object


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
