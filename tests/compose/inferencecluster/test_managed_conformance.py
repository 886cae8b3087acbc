"""How the Upbound providers (v2.6.0) and Crossplane (v2.3.4) treat what a managed cluster
composes, each rule read from their source at that tag and checked against the composition."""

from __future__ import annotations

import re

import pytest

from modelplane.compose.inferencecluster.managed import CLOUDS
from tests.compose.inferencecluster.managed import managed, observed_as_created, provisioned, run

KUBECONFIG_WRITERS = {"EKS": "cluster-auth", "GKE": "cluster", "AKS": "cluster"}


def _configs(composed: dict) -> list[dict]:
    return [r for r in composed.values() if r["kind"] == "ClusterProviderConfig"]


@pytest.mark.parametrize("source", sorted(CLOUDS))
def test_the_kubeconfig_is_read_under_the_key_the_provider_writes_it(source: str) -> None:
    """The connection secret holds the kubeconfig under ``kubeconfig``:
    provider-upjet-aws v2.6.0 internal/controller/namespaced/eks/clusterauth/eks.go
    (``xpv1.ResourceCredentialsSecretKubeconfigKey``), provider-upjet-gcp v2.6.0
    config/namespaced/container/config.go, provider-upjet-azure v2.6.0
    config/namespaced/containerservice/config.go (``kube_config_raw``). A namespaced managed
    resource writes it in its own namespace."""
    composed = provisioned(managed(source)).resources
    writer = composed[KUBECONFIG_WRITERS[source]]
    for config in _configs(composed):
        ref = config["spec"]["credentials"]["secretRef"]
        assert (ref["name"], ref["namespace"], ref["key"]) == (
            writer["spec"]["writeConnectionSecretToRef"]["name"],
            writer["metadata"]["namespace"],
            "kubeconfig",
        )


def test_the_gke_identity_is_read_under_the_key_the_service_account_key_writes() -> None:
    """provider-upjet-gcp v2.6.0 config/namespaced/cloudplatform/config.go: a ServiceAccountKey's
    connection details carry the decoded key as ``private_key``. The GKE kubeconfig's client
    certificate (config/namespaced/container/config.go, ``master_auth``) is empty on clusters
    that issue none, so the provider configs authenticate with that key."""
    composed = provisioned(managed("GKE")).resources
    key = composed["service-account-key"]["spec"]["writeConnectionSecretToRef"]["name"]
    for config in _configs(composed):
        assert config["spec"]["identity"]["secretRef"]["name"] == key
        assert config["spec"]["identity"]["secretRef"]["key"] == "private_key"


def test_the_gke_network_is_named_in_gcp_as_its_resource() -> None:
    """provider-upjet-gcp v2.6.0 config/externalname.go: google_compute_network is
    ``TemplatedStringAsIdentifier("name", ...)``, so its GCP name is its external name, which
    defaults to metadata.name: the StorageClass can name it before GCP reports anything."""
    composed = provisioned(managed("GKE")).resources
    [storage] = [
        r["spec"]["forProvider"]["manifest"]
        for r in composed.values()
        if r["kind"] == "Object" and r["spec"]["forProvider"]["manifest"]["kind"] == "StorageClass"
    ]
    assert storage["parameters"]["network"] == composed["network"]["metadata"]["name"]
    assert "crossplane.io/external-name" not in composed["network"]["metadata"].get(
        "annotations", {}
    )


@pytest.mark.parametrize("cluster", ["a", "west", "a-very-long-cluster-name-of-the-fleet"])
def test_the_gke_service_account_id_is_one_gcp_accepts(cluster: str) -> None:
    """provider-upjet-gcp v2.6.0 config/externalname.go: google_service_account's
    ``account_id`` is its external name; GCP takes 6 to 30 characters, a lowercase letter
    first, then letters, digits or hyphens, not ending in a hyphen."""
    composed = provisioned(managed("GKE", name=cluster)).resources
    account = composed["service-account"]["metadata"]["annotations"]["crossplane.io/external-name"]
    assert re.fullmatch(r"[a-z][-a-z0-9]{4,28}[a-z0-9]", account), account


def test_the_aks_agent_pool_is_named_by_its_external_name() -> None:
    """provider-upjet-azure v2.6.0 config/externalname.go: azurerm_kubernetes_cluster_node_pool
    is ``TemplatedStringAsIdentifier("name", ...)``: the agent pool's name is the external
    name, so it is set to the spec pool's (a resource name would never fit Azure's 12)."""
    pool = provisioned(managed("AKS")).resources["nodepool-gpua"]
    assert pool["metadata"]["annotations"]["crossplane.io/external-name"] == "gpua"


def test_the_eks_autoscaler_discovers_the_cluster_by_its_aws_name() -> None:
    """provider-upjet-aws v2.6.0 config/externalname.go: aws_eks_cluster is
    ``NameAsIdentifier``: the EKS cluster's name is its resource name, which the autoscaler's
    node-group auto-discovery names."""
    composed = provisioned(managed("EKS")).resources
    values = composed["cluster-autoscaler"]["spec"]["forProvider"]["values"]
    assert values["autoDiscovery"]["clusterName"] == composed["cluster"]["metadata"]["name"]


def test_the_efs_storage_class_waits_for_the_id_aws_assigns() -> None:
    """provider-upjet-aws v2.6.0 config/externalname.go: aws_efs_file_system is
    ``IdentifierFromProvider``: its id exists only once AWS created it, so the StorageClass
    naming it is composed only then."""
    ic = managed("EKS")
    created = run(ic, observed_as_created(run(ic)))
    assert "storage-class" not in created.resources
    assert "storage-class" in provisioned(ic).resources
