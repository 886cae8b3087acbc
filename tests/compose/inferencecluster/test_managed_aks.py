"""An AKS InferenceCluster: everything in one resource group, the cluster with its system pool,
GPU pools as the classes describe them (AKS installs the driver and autoscales), Azure Files for
ModelCache, and a kubeconfig that needs no cloud identity."""

from __future__ import annotations

from modelplane.compose.inferencecluster.composer import CLASSES
from tests.compose import through
from tests.compose.inferencecluster.managed import (
    gpu_class,
    managed,
    observed_as_created,
    observed_as_ready,
    provisioned,
    run,
)

LOCATION = "swedencentral"


def _composed() -> dict:
    return provisioned(managed("AKS")).resources


def test_the_group_network_and_cluster_are_in_the_clusters_location() -> None:
    composed = _composed()
    for key in ("resource-group", "virtual-network", "cluster"):
        assert composed[key]["spec"]["forProvider"]["location"] == LOCATION, key


def test_the_gpu_pool_runs_the_class_vm_size_with_the_pools_counts_and_zones() -> None:
    pool = _composed()["nodepool-gpua"]
    fp = pool["spec"]["forProvider"]
    assert (fp["vmSize"], fp["osDiskSizeGb"], fp["mode"]) == (
        "Standard_NC24ads_A100_v4",
        500,
        "User",
    )
    assert (fp["autoScalingEnabled"], fp["minCount"], fp["maxCount"]) == (True, 1, 6)
    assert pool["spec"]["initProvider"] == {"nodeCount": 2}
    assert "LateInitialize" not in pool["spec"]["managementPolicies"]
    assert fp["zones"] == ["1", "2"]
    assert fp["gpuDriver"] == "Install"


def test_the_gpu_pool_is_labelled_for_our_workloads_and_tainted_for_gpus() -> None:
    fp = _composed()["nodepool-gpua"]["spec"]["forProvider"]
    assert fp["nodeLabels"] == {"modelplane.ai/pool": "gpua", "modelplane.ai/gpu": "nvidia-a100"}
    assert fp["nodeTaints"] == ["nvidia.com/gpu=true:NoSchedule"]


def test_the_agent_pool_is_named_as_the_spec_names_it() -> None:
    pool = _composed()["nodepool-gpua"]
    assert pool["metadata"]["annotations"]["crossplane.io/external-name"] == "gpua"


def test_a_pool_name_azure_refuses_is_refused_naming_the_field() -> None:
    ic = managed("AKS")
    ic["spec"]["nodePools"][0]["name"] = "gpu-a100-pool"
    response = through.run(ic, {}, {CLASSES: [gpu_class("AKS")]})
    assert response.fatal is not None and "spec.nodePools[0].name" in response.fatal


def test_the_system_pool_is_the_clusters_default_pool_on_its_subnet() -> None:
    composed = _composed()
    default = composed["cluster"]["spec"]["forProvider"]["defaultNodePool"]
    assert default["nodeLabels"] == {"modelplane.ai/pool": "system"}
    assert default["vnetSubnetIdRef"] == {"name": composed["subnet"]["metadata"]["name"]}


def test_the_kubeconfig_needs_no_cloud_identity() -> None:
    composed = _composed()
    secret = composed["cluster"]["spec"]["writeConnectionSecretToRef"]["name"]
    configs = [r for r in composed.values() if r["kind"] == "ClusterProviderConfig"]
    assert len(configs) == 2
    assert {c["spec"]["credentials"]["secretRef"]["name"] for c in configs} == {secret}
    assert all("identity" not in c["spec"] for c in configs)


def test_azure_files_backs_modelcache() -> None:
    [storage] = [
        r["spec"]["forProvider"]["manifest"]
        for r in _composed().values()
        if r["kind"] == "Object" and r["spec"]["forProvider"]["manifest"]["kind"] == "StorageClass"
    ]
    assert storage["provisioner"] == "file.csi.azure.com"
    assert "mfsymlinks" in storage["mountOptions"]


def test_an_infiniband_pool_gets_the_network_operator_on_its_tainted_nodes() -> None:
    ic = managed("AKS")
    ic["spec"]["nodePools"][0]["fabric"] = {"type": "InfiniBand", "infiniband": {"fabric": "ib0"}}
    operator = provisioned(ic).resources["network-operator"]
    values = operator["spec"]["forProvider"]["values"]
    assert operator["spec"]["forProvider"]["chart"]["name"] == "network-operator"
    assert values["rdmaSharedDevicePlugin"] == {"deploy": True}
    assert values["daemonsets"]["tolerations"][0]["key"] == "nvidia.com/gpu"


def test_a_pool_off_the_fabric_gets_no_network_operator() -> None:
    assert "network-operator" not in _composed()


def test_the_cluster_identity_is_network_contributor_on_its_subnet() -> None:
    composed = _composed()
    fp = composed["subnet-network-contributor"]["spec"]["forProvider"]
    observed = observed_as_ready(provisioned(managed("AKS")))
    assert fp["scope"] == observed["subnet"]["status"]["atProvider"]["id"]
    principal = observed["cluster"]["status"]["atProvider"]["identity"]["principalId"]
    assert (fp["principalId"], fp["principalType"]) == (principal, "ServicePrincipal")
    assert fp["roleDefinitionName"] == "Network Contributor"


def test_the_role_assignment_waits_for_the_ids_azure_assigns() -> None:
    ic = managed("AKS")
    assert "subnet-network-contributor" not in run(ic).resources
    created = run(ic, observed_as_created(run(ic)))
    assert "subnet-network-contributor" not in created.resources


def test_the_stack_waits_for_the_role_its_load_balancer_needs() -> None:
    ic = managed("AKS")
    observed = observed_as_ready(run(ic))
    composing = run(ic, observed)
    assert "subnet-network-contributor" in composing.resources
    assert not any(r["kind"] == "Release" for r in composing.resources.values())
    status, reason, message = composing.conditions["StackReady"]
    assert (status, reason) == ("False", "ClusterProvisioning")
    assert "subnet-network-contributor" in message


def test_the_role_assignment_stays_while_the_cluster_reports_no_identity() -> None:
    ic = managed("AKS")
    observed = observed_as_ready(provisioned(ic))
    observed["cluster"]["status"]["atProvider"].pop("identity")
    observed["subnet"]["status"]["atProvider"].pop("id")
    kept = run(ic, observed).resources["subnet-network-contributor"]
    assert kept["spec"] == observed["subnet-network-contributor"]["spec"]
