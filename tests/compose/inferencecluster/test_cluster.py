"""The InferenceCluster composition: reach the cluster, publish its gateway and pools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from modelplane.compose.inferencecluster.composer import (
    CLASSES,
    GATEWAY,
    PROVIDER_CONFIG,
    compose_cluster,
)
from modelplane.composer import Inputs
from modelplane.kube.admission import Admission
from tests.fleet.builders import gpu_device, inference_class_of

Obj = dict[str, Any]

H100 = inference_class_of(
    "h100",
    [
        gpu_device(count=8, memory="81559Mi"),
        {"name": "ib", "driver": "fabric.example.com", "claim": "Synthetic"},
    ],
)


def cluster(**spec: Any) -> Obj:
    base: Obj = {
        "cluster": {"source": "Existing", "existing": {"secretRef": {"name": "east-kubeconfig"}}},
        "nodePools": [{"name": "h100", "className": "h100", "nodeCount": 4}],
    }
    base.update(spec)
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": "east"},
        "spec": base,
    }


def gateway_observed(address: str | None) -> Obj:
    status = {"addresses": [{"type": "IPAddress", "value": address}]} if address else {}
    return {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {"name": "east-gateway", "namespace": "crossplane-system"},
        "status": {"atProvider": {"manifest": {"kind": "Gateway", "status": status}}},
    }


def run(ic: Obj, classes: list[Obj] | None = None, observed: dict[str, Obj] | None = None):
    required = {CLASSES: classes} if classes is not None else {}
    return compose_cluster(Inputs(composite=ic, required=required, observed=observed or {}))


def condition(result: Any, type_: str) -> Any:
    return next(c for c in result.conditions if c.type == type_)


def test_existing_source_composes_a_cluster_provider_config_from_the_kubeconfig_secret() -> None:
    pc = run(cluster(), [H100]).resources[PROVIDER_CONFIG].resource
    assert pc == {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "ClusterProviderConfig",
        "metadata": {"name": "east"},
        "spec": {
            "credentials": {
                "source": "Secret",
                "secretRef": {
                    "name": "east-kubeconfig",
                    "namespace": "crossplane-system",
                    "key": "kubeconfig",
                },
            }
        },
    }


def test_identity_secret_supplements_the_kubeconfig_in_the_same_namespace() -> None:
    existing = {
        "secretRef": {"name": "kc", "namespace": "fleet", "key": "config"},
        "identitySecretRef": {"name": "sa", "type": "AWSWebIdentityCredentials"},
    }
    ic = cluster(cluster={"source": "Existing", "existing": existing})
    pc = run(ic, [H100]).resources[PROVIDER_CONFIG].resource
    assert pc["spec"]["credentials"]["secretRef"] == {
        "name": "kc",
        "namespace": "fleet",
        "key": "config",
    }
    assert pc["spec"]["identity"] == {
        "source": "Secret",
        "type": "AWSWebIdentityCredentials",
        "secretRef": {"name": "sa", "namespace": "fleet", "key": "private_key"},
    }


def test_publishes_the_provider_config_name() -> None:
    assert run(cluster(), [H100]).status["providerConfigRef"] == {"name": "east"}


def test_gateway_is_observed_never_managed() -> None:
    obj = run(cluster(), [H100]).resources[GATEWAY].resource
    assert obj["spec"]["managementPolicies"] == ["Observe"]
    assert obj["spec"]["providerConfigRef"] == {"kind": "ClusterProviderConfig", "name": "east"}
    assert obj["spec"]["forProvider"]["manifest"] == {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": "inference-gateway", "namespace": "modelplane-system"},
    }


def test_gateway_name_and_namespace_come_from_spec_gateway() -> None:
    ic = cluster(gateway={"name": "edge", "namespace": "gw"})
    result = run(ic, [H100])
    manifest = result.resources[GATEWAY].resource["spec"]["forProvider"]["manifest"]
    assert manifest["metadata"] == {"name": "edge", "namespace": "gw"}
    assert result.status["gateway"] == {"name": "edge", "namespace": "gw"}


def test_gateway_address_is_published_once_observed() -> None:
    result = run(cluster(), [H100], {GATEWAY: gateway_observed("10.0.0.7")})
    assert result.status["gateway"] == {
        "name": "inference-gateway",
        "namespace": "modelplane-system",
        "address": "10.0.0.7",
    }
    assert result.resources[GATEWAY].ready == "True"
    assert condition(result, "GatewayReady").status == "True"


def test_without_an_address_the_cluster_is_not_ready_and_says_why() -> None:
    result = run(cluster(), [H100], {GATEWAY: gateway_observed(None)})
    assert "address" not in result.status["gateway"]
    assert result.resources[GATEWAY].ready == "False"
    cond = condition(result, "GatewayReady")
    assert (cond.status, cond.reason) == ("False", "WaitingForGateway")
    assert "modelplane-system/inference-gateway" in cond.message


def test_without_an_address_the_condition_tells_what_happens_to_replicas_placed_there() -> None:
    # The scheduler places on declared capacity, not on readiness (docs/scheduling.md): the
    # condition must not promise that nothing lands here.
    cond = condition(run(cluster(), [H100], {GATEWAY: gateway_observed(None)}), "GatewayReady")
    assert "no new replicas are placed" not in cond.message
    assert "replicas placed here are not reachable until it has one" in cond.message


def test_gpu_pools_carry_the_class_devices_with_defaults_filled() -> None:
    pools = run(cluster(), [H100]).status["gpuPools"]
    assert pools == [
        {
            "name": "h100",
            "nodes": 4,
            "devices": [
                {
                    "name": "gpu",
                    "claim": "DRA",
                    "driver": "gpu.nvidia.com",
                    "deviceClassName": "gpu.nvidia.com",
                    "count": 8,
                    "capacity": {"memory": {"value": "81559Mi"}},
                },
                {"name": "ib", "claim": "Synthetic", "driver": "fabric.example.com", "count": 1},
            ],
        }
    ]


def test_pool_capacity_is_node_count_not_the_autoscaling_ceiling() -> None:
    pool = {"name": "h100", "className": "h100", "nodeCount": 2, "maxNodeCount": 9}
    ic = cluster(nodePools=[pool])
    assert run(ic, [H100]).status["gpuPools"][0]["nodes"] == 2


def test_a_pool_whose_class_is_missing_is_left_out_and_named() -> None:
    ic = cluster(
        nodePools=[
            {"name": "h100", "className": "h100", "nodeCount": 1},
            {"name": "big", "className": "h200", "nodeCount": 1},
        ]
    )
    result = run(ic, [H100])
    assert [p["name"] for p in result.status["gpuPools"]] == ["h100"]
    cond = condition(result, "PoolsResolved")
    assert (cond.status, cond.reason) == ("False", "ClassNotFound")
    assert "pool big names InferenceClass h200, which does not exist" in cond.message


def test_classes_are_required_and_pools_wait_for_them() -> None:
    result = run(cluster())
    assert result.requirements[CLASSES].kind == "InferenceClass"
    assert "gpuPools" not in result.status
    assert condition(result, "PoolsResolved").status == "Unknown"


def test_cache_storage_class_is_published() -> None:
    existing = {"secretRef": {"name": "kc"}, "cache": {"storageClassName": "rwx"}}
    ic = cluster(cluster={"source": "Existing", "existing": existing})
    assert run(ic, [H100]).status["cache"] == {"storageClassName": "rwx"}


@pytest.mark.parametrize("source", ["GKE", "EKS", "AKS", "Nebius", "Vultr"])
def test_cloud_sources_are_rejected_with_a_condition_and_compose_nothing(source: str) -> None:
    ic = cluster(cluster={"source": source})
    result = run(ic, [H100])
    assert result.resources == {}
    assert result.status == {}
    cond = condition(result, "SourceSupported")
    assert (cond.status, cond.reason) == ("False", "UnsupportedSource")
    assert f"cluster.source {source} is not supported" in cond.message


def test_a_source_edited_away_from_existing_keeps_what_was_composed() -> None:
    pc = run(cluster(), [H100]).resources[PROVIDER_CONFIG].resource
    observed = {PROVIDER_CONFIG: {**pc, "metadata": {**pc["metadata"], "uid": "u1"}, "status": {}}}
    result = run(cluster(cluster={"source": "GKE"}), [H100], observed)
    assert result.resources[PROVIDER_CONFIG].resource == pc


UPSTREAM = Path(__file__).resolve().parents[2] / "upstream" / "crds"
APIS = Path(__file__).resolve().parents[3] / "apis"


def test_composed_resources_and_status_pass_their_schemas() -> None:
    admission = Admission.from_paths(
        [
            UPSTREAM / "kubernetes.m.crossplane.io_clusterproviderconfigs.yaml",
            UPSTREAM / "kubernetes.m.crossplane.io_objects.yaml",
            APIS / "inferenceclusters" / "definition.yaml",
        ]
    )
    existing = {
        "secretRef": {"name": "kc"},
        "identitySecretRef": {"name": "sa", "type": "AWSWebIdentityCredentials"},
    }
    ic = cluster(cluster={"source": "Existing", "existing": existing})
    result = run(ic, [H100], {GATEWAY: gateway_observed("10.0.0.7")})
    for desired in result.resources.values():
        assert [str(e) for e in admission.admit(desired.resource).errors] == []
    published = {**ic, "status": result.status}
    assert [str(e) for e in admission.admit(published).errors] == []


def test_an_existing_cluster_without_a_kubeconfig_fails_cleanly_naming_the_field() -> None:
    result = run(cluster(cluster={"source": "Existing"}), [H100])
    assert result.fatal == (
        "InferenceCluster spec.cluster.existing.secretRef.name is required for source Existing"
    )


def test_a_cluster_name_longer_than_a_label_value_fails_cleanly() -> None:
    ic = cluster()
    ic["metadata"]["name"] = "e" * 64
    assert result_fatal(run(ic, [H100])).startswith(f"InferenceCluster name '{'e' * 64}' is longer")


def result_fatal(result: Any) -> str:
    assert result.fatal is not None
    return str(result.fatal)


def test_until_the_gateway_is_observed_the_published_address_stands() -> None:
    ic = {**cluster(), "status": {"gateway": {"address": "203.0.113.10"}}}
    result = run(ic, [H100])
    assert result.status["gateway"]["address"] == "203.0.113.10"
    assert result.resources[GATEWAY].ready == "False"
    assert condition(result, "GatewayReady").message == (
        "gateway address 203.0.113.10 (as published; not observed yet)"
    )


def test_an_observed_gateway_without_an_address_withdraws_the_published_one() -> None:
    ic = {**cluster(), "status": {"gateway": {"address": "203.0.113.10"}}}
    result = run(ic, [H100], {GATEWAY: gateway_observed(None)})
    assert "address" not in result.status["gateway"]
