"""The SageMaker instance types read from the installed botocore model, without loading botocore's session."""

from __future__ import annotations

import gzip
import json

import pytest

from policy_engine.foundation import instance_types


def _enum(shape: str) -> frozenset[str]:
    import botocore.session

    return frozenset(botocore.session.get_session().get_service_model("sagemaker").shape_for(shape).enum)


def test_reservable_types_are_the_models_reserved_capacity_enum():
    assert instance_types.reservable_instance_types() == _enum("ReservedCapacityInstanceType")
    # a reservable type is a training type too (a plan is used by training jobs)
    assert instance_types.reservable_instance_types() <= instance_types.training_instance_types()


def test_a_misspelled_reservable_type_gets_the_closest_one():
    assert instance_types.reservable_suggestion("ml.p5.48xlarg") == "ml.p5.48xlarge"
    assert instance_types.reservable_suggestion("trn2.48xlarge") == "ml.trn2.48xlarge"
    # a training type that no plan reserves is not suggested as if it were a typo
    assert instance_types.reservable_suggestion("ml.g5.xlarge") is None


def test_the_shape_is_decoded_alone_or_from_the_whole_model():
    model = {"shapes": {"Other": {"type": "string"}, "ReservedCapacityInstanceType": {"type": "string",
                                                                                      "enum": ["ml.a", "ml.b"]}}}
    raw = json.dumps(model).encode()
    assert instance_types._shape_enum(raw, "ReservedCapacityInstanceType") == ("ml.a", "ml.b")
    spaced = json.dumps(model, indent=2).encode()  # the marker's fast path misses; the whole model is read
    assert instance_types._shape_enum(gzip.decompress(gzip.compress(spaced)), "ReservedCapacityInstanceType") == (
        "ml.a", "ml.b")
    with pytest.raises(instance_types.InstanceTypesUnavailable, match="no Missing enum"):
        instance_types._shape_enum(raw, "Missing")
