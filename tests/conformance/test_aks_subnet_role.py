"""The AKS cluster identity's role on the subnet Modelplane creates, against Azure and
provider-upjet-azure v2.6.0.

- Azure/terraform-azurerm-aks role_assignments.tf (at 6391c448): with a custom VNet "the AKS
  cluster identity needs the Network Contributor role on the VNET subnets used by the system
  node pool and by any additional node pools" (AKS's kubenet and Azure CNI prerequisites); the
  portal and the az CLI grant it client-side, the AKS API does not. Without it the cloud
  provider on the cluster cannot put the gateway's Service behind a load balancer.
- provider-upjet-azure v2.6.0 apis/namespaced/authorization/v1beta1/zz_roleassignment_types.go:
  ``principalId`` and ``scope`` are plain strings (only ``roleDefinitionId`` resolves a
  reference), and both are required (the CRD's rules); config/externalname.go:
  azurerm_role_assignment is ``IdentifierFromProvider``. So the assignment can only be written
  once Azure reported the cluster identity's principal
  (apis/namespaced/containerservice/v1beta1/zz_kubernetescluster_types.go,
  ``IdentityObservation.PrincipalID``) and the subnet's id.
- Its CRD is tests/upstream/crds/authorization.azure.m.upbound.io_roleassignments.yaml, served
  by provider-azure-authorization, which the Configuration depends on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.compose.inferencecluster.managed import (
    managed,
    observed_as_ready,
    provisioned,
    wave_of,
    waves,
)

ROOT = Path(__file__).resolve().parents[2]
ROLE = "subnet-network-contributor"
Obj = dict[str, Any]


@pytest.fixture(scope="module")
def composed() -> dict[str, Obj]:
    return provisioned(managed("AKS")).resources


def test_the_assignment_names_the_ids_azure_reported(composed: dict[str, Obj]) -> None:
    observed = observed_as_ready(provisioned(managed("AKS")))
    fp = composed[ROLE]["spec"]["forProvider"]
    assert (
        fp["principalId"] == observed["cluster"]["status"]["atProvider"]["identity"]["principalId"]
    )
    assert fp["scope"] == observed["subnet"]["status"]["atProvider"]["id"]
    assert fp["roleDefinitionName"] == "Network Contributor"


def test_the_gateway_load_balancer_goes_before_the_role_it_needs(composed: dict[str, Obj]) -> None:
    wave = wave_of(waves(composed))
    assert wave["gateway-load-balancer"] < wave[ROLE]


def test_the_role_goes_before_its_subnet_and_the_cluster_whose_identity_holds_it(
    composed: dict[str, Obj],
) -> None:
    wave = wave_of(waves(composed))
    assert wave[ROLE] < min(wave["subnet"], wave["cluster"])


def test_the_provider_serving_the_assignment_is_a_dependency() -> None:
    configuration = yaml.safe_load((ROOT / "package/configuration/crossplane.yaml").read_text())
    packages = {dep["package"] for dep in configuration["spec"]["dependsOn"]}
    assert "xpkg.upbound.io/upbound/provider-azure-authorization" in packages
