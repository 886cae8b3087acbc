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
    assert spec["gateway"] == {
        "name": "inference-gateway",
        "namespace": "modelplane-system",
        "mode": "Managed",
    }


def test_an_omitted_serving_stack_installs_every_component_and_a_managed_gateway() -> None:
    spec = admission("inferenceclusters").admit(base()).object["spec"]
    assert spec["servingStack"] == {"deletionPolicy": "Delete"}
    assert spec["gateway"]["mode"] == "Managed"


def test_a_component_block_defaults_to_managed() -> None:
    ic = base()
    ic["spec"]["servingStack"] = {"certManager": {"version": "v1.20.3"}}
    spec = admission("inferenceclusters").admit(ic).object["spec"]
    assert spec["servingStack"]["certManager"] == {"mode": "Managed", "version": "v1.20.3"}


def test_a_fleet_ca_reference_defaults_to_crossplane_system() -> None:
    ic = base()
    ic["spec"]["gateway"] = {"fleetCASecretRef": {"name": "ca"}}
    spec = admission("inferenceclusters").admit(ic).object["spec"]
    assert spec["gateway"]["fleetCASecretRef"] == {"name": "ca", "namespace": "crossplane-system"}


def pool(ic: Obj) -> Obj:
    return ic["spec"]["nodePools"][0]


def stack(ic: Obj) -> Obj:
    return ic["spec"].setdefault("servingStack", {})


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
        "a managed cluster names where it runs",
        lambda ic: (
            ic["spec"]["cluster"].update(source="EKS", eks={"region": "us-east-2"})
            or ic["spec"]["cluster"].pop("existing")
        ),
        lambda ic: (
            ic["spec"]["cluster"].update(source="EKS") or ic["spec"]["cluster"].pop("existing")
        ),
        "spec.cluster",
        "cluster.source EKS requires cluster.eks with the region",
    ),
    (
        "a pool name is the pool node label's value",
        lambda ic: pool(ic).update(name="H100_a.1"),
        lambda ic: pool(ic).update(name="h100/a"),
        "spec.nodePools[0]",
        "a node pool name must be a valid label value (it is the modelplane.ai/pool node label)",
    ),
    (
        "an External component takes no version",
        lambda ic: stack(ic).update(certManager={"mode": "External"}),
        lambda ic: stack(ic).update(certManager={"mode": "External", "version": "v1.21.1"}),
        "spec.servingStack.certManager",
        "an External component is observed, not installed: it takes no version",
    ),
    (
        "an External DRA driver takes no driver root",
        lambda ic: stack(ic).update(nvidiaDRADriver={"driverRoot": "/run/nvidia/driver"}),
        lambda ic: stack(ic).update(
            nvidiaDRADriver={"mode": "External", "driverRoot": "/run/nvidia/driver"}
        ),
        "spec.servingStack.nvidiaDRADriver",
        "an External component is observed, not installed: it takes no version or driverRoot",
    ),
    (
        "LeaderWorkerSet belongs to the Standard stack",
        lambda ic: stack(ic).update(leaderWorkerSet={"version": "0.10.0"}),
        lambda ic: (
            ic["spec"].update(stack="Dynamo")
            or stack(ic).update(leaderWorkerSet={"version": "0.10.0"})
        ),
        "spec",
        "servingStack.leaderWorkerSet belongs to the Standard stack: a Dynamo cluster runs gangs "
        "on Grove",
    ),
    (
        "Grove belongs to the Dynamo stack",
        lambda ic: (
            ic["spec"].update(stack="Dynamo") or stack(ic).update(grove={"mode": "External"})
        ),
        lambda ic: stack(ic).update(grove={"mode": "External"}),
        "spec",
        "servingStack.grove belongs to the Dynamo stack: a Standard cluster runs gangs on "
        "LeaderWorkerSet",
    ),
    (
        "an External gateway takes no class or fleet CA",
        lambda ic: ic["spec"].update(gateway={"mode": "External"}),
        lambda ic: ic["spec"].update(gateway={"mode": "External", "className": "eg"}),
        "spec.gateway",
        "an External gateway is observed, not composed: className, fleetCASecretRef and "
        "fleetTrustSecretRef belong to a Managed one",
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


@pytest.mark.parametrize(
    ("mutate", "error"),
    [
        (
            lambda ic: stack(ic).update(certManager={"version": "~1.21"}),
            'spec.servingStack.certManager.version: Invalid value: "~1.21": '
            "spec.servingStack.certManager.version in body should match",
        ),
        (
            lambda ic: stack(ic).update(inferenceExtension={"version": "v1.4.0"}),
            'spec.servingStack.inferenceExtension.version: Unsupported value: "v1.4.0"',
        ),
        (
            lambda ic: stack(ic).update(nvidiaDRADriver={"driverRoot": "run/nvidia"}),
            'spec.servingStack.nvidiaDRADriver.driverRoot: Invalid value: "run/nvidia": '
            "spec.servingStack.nvidiaDRADriver.driverRoot in body should match",
        ),
        (
            lambda ic: stack(ic).update(prometheus={"mode": "Off"}),
            'spec.servingStack.prometheus.mode: Unsupported value: "Off"',
        ),
    ],
    ids=["a version is a pin", "a vendored bundle", "an absolute driver root", "two modes"],
)
def test_field_bounds(mutate: Any, error: str) -> None:
    found = errors("inferenceclusters", mutated(base(), mutate))
    assert found[0].startswith(error), found
