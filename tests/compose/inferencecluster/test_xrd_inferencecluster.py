"""InferenceCluster admission: each rule accepts a reachable cluster and rejects what the
composers could not handle, with the API server's path and message."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fleet.builders import inference_cluster
from tests.fleet.xrd import admission, errors, mutated, rule_error

Obj = dict[str, Any]


def base() -> Obj:
    ic = inference_cluster("east", {"h100": ("h100", 2)})
    del ic["status"]
    return ic


def test_a_brought_your_own_cluster_is_admitted_with_defaults() -> None:
    ic = base()
    ic["spec"]["cluster"]["existing"]["secretRef"] = {"name": "kc"}
    del ic["spec"]["stack"]
    result = admission("inferenceclusters").admit(ic)
    assert [str(e) for e in result.errors] == []
    spec = result.object["spec"]
    assert spec["stack"] == "Standard"
    assert spec["cluster"]["existing"]["secretRef"] == {
        "name": "kc",
        "namespace": "crossplane-system",
        "key": "kubeconfig",
    }


def test_an_omitted_gateway_defaults_to_the_modelplane_inference_gateway() -> None:
    spec = admission("inferenceclusters").admit(base()).object["spec"]
    assert spec["gateway"] == {"name": "inference-gateway", "namespace": "modelplane-system"}


def pool(ic: Obj) -> Obj:
    return ic["spec"]["nodePools"][0]


CASES = [
    (
        "an Existing cluster names its kubeconfig",
        lambda ic: None,
        lambda ic: ic["spec"]["cluster"].pop("existing"),
        "spec.cluster",
        "cluster.source Existing requires cluster.existing with the kubeconfig secretRef",
    ),
    (
        "the existing block belongs to an Existing cluster only",
        lambda ic: (
            ic["spec"]["cluster"].update(source="GKE", gke={"region": "us-east1"}, existing=None)
            or ic["spec"]["cluster"].pop("existing")
        ),
        lambda ic: ic["spec"]["cluster"].update(source="GKE", gke={"region": "us-east1"}),
        "spec.cluster",
        "cluster.existing may only be set when cluster.source is Existing",
    ),
    (
        "a pool name is the pool node label's value",
        lambda ic: pool(ic).update(name="H100_a.1"),
        lambda ic: pool(ic).update(name="h100/a"),
        "spec.nodePools[0]",
        "a node pool name must be a valid label value (it is the modelplane.ai/pool node label)",
    ),
    (
        "an autoscaling floor may not exceed its ceiling",
        lambda ic: pool(ic).update(minNodeCount=2, maxNodeCount=2),
        lambda ic: pool(ic).update(minNodeCount=3, maxNodeCount=2),
        "spec.nodePools[0]",
        "minNodeCount may not exceed maxNodeCount",
    ),
]


@pytest.mark.parametrize(
    ("accept", "reject", "path", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_rule(accept: Any, reject: Any, path: str, message: str) -> None:
    assert errors("inferenceclusters", mutated(base(), accept)) == []
    assert errors("inferenceclusters", mutated(base(), reject)) == [rule_error(path, message)]
