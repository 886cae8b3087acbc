"""What every managed cluster composes, whatever the cloud: objects the provider's CRDs admit,
the platform team's credentials, a stack that waits for the cluster, and provider configs
built from the cluster's own connection secret."""

from __future__ import annotations

import pytest

from modelplane.compose.inferencecluster.composer import CLASSES, compose_cluster
from modelplane.compose.inferencecluster.managed import CLOUDS
from modelplane.composer import Inputs
from tests.compose import through
from tests.compose.inferencecluster.managed import (
    gpu_class,
    managed,
    observed_as_created,
    of_kind,
    provisioned,
    run,
)
from tests.compose.inferencecluster.support import upstream

SOURCES = sorted(CLOUDS)


@pytest.mark.parametrize("source", SOURCES)
def test_every_composed_object_is_admitted_by_its_crd(source: str) -> None:
    composed = provisioned(managed(source)).resources
    assert len(composed) > 20
    for key, obj in composed.items():
        assert upstream().knows(obj["apiVersion"], obj["kind"]), key
        assert [str(e) for e in upstream().admit(obj).errors] == [], key


@pytest.mark.parametrize("source", SOURCES)
def test_cloud_resources_use_the_clusterproviderconfig_the_platform_team_names(
    source: str,
) -> None:
    ic = managed(source)
    composed = run(ic).resources
    cloud = [r for r in composed.values() if r["apiVersion"].split("/")[0].endswith("upbound.io")]
    assert cloud
    refs = {
        (r["spec"]["providerConfigRef"]["kind"], r["spec"]["providerConfigRef"]["name"])
        for r in cloud
    }
    assert refs == {("ClusterProviderConfig", "default")}
    block = ic["spec"]["cluster"][source.lower()]
    block["credentials"] = {"type": "ClusterProviderConfig", "name": "aws-prod"}
    renamed = run(ic).resources
    assert {
        r["spec"]["providerConfigRef"]["name"]
        for r in renamed.values()
        if r["apiVersion"].split("/")[0].endswith("upbound.io")
    } == {"aws-prod"}


@pytest.mark.parametrize("source", SOURCES)
def test_nothing_is_installed_on_the_cluster_until_it_and_its_nodes_are_ready(source: str) -> None:
    ic = managed(source)
    first = run(ic)
    created = run(ic, observed_as_created(first))
    for response in (first, created):
        assert not of_kind(response, "Release")
        status, reason, message = response.condition("StackReady")
        assert (status, reason) == ("False", "ClusterProvisioning")
        assert f"the {source} cluster is still provisioning" in message
    assert response.composite_ready == "READY_FALSE"


@pytest.mark.parametrize("source", SOURCES)
def test_once_provisioned_the_stack_installs_and_the_cluster_is_ready(source: str) -> None:
    response = provisioned(managed(source))
    assert response.condition("StackReady")[:2] == ("True", "Installed")
    assert response.condition("SourceSupported")[:2] == ("True", "Managed")
    assert of_kind(response, "Release")


@pytest.mark.parametrize("source", SOURCES)
def test_the_connection_secret_feeds_both_provider_configs_and_the_stack_targets_them(
    source: str,
) -> None:
    response = provisioned(managed(source))
    writers = {
        r["spec"]["writeConnectionSecretToRef"]["name"]: r
        for r in response.resources.values()
        if "writeConnectionSecretToRef" in r["spec"]
    }
    configs = of_kind(response, "ClusterProviderConfig")
    assert sorted(c["apiVersion"] for c in configs.values()) == [
        "helm.m.crossplane.io/v1beta1",
        "kubernetes.m.crossplane.io/v1alpha1",
    ]
    for config in configs.values():
        secret = config["spec"]["credentials"]["secretRef"]
        assert secret["key"] == "kubeconfig"
        writer = writers[secret["name"]]
        # A namespaced resource writes its connection secret into its own namespace.
        assert writer["metadata"]["namespace"] == secret["namespace"]
        assert writer["kind"] in ("ClusterAuth", "Cluster", "KubernetesCluster")
    names = {c["metadata"]["name"] for c in configs.values()}
    on_cluster = [r for r in response.resources.values() if r["kind"] in ("Release", "Object")]
    assert on_cluster
    assert {r["spec"]["providerConfigRef"]["name"] for r in on_cluster} == names


@pytest.mark.parametrize("source", SOURCES)
def test_the_rwx_storage_class_it_composes_is_published_for_modelcache(source: str) -> None:
    response = provisioned(managed(source))
    [storage] = [
        r["spec"]["forProvider"]["manifest"]
        for r in response.resources.values()
        if r["kind"] == "Object" and r["spec"]["forProvider"]["manifest"]["kind"] == "StorageClass"
    ]
    status = compose_cluster(
        Inputs(composite=managed(source), required={CLASSES: [gpu_class(source)]}, observed={})
    ).status
    assert status["cache"] == {"storageClassName": storage["metadata"]["name"]}


def test_a_class_without_a_recipe_for_the_cloud_is_refused_naming_the_pool() -> None:
    response = through.run(managed("EKS"), {}, {CLASSES: [gpu_class("GKE")]})
    assert response.fatal is not None
    assert "spec.nodePools[0] (gpua)" in response.fatal
    assert "spec.provisioning.eks" in response.fatal


def test_until_the_classes_are_read_observed_node_pools_are_kept() -> None:
    ic = managed("GKE")
    composed = provisioned(ic).resources
    response = through.run(ic, composed, {CLASSES: None})
    assert response.resources["nodepool-gpua"] == composed["nodepool-gpua"]
