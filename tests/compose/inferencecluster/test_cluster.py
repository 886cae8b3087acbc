"""The InferenceCluster composition: reach the cluster, publish its gateway and pools."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane.compose.inferencecluster.composer import (
    CLASSES,
    GATEWAY,
    HELM_PROVIDER_CONFIG,
    PROVIDER_CONFIG,
    compose_cluster,
)
from modelplane.composer import Inputs

from .support import H100, cluster, condition, created, installing, resources, run

Obj = dict[str, Any]


def gateway_observed(address: str | None) -> Obj:
    status = {"addresses": [{"type": "IPAddress", "value": address}]} if address else {}
    return {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {"name": "east-gateway", "namespace": "crossplane-system"},
        "status": {"atProvider": {"manifest": {"kind": "Gateway", "status": status}}},
    }


def with_gateway(ic: Obj, address: str | None) -> Any:
    observed = created(installing(ic))
    observed[GATEWAY] = gateway_observed(address)
    return run(ic, observed)


def test_existing_source_composes_both_cluster_provider_configs_from_the_kubeconfig_secret() -> (
    None
):
    result = run(cluster())
    credentials = {
        "source": "Secret",
        "secretRef": {"name": "east-kc", "namespace": "crossplane-system", "key": "kubeconfig"},
    }
    for key, api_version in (
        (PROVIDER_CONFIG, "kubernetes.m.crossplane.io/v1alpha1"),
        (HELM_PROVIDER_CONFIG, "helm.m.crossplane.io/v1beta1"),
    ):
        assert result.resources[key].resource == {
            "apiVersion": api_version,
            "kind": "ClusterProviderConfig",
            "metadata": {"name": "east"},
            "spec": {"credentials": credentials},
        }


def test_identity_secret_supplements_the_kubeconfig_in_the_same_namespace() -> None:
    existing = {
        "secretRef": {"name": "kc", "namespace": "fleet", "key": "config"},
        "identitySecretRef": {"name": "sa", "type": "AWSWebIdentityCredentials"},
    }
    result = run(cluster(cluster={"source": "Existing", "existing": existing}))
    for key in (PROVIDER_CONFIG, HELM_PROVIDER_CONFIG):
        pc = result.resources[key].resource
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


def test_composed_namespaced_resources_live_in_the_kubeconfig_secrets_namespace() -> None:
    existing = {"secretRef": {"name": "kc", "namespace": "fleet"}}
    result = installing(cluster(cluster={"source": "Existing", "existing": existing}))
    namespaces = {
        r["metadata"].get("namespace")
        for r in resources(result).values()
        if r["kind"] not in ("ClusterProviderConfig", "ClusterUsage", "Issuer", "Certificate")
    }
    assert namespaces == {"fleet"}


def test_the_fleet_issuer_and_certificate_live_beside_the_fleet_ca_on_the_control_plane() -> None:
    existing = {"secretRef": {"name": "kc", "namespace": "fleet"}}
    ca = {"name": "ca", "namespace": "pki"}
    ic = cluster(
        cluster={"source": "Existing", "existing": existing}, gateway={"fleetCASecretRef": ca}
    )
    composed = resources(installing(ic))
    assert {
        (r["kind"], r["metadata"]["namespace"])
        for r in composed.values()
        if r["kind"] in ("Issuer", "Certificate")
    } == {("Issuer", "pki"), ("Certificate", "pki")}


def test_publishes_the_provider_config_name() -> None:
    assert run(cluster()).status["providerConfigRef"] == {"name": "east"}


def test_the_gateway_status_names_the_gateway_its_class_and_the_fleet_hostname() -> None:
    assert run(cluster()).status["gateway"] == {
        "name": "inference-gateway",
        "namespace": "modelplane-system",
        "className": "modelplane",
        "fleetHostname": "east.fleet.modelplane.internal",
    }


def test_gateway_name_namespace_and_class_come_from_spec_gateway() -> None:
    ic = cluster(gateway={"name": "edge", "namespace": "gw", "className": "inference"})
    result = installing(ic)
    gateway = resources(result)[GATEWAY]["spec"]["forProvider"]["manifest"]
    assert gateway["metadata"] == {"name": "edge", "namespace": "gw"}
    assert gateway["spec"]["gatewayClassName"] == "inference"
    status = result.status["gateway"]
    assert (status["name"], status["namespace"], status["className"]) == ("edge", "gw", "inference")


def test_gateway_address_is_published_once_observed() -> None:
    result = with_gateway(cluster(), "10.0.0.7")
    assert result.status["gateway"]["address"] == "10.0.0.7"
    assert condition(result, "GatewayReady").status == "True"


def test_without_an_address_the_gateway_is_not_ready_and_says_why() -> None:
    result = with_gateway(cluster(), None)
    assert "address" not in result.status["gateway"]
    assert result.resources[GATEWAY].ready == "False"
    cond = condition(result, "GatewayReady")
    assert (cond.status, cond.reason) == ("False", "WaitingForGateway")
    assert "modelplane-system/inference-gateway" in cond.message
    assert "replicas placed here are not reachable until it has one" in cond.message


def test_until_the_gateway_is_observed_the_published_address_stands() -> None:
    ic = {**cluster(), "status": {"gateway": {"address": "203.0.113.10"}}}
    result = run(ic)
    assert result.status["gateway"]["address"] == "203.0.113.10"
    assert condition(result, "GatewayReady").message == (
        "gateway address 203.0.113.10 (as published; not observed yet)"
    )


def test_an_observed_gateway_that_is_not_programmed_withdraws_the_published_address() -> None:
    ic = {**cluster(), "status": {"gateway": {"address": "203.0.113.10"}}}
    observed = created(installing(ic))
    observed[GATEWAY] = gateway_observed(None)
    manifest = observed[GATEWAY]["status"]["atProvider"]["manifest"]
    manifest["status"] = {
        "conditions": [{"type": "Programmed", "status": "False", "reason": "AddressNotAssigned"}]
    }
    result = run(ic, observed)
    assert "address" not in result.status["gateway"]
    cond = condition(result, "GatewayReady")
    assert (cond.status, cond.reason) == ("False", "GatewayNotProgrammed")


def test_gpu_pools_carry_the_class_devices_with_defaults_filled() -> None:
    pools = run(cluster()).status["gpuPools"]
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
    ic = cluster(
        nodePools=[{"name": "h100", "className": "h100", "nodeCount": 2, "maxNodeCount": 9}]
    )
    assert run(ic).status["gpuPools"][0]["nodes"] == 2


def test_a_pool_whose_class_is_missing_is_left_out_and_named() -> None:
    ic = cluster(
        nodePools=[
            {"name": "h100", "className": "h100", "nodeCount": 1},
            {"name": "big", "className": "h200", "nodeCount": 1},
        ]
    )
    result = run(ic)
    assert [p["name"] for p in result.status["gpuPools"]] == ["h100"]
    cond = condition(result, "PoolsResolved")
    assert (cond.status, cond.reason) == ("False", "ClassNotFound")
    assert "pool big names InferenceClass h200, which does not exist" in cond.message


def test_classes_are_required_and_pools_wait_for_them() -> None:
    result = compose_cluster(Inputs(composite=cluster()))
    assert result.requirements[CLASSES].kind == "InferenceClass"
    assert "gpuPools" not in result.status
    assert condition(result, "PoolsResolved").status == "Unknown"


def test_cache_storage_class_is_published() -> None:
    existing = {"secretRef": {"name": "kc"}, "cache": {"storageClassName": "rwx"}}
    ic = cluster(cluster={"source": "Existing", "existing": existing})
    assert run(ic).status["cache"] == {"storageClassName": "rwx"}


@pytest.mark.parametrize("source", ["Nebius", "Vultr"])
def test_nebius_and_vultr_are_rejected_with_a_condition_and_compose_nothing(source: str) -> None:
    ic = cluster()
    ic["spec"]["cluster"] = {"source": source}
    result = run(ic)
    assert result.resources == {}
    assert result.status == {}
    cond = condition(result, "SourceSupported")
    assert (cond.status, cond.reason) == ("False", "UnsupportedSource")
    assert f"cluster.source {source} is not supported" in cond.message
    assert "CRDs are not published" in cond.message


def test_a_source_edited_away_from_existing_keeps_what_was_composed() -> None:
    composed = installing(cluster())
    observed = {k: {**r, "status": {}} for k, r in created(composed).items()}
    ic = cluster()
    ic["spec"]["cluster"] = {"source": "Nebius"}
    result = run(ic, observed)
    assert {k: d.resource for k, d in result.resources.items()} == created(composed)


def test_an_existing_cluster_without_a_kubeconfig_fails_cleanly_naming_the_field() -> None:
    ic = cluster()
    ic["spec"]["cluster"] = {"source": "Existing"}
    result = compose_cluster(Inputs(composite=ic, required={CLASSES: [H100]}))
    assert result.fatal == (
        "InferenceCluster spec.cluster.existing.secretRef.name is required for source Existing"
    )


def test_a_cluster_name_longer_than_a_label_value_fails_cleanly() -> None:
    ic = cluster()
    ic["metadata"]["name"] = "e" * 64
    result = compose_cluster(Inputs(composite=ic, required={CLASSES: [H100]}))
    assert str(result.fatal).startswith(f"InferenceCluster name '{'e' * 64}' is longer")


def test_an_inference_extension_bundle_not_shipped_fails_cleanly_naming_the_field() -> None:
    ic = cluster()
    ic["spec"]["servingStack"] = {"inferenceExtension": {"mode": "Managed", "version": "v9.9.9"}}
    result = compose_cluster(Inputs(composite=ic, required={CLASSES: [H100]}))
    assert result.fatal == (
        "InferenceCluster spec.servingStack.inferenceExtension.version 'v9.9.9' is not a bundle "
        "Modelplane ships; use one of v1.0.2, v1.5.0"
    )


def test_the_same_inputs_compose_the_same_output() -> None:
    ic = cluster(stack="Dynamo")
    first, second = installing(ic), installing(ic)
    assert resources(first) == resources(second)
    assert list(resources(first)) == list(resources(second))
