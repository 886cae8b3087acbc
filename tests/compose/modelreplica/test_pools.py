"""A member's node pool becomes the ``modelplane.ai/pool`` node selector's value, so it must be
a label value: a replica naming a pool no node can be labelled with composes nothing invalid
and says why in its ModelServing condition."""

from __future__ import annotations

import pytest

from modelplane.compose.admission import Admission
from modelplane.labels import POOL
from tests.fleet.builders import inference_class, inference_cluster

from .support import engine, manifests, pod_specs, replica, run, standalone, workload

LONGEST = "p" * 63


@pytest.mark.parametrize("pool", ["p" * 64, "h100/a", "-gpu", "gpu_"], ids=str)
def test_a_pool_that_is_not_a_label_value_composes_nothing_and_says_why(pool):
    result = run(replica(engine("main", standalone(pool))))
    assert result.fatal is None
    assert result.resources == {}
    [serving] = result.conditions
    assert (serving.type, serving.status, serving.reason) == (
        "ModelServing",
        "False",
        "InvalidNodePool",
    )
    assert serving.message.startswith(
        f"spec.engines[0].members[0].nodePoolName {pool!r} is not a label value"
    )
    assert "nothing is composed for it" in serving.message


def test_what_was_composed_before_the_pool_was_renamed_is_kept():
    before = run(replica(engine("main", standalone("gpu"))))
    observed = {k: d.resource for k, d in before.resources.items()}
    result = run(replica(engine("main", standalone("p" * 64))), observed=observed)
    assert {k: d.resource for k, d in result.resources.items()} == observed
    assert f"keeping the {len(observed)} composed resources" in result.conditions[0].message


def test_a_pool_of_63_characters_is_the_node_selector_as_named():
    result = run(replica(engine("main", standalone(LONGEST))))
    assert pod_specs(workload(result))["standalone"]["nodeSelector"] == {POOL: LONGEST}
    assert manifests(result)


def test_an_inference_cluster_declares_pools_up_to_a_label_values_length():
    h100 = inference_class("h100")
    cluster = inference_cluster("c1", {LONGEST: ("h100", 1)}, classes=[h100])
    del cluster["status"]
    admission = Admission.default()
    assert admission.admit(cluster).errors == []
    cluster["spec"]["nodePools"][0]["name"] = "p" * 64
    assert str(admission.admit(cluster).errors[0]) == (
        "spec.nodePools[0].name: Too long: may not be more than 63 bytes"
    )
