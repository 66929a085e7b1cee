"""Object references in findings lead back to the object's place in the file (for SARIF line numbers)."""

from __future__ import annotations

from policy_engine.analysis.rules.objects import (
    TOPOLOGY,
    environment_ref,
    guarantee_ref,
    locate,
    object_path,
    share_ref,
)
from policy_engine.foundation.diagnostics import ObjectKind, ObjectRef


def test_each_object_resolves_to_its_data_path(example):
    queue = example.job_queues[0]
    assert object_path(example, environment_ref("gpu-env")) == ("service_environments", 0)
    assert object_path(example, ObjectRef.of_queue("training")) == ("job_queues", 0)
    assert object_path(example, share_ref(queue, queue.shares[2])) == ("job_queues", 0, "shares", 2)
    assert object_path(example, guarantee_ref(example, 1, example.guarantees[1])) == ("guarantees", 1)
    assert object_path(example, ObjectRef.all_queues()) == ("job_queues",)


def test_unknown_objects_resolve_to_nothing_or_their_list(example):
    assert object_path(example, ObjectRef.of_share("training", "QS9")) == ()
    assert object_path(example, environment_ref("nope")) == ("service_environments",)
    assert object_path(example, TOPOLOGY) == ()


def test_objects_locate_their_environment_queue_and_share(example):
    queue = example.job_queues[0]
    assert locate(example, share_ref(queue, queue.shares[2])).share_id == "training/QS3"
    assert locate(example, share_ref(queue, queue.shares[2])).environment == "gpu-env"
    located = locate(example, ObjectRef.of_queue("training", "gpu-env"))
    assert (located.environment, located.queue, located.share) == ("gpu-env", "training", None)
    assert locate(example, environment_ref("gpu-env")).environment == "gpu-env"
    assert locate(example, guarantee_ref(example, 1, example.guarantees[1])).share_id == "training/QS2"
    assert locate(example, TOPOLOGY) == ObjectRef(ObjectKind.TOPOLOGY)
    assert locate(example, environment_ref("nope")) == ObjectRef(ObjectKind.ENVIRONMENT)


def test_names_print_as_findings_always_showed_them(example):
    queue = example.job_queues[0]
    assert str(share_ref(queue, queue.shares[0])) == "training/QS1"
    assert str(ObjectRef.of_queue("training")) == "job_queues[training]"
    assert str(ObjectRef.of_queue("training", index=1)) == "job_queues[1]"
    assert str(environment_ref("gpu-env")) == "service_environments[gpu-env]"
    assert str(ObjectRef.all_environments()) == "service_environments"
    assert str(TOPOLOGY) == "(topology)"
