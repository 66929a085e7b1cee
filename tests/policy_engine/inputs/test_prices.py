"""The prices file against the topologies it prices: one rate card for every topology, typos and gaps refused."""

from __future__ import annotations

import pytest

from policy_engine.foundation import instance_types
from policy_engine.foundation.diagnostics import LoadError
from policy_engine.inputs.prices import prices_from_data
from tests.builders import share, topology

TOPOLOGY = topology(share("A", 2, instance_type="ml.g5.xlarge"), share("B", 1, instance_type="ml.p4d.24xlarge"))


def _prices(rates: dict, *topologies):
    return prices_from_data({"currency": "USD", "per_instance_hour": rates}, "p.yaml", {}, [],
                            list(topologies or (TOPOLOGY,)))


def test_real_types_no_topology_uses_are_kept_and_named_as_unused_in_the_files_order():
    prices = _prices({"ml.trn1.32xlarge": 21.5, "ml.g5.xlarge": 2, "ml.p5.48xlarge": 98.32, "ml.p4d.24xlarge": 10})
    assert prices.unused == ("ml.trn1.32xlarge", "ml.p5.48xlarge")
    assert (prices.of("ml.g5.xlarge"), prices.of("ml.p4d.24xlarge")) == (2, 10)
    assert _prices({"ml.g5.xlarge": 2, "ml.p4d.24xlarge": 10}).unused == ()


def test_a_type_another_topology_uses_is_not_unused():
    other = topology(share("C", 1, instance_type="ml.p5.48xlarge"))
    prices = _prices({"ml.g5.xlarge": 2, "ml.p4d.24xlarge": 10, "ml.p5.48xlarge": 98.32}, TOPOLOGY, other)
    assert prices.unused == ()


def test_a_rate_of_0_is_accepted_and_a_negative_one_is_not():
    assert _prices({"ml.g5.xlarge": 0, "ml.p4d.24xlarge": 0.0}).of("ml.g5.xlarge") == 0
    with pytest.raises(LoadError) as caught:
        _prices({"ml.g5.xlarge": -0.01, "ml.p4d.24xlarge": 10})
    assert [str(p) for p in caught.value.problems] == [
        "p.yaml: per_instance_hour.ml.g5.xlarge: a price per instance-hour must be 0 or more, got -0.01"]


def test_without_botocores_list_a_type_the_topology_lacks_cannot_be_told_from_a_typo(monkeypatch):
    def unavailable() -> frozenset[str]:
        raise instance_types.InstanceTypesUnavailable("botocore is not installed")

    monkeypatch.setattr(instance_types, "training_instance_types", unavailable)
    with pytest.raises(LoadError) as caught:
        _prices({"ml.g5.xlarge": 2, "ml.p4d.24xlarge": 10, "ml.p5.48xlarge": 98.32})
    assert [str(p) for p in caught.value.problems] == [
        "p.yaml: per_instance_hour.ml.p5.48xlarge: the topology has no ml.p5.48xlarge and SageMaker's instance types "
        "cannot be read to tell it from a typo (its types: ml.g5.xlarge, ml.p4d.24xlarge)"]
