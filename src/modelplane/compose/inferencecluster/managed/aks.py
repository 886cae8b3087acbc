"""An AKS cluster that serves GPUs: a resource group holding everything, a virtual network and
subnet, the cluster with its system pool, one GPU pool per spec pool, and Azure Files for
ModelCache.

AKS scales each pool itself within its bounds and installs the GPU driver (``gpuDriver:
Install``). The cluster's system-assigned identity is given Network Contributor on the subnet,
which AKS grants only when the portal or the az CLI creates the cluster: without it the cloud
provider on the cluster cannot put the gateway's Service behind a load balancer. Its
connection secret is a kubeconfig with a cluster-admin client certificate, so the provider
configs need no cloud identity. Azure Files' CSI driver ships with AKS: only the
StorageClass is composed. A pool's tags tell the autoscaler what a node of it carries while it
has none (but not its DRA devices: docs/design/managed-clusters.md, Autoscaling). A pool with
``fabric: InfiniBand`` gets the NVIDIA network operator.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from modelplane.compose.inferencecluster.managed.common import (
    GPU_TAINT_VALUE,
    SYSTEM_POOL,
    Cloud,
    NameBudget,
    PoolPlan,
    Provisioned,
    at_provider,
    connection_secret,
    observation,
    reported_count,
    storage_class,
)
from modelplane.compose.inferencecluster.releases import EXTERNAL_NAME, Chart, release
from modelplane.compose.inferencecluster.target import Target
from modelplane.compose.shared.gpu_taint import GPU_TAINT_KEY, GPU_TOLERATION
from modelplane.kube import objects
from modelplane.kube.names import dns_label
from modelplane.kube.objects import Obj
from modelplane.labels import POOL

AZURE = "azure.m.upbound.io/v1beta1"
AUTHORIZATION = "authorization.azure.m.upbound.io/v1beta1"
NETWORK = "network.azure.m.upbound.io/v1beta1"
CONTAINERS = "containerservice.azure.m.upbound.io/v1beta1"

VNET_CIDR = "10.0.0.0/16"
SUBNET_CIDR = "10.0.0.0/20"
POD_CIDR = "10.244.0.0/16"
SERVICE_CIDR = "10.96.0.0/16"
DNS_SERVICE_IP = "10.96.0.10"
SYSTEM_VM_SIZE = "Standard_D4s_v5"
NAMES = NameBudget()
"""Every resource name Azure takes here fits a Kubernetes name (a cluster's 63 characters, a
resource group's 90); the agent pools and the DNS prefix are named apart."""
DNS_PREFIX_MAX = 54
AGENT_POOL_NAME_MAX = 12
AGENT_POOL_NAME = rf"[a-z][a-z0-9]{{0,{AGENT_POOL_NAME_MAX - 1}}}"
STORAGE_CLASS = "modelplane-rwx-azurefile"
SUBNET_ROLE = "subnet-network-contributor"
NETWORK_CONTRIBUTOR = "Network Contributor"
# nodeCount is seeded once and then left to AKS's autoscaler (no LateInitialize, not in
# forProvider): upjet drops the diff of a top-level field only initProvider sets, so Crossplane
# never reverts a scale. Only admitted replicas needing more nodes than the pool reports put it
# in forProvider, until the pool reports them.
POOL_POLICIES = ["Observe", "Create", "Update", "Delete"]
NODE_TEMPLATE_LABEL = "k8s.io_cluster-autoscaler_node-template_label_"
NODE_TEMPLATE_TAINT = "k8s.io_cluster-autoscaler_node-template_taint_"
# An AKS pool's nodes share one VM Scale Set placement group, so an InfiniBand-capable VM size
# lands them on one fabric; the network operator loads the host drivers and exposes the RDMA
# devices to pods.
NETWORK_OPERATOR = Chart(
    "network-operator", "https://helm.ngc.nvidia.com/nvidia", "network-operator", "network-operator"
)
NETWORK_OPERATOR_VERSION = "26.4.0"


def problems(cloud: Cloud) -> list[str]:
    return [
        f"spec.nodePools[{i}].name {pool.name!r}: an AKS node pool name is a lowercase letter "
        f"then lowercase letters and digits, at most {AGENT_POOL_NAME_MAX} in all"
        for i, pool in enumerate(cloud.pools or ())
        if not re.fullmatch(AGENT_POOL_NAME, pool.name)
    ]


def provision(cloud: Cloud, t: Target, observed: Mapping[str, Any]) -> Provisioned:
    out: dict[str, Obj] = {}
    location = cloud.location
    group = {"resourceGroupNameRef": cloud.ref("resource-group")}
    out["resource-group"] = cloud.resource(
        AZURE, "ResourceGroup", "resource-group", {"location": location}
    )
    out["virtual-network"] = cloud.resource(
        NETWORK,
        "VirtualNetwork",
        "virtual-network",
        {**group, "location": location, "addressSpace": [VNET_CIDR]},
    )
    out["subnet"] = cloud.resource(
        NETWORK,
        "Subnet",
        "subnet",
        {
            **group,
            "virtualNetworkNameRef": cloud.ref("virtual-network"),
            "addressPrefixes": [SUBNET_CIDR],
        },
    )
    plane: Obj = {
        **group,
        "location": location,
        # The cluster's resource name when it fits Azure's 54 (the same head and hash as it).
        "dnsPrefix": dns_label(cloud.cluster, "cluster", max_len=DNS_PREFIX_MAX),
        # Named, because the default MC_<group>_<cluster>_<location> outgrows Azure's 80.
        "nodeResourceGroup": cloud.name("nodes"),
        "identity": {"type": "SystemAssigned"},
        "defaultNodePool": {
            "name": SYSTEM_POOL,
            "vmSize": SYSTEM_VM_SIZE,
            "autoScalingEnabled": True,
            "minCount": 1,
            "maxCount": 2,
            "temporaryNameForRotation": "systemtmp",
            "nodeLabels": {POOL: SYSTEM_POOL},
            "vnetSubnetIdRef": cloud.ref("subnet"),
        },
        "networkProfile": {
            "networkPlugin": "azure",
            "networkPluginMode": "overlay",
            "podCidr": POD_CIDR,
            "serviceCidr": SERVICE_CIDR,
            "dnsServiceIp": DNS_SERVICE_IP,
        },
    }
    if cloud.version:
        plane["kubernetesVersion"] = cloud.version
    out["cluster"] = cloud.resource(
        CONTAINERS, "KubernetesCluster", "cluster", plane, **connection_secret(cloud, "cluster")
    )
    pools = ["cluster"]
    for pool in cloud.pools or ():
        key = f"nodepool-{pool.name}"
        out[key] = _pool(cloud, pool, observed.get(key))
        pools.append(key)
    role = _subnet_role(cloud, observed)
    if role is not None:
        out[SUBNET_ROLE] = role
    return Provisioned(
        resources=out,
        on_cluster=_on_cluster(cloud, t),
        kubeconfig_from="cluster",
        nodes_from=tuple(pools[:1]),
        gpu_pools_from=tuple(pools[1:]),
        stack_needs=(SUBNET_ROLE,),
        # The role goes after the gateway's load balancer, and before the subnet it is scoped
        # to and the cluster whose identity holds it, neither of which it names.
        holds_stack=("cluster", SUBNET_ROLE),
        outlives=(("subnet", SUBNET_ROLE), ("cluster", SUBNET_ROLE)),
        storage_class=STORAGE_CLASS,
    )


def _subnet_role(cloud: Cloud, observed: Mapping[str, Any]) -> Obj | None:
    """The cluster identity's Network Contributor on the subnet: composed once Azure assigned
    the identity's principal and the subnet's id (the provider resolves no reference to
    either), and kept from its own spec while either is not reported."""
    kept = objects.mapping(observed, SUBNET_ROLE, "spec", "forProvider")
    principal = objects.dig(observation(observed.get("cluster")), "identity", "principalId")
    principal = principal or kept.get("principalId")
    scope = at_provider(observed.get("subnet"), "id") or kept.get("scope")
    if not principal or not scope:
        return None
    assignment = {
        "scope": str(scope),
        "principalId": str(principal),
        "principalType": "ServicePrincipal",
        "roleDefinitionName": NETWORK_CONTRIBUTOR,
    }
    return cloud.resource(AUTHORIZATION, "RoleAssignment", SUBNET_ROLE, assignment)


def _pool(cloud: Cloud, pool: PoolPlan, observed: Mapping[str, Any] | None) -> Obj:
    for_provider: Obj = {
        "kubernetesClusterIdRef": cloud.ref("cluster"),
        "vnetSubnetIdRef": cloud.ref("subnet"),
        "mode": "User",
        "vmSize": pool.machine,
        "osDiskSizeGb": pool.disk_gb,
        "autoScalingEnabled": True,
        "minCount": pool.min_nodes,
        "maxCount": pool.max_nodes,
        "gpuDriver": "Install",
        "nodeLabels": pool.labels,
        "nodeTaints": [f"{GPU_TAINT_KEY}={GPU_TAINT_VALUE}:NoSchedule"],
        "tags": _node_template_tags(pool),
    }
    if cloud.version:
        for_provider["orchestratorVersion"] = cloud.version
    if pool.zones:
        for_provider["zones"] = [z.rsplit("-", 1)[-1] for z in pool.zones]
    # Admitted replicas need more nodes than the pool reports: set through forProvider until
    # it reports them (azurerm v4.54.0 sends a changed node_count with autoscaling enabled).
    reported = reported_count(observed, "nodeCount")
    raised = None if reported is None else pool.raised(reported)
    if raised is not None:
        for_provider["nodeCount"] = raised
    obj = cloud.resource(
        CONTAINERS,
        "KubernetesClusterNodePool",
        f"nodepool-{pool.name}",
        for_provider,
        initProvider={"nodeCount": pool.seed},
        managementPolicies=list(POOL_POLICIES),
    )
    # The agent pool's name in Azure is the spec pool's; a resource name could never fit.
    obj["metadata"]["annotations"] = {EXTERNAL_NAME: pool.name}
    return obj


def _node_template_tags(pool: PoolPlan) -> dict[str, str]:
    """What the cluster autoscaler's Azure provider (v1.35.0) models a node of the pool's scale
    set with while it has none: a VMSS template takes its labels and taints from the scale set's
    tags only, and AKS copies a pool's tags onto its scale set. Without the pool label, a replica
    pinned to the pool never fits the modelled node and a pool at zero never grows."""
    tags = {NODE_TEMPLATE_LABEL + _tag_name(k): v for k, v in pool.labels.items()}
    tags[NODE_TEMPLATE_TAINT + _tag_name(GPU_TAINT_KEY)] = f"{GPU_TAINT_VALUE}:NoSchedule"
    return tags


def _tag_name(key: str) -> str:
    # Azure tag names take no "/"; the autoscaler reads "_" as "/" and "~2" as "_".
    return key.replace("_", "~2").replace("/", "_")


def _on_cluster(cloud: Cloud, t: Target) -> dict[str, Obj]:
    # Model caches hold symlinks (Hugging Face's layout); SMB emulates them with mfsymlinks.
    out = {
        "storage-class": storage_class(
            t,
            STORAGE_CLASS,
            "file.csi.azure.com",
            {"skuName": "Premium_LRS"},
            mountOptions=["mfsymlinks", "actimeo=30", "nosharesock"],
            reclaimPolicy="Delete",
            allowVolumeExpansion=True,
        )
    }
    if any(p.fabric == "InfiniBand" for p in cloud.pools or ()):
        values = {
            "deployCR": True,
            "ofedDriver": {"deploy": True},
            "rdmaSharedDevicePlugin": {"deploy": True},
            # Its DaemonSets run on the InfiniBand nodes, which carry the GPU taint.
            "daemonsets": {"tolerations": [dict(GPU_TOLERATION)]},
        }
        out[NETWORK_OPERATOR.key] = release(
            t, "network-operator", NETWORK_OPERATOR, NETWORK_OPERATOR_VERSION, values
        )
    return out
