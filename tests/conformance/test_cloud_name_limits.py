"""The names a managed cluster's resources take in the cloud, against the cloud's own rules at
the releases the Upbound providers v2.6.0 build on.

- GKE: terraform-provider-google v6.47.0 (provider-upjet-gcp v2.6.0),
  google/services/container/resource_container_cluster.go: a cluster's name is at most 40
  characters, lowercase letters, digits and hyphens, starting with a letter and ending with a
  letter or digit. A node pool's name is GKE's to check (the Terraform schema takes any; GKE
  takes the same 40). google/verify/validation.go ``ValidateGCEName``: a network's and a
  subnetwork's name is ``[a-z]([-a-z0-9]{0,61}[a-z0-9])?``. provider-upjet-gcp v2.6.0
  config/externalname.go: each is ``TemplatedStringAsIdentifier("name", ...)``, so the GCP name
  is the external name, which defaults to the resource's own name.
- AKS: terraform-provider-azurerm (v4.54.0 for provider-upjet-azure v2.6.0)
  internal/services/containers/validate/kubernetes.go: ``KubernetesDNSPrefix`` 1 to 54
  characters, letters, digits and hyphens, starting and ending with a letter or digit;
  ``KubernetesClusterName`` 1 to 63; ``KubernetesAgentPoolName`` a lowercase letter then
  lowercase letters and digits, 12 in all (the agent pool's name is the spec pool's own).
- EKS: terraform-provider-aws website/docs/r/eks_node_group.html.markdown: a cluster's name is
  1 to 100 characters, ``^[0-9A-Za-z][A-Za-z0-9\\-_]+$``; EKS takes 63 for a node group's and
  IAM 64 for a role's. Every name composed is a DNS label of at most 63, so all fit.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from modelplane.kube.names import dns_label
from tests.compose.inferencecluster.managed import managed, provisioned
from tests.fleet.xrd import admission

Obj = dict[str, Any]

CLUSTERS = [
    "a",
    "west",
    "fleet-us-west1-prod",  # the issue's: its GKE node pool was 44 characters
    "1-west",
    "a-cluster-name-as-long-as-a-kubernetes-label-value-allows-it-63",
]
GKE_NAME = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
GKE_NAME_MAX = 40
GCE_NAME = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
AKS_DNS_PREFIX = re.compile(r"[a-zA-Z\d]|[a-zA-Z\d][-a-zA-Z\d]{0,52}[a-zA-Z\d]")
AKS_CLUSTER_NAME = re.compile(r"[a-zA-Z0-9]|[a-zA-Z0-9][-_a-zA-Z0-9]{0,61}[a-zA-Z0-9]")
EKS_NAME = re.compile(r"[0-9A-Za-z][A-Za-z0-9\-_]*")


def _named(composed: dict[str, Obj], *kinds: str) -> dict[str, str]:
    return {k: o["metadata"]["name"] for k, o in composed.items() if o["kind"] in kinds}


@pytest.mark.parametrize("cluster", CLUSTERS)
def test_every_gke_cluster_and_node_pool_name_is_one_gke_takes(cluster: str) -> None:
    composed = provisioned(managed("GKE", name=cluster)).resources
    names = _named(composed, "Cluster", "NodePool")
    assert len(names) == 3
    for key, name in names.items():
        assert GKE_NAME.fullmatch(name) and len(name) <= GKE_NAME_MAX, (key, name)


@pytest.mark.parametrize("cluster", CLUSTERS)
def test_every_gke_network_name_is_a_gce_name(cluster: str) -> None:
    composed = provisioned(managed("GKE", name=cluster)).resources
    for key, name in _named(composed, "Network", "Subnetwork").items():
        assert GCE_NAME.fullmatch(name), (key, name)


def test_a_gke_name_that_fits_is_the_name_it_always_had() -> None:
    # A budget that renamed a working cluster's resources would replace them.
    composed = provisioned(managed("GKE", name="west")).resources
    for key in ("cluster", "nodepool-gpua", "network"):
        assert composed[key]["metadata"]["name"] == dns_label("west", key)


@pytest.mark.parametrize("cluster", CLUSTERS)
def test_the_aks_dns_prefix_and_cluster_name_are_ones_azure_takes(cluster: str) -> None:
    fp = provisioned(managed("AKS", name=cluster)).resources["cluster"]
    assert AKS_DNS_PREFIX.fullmatch(fp["spec"]["forProvider"]["dnsPrefix"])
    assert AKS_CLUSTER_NAME.fullmatch(fp["metadata"]["name"])


@pytest.mark.parametrize("cluster", CLUSTERS)
def test_every_eks_cluster_node_group_and_role_name_is_one_aws_takes(cluster: str) -> None:
    composed = provisioned(managed("EKS", name=cluster)).resources
    names = _named(composed, "Cluster", "NodeGroup", "Role")
    assert len(names) == 7
    for key, name in names.items():
        assert EKS_NAME.fullmatch(name) and len(name) <= 63, (key, name)


def test_an_aks_pool_name_azure_refuses_is_refused_at_admission_naming_the_limit() -> None:
    ic = managed("AKS")
    ic["spec"]["nodePools"][0]["name"] = "gpu-a100-pool"
    [error] = [str(e) for e in admission("inferenceclusters").admit(ic).errors]
    assert error.startswith("spec.nodePools: Invalid value")
    assert "nodePools[].name on AKS" in error and "at most 12 characters" in error


def test_an_aks_pool_name_azure_takes_is_admitted() -> None:
    assert admission("inferenceclusters").admit(managed("AKS")).errors == []
