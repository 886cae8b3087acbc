"""A GKE cluster that serves GPUs: a VPC network and subnetwork with ranges for pods and
services, the regional cluster (Filestore CSI on, for ModelCache), a system pool and one GPU
pool per spec pool, and the service account the provider configs reach the cluster with.

GKE autoscales node pools itself within each pool's bounds; a GPU pool carries the NVIDIA DRA
driver label, and is grown to what its admitted replicas need (docs/design/managed-clusters.md,
Autoscaling). GPUs are claimed through DRA, and GKE supports DRA only on pools where it neither
installs the GPU driver nor runs its device plugin: a GPU pool has driver installation disabled
and the label that keeps GKE's device plugin off, and Modelplane runs GKE's own driver installer
(the image GKE preloads on every GPU node), which puts the driver under
``/home/kubernetes/bin/nvidia``, the root the DRA driver is given on GKE (``target.py``). The
connection secret's kubeconfig carries no credential: the service account's key is added as the
provider configs' identity.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
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
from modelplane.compose.inferencecluster.releases import EXTERNAL_NAME, stack_object
from modelplane.compose.inferencecluster.target import GKE_DRIVER_ROOT, Target
from modelplane.compose.shared.gpu_taint import GPU_TAINT_KEY
from modelplane.kube.names import dns_label
from modelplane.kube.objects import Obj
from modelplane.labels import POOL

COMPUTE = "compute.gcp.m.upbound.io/v1beta1"
CONTAINER = "container.gcp.m.upbound.io/v1beta1"
PLATFORM = "cloudplatform.gcp.m.upbound.io/v1beta1"

NODE_CIDR = "10.0.0.0/20"
POD_CIDR = "10.4.0.0/14"
SERVICE_CIDR = "10.8.0.0/20"
SYSTEM_MACHINE_TYPE = "e2-standard-4"
IMAGE_TYPE = "COS_CONTAINERD"
OAUTH_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
DRA_DRIVER_LABEL = "cloud.google.com/gke-nvidia-gpu-dra-driver"
"""Tells GKE's autoscaler that a pool's GPUs are claimed through the DRA driver."""
NO_DEVICE_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"
"""Keeps GKE's own device plugin off a pool: the DRA driver alone hands its GPUs out."""
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
"""One of the nodes the DRA driver's kubelet plugin runs on (its chart's node affinity), so it
does not wait for Node Feature Discovery to label the node."""
DRIVER_INSTALLATION = {"gpuDriverVersion": "INSTALLATION_DISABLED"}
DRIVER_INSTALLER = "nvidia-driver-installer"
DRIVER_INSTALLER_IMAGE = "cos-nvidia-installer:fixed"
"""GKE's COS driver installer, preloaded on every GPU node under this name (never pulled)."""
PAUSE_IMAGE = "gke.gcr.io/pause:3.8"
STORAGE_CLASS = "modelplane-rwx-filestore"
IDENTITY = ("service-account-key", "iam-container-admin")
"""What the stack authenticates to the cluster with: the key the provider configs present and
the role that lets it in. The stack waits for both, so a key the organization refuses
(iam.disableServiceAccountKeyCreation, enforced by default in organizations created since May
2024) is named with Google's error in StackReady, not found later as a missing Secret."""
SERVICE_ACCOUNT_ID_MAX = 30
"""GCP's bound on a service account id (6 to 30 characters)."""
NAME_MAX = 40
"""GKE's bound on a cluster's and a node pool's name, which are their resources' names."""
NAMES = NameBudget(limits=(("cluster", NAME_MAX), ("nodepool-", NAME_MAX)), letter_first=True)
"""GCP names start with a lowercase letter; a cluster's and a node pool's take 40 characters."""


def problems(_cloud: Cloud) -> list[str]:
    return []


def provision(cloud: Cloud, t: Target, observed: Mapping[str, Any]) -> Provisioned:
    out: dict[str, Obj] = {}
    region = cloud.location
    out["filestore-api"] = cloud.resource(
        PLATFORM,
        "ProjectService",
        "filestore-api",
        {"service": "file.googleapis.com", "disableOnDestroy": False},
    )
    out["network"] = cloud.resource(COMPUTE, "Network", "network", {"autoCreateSubnetworks": False})
    out["subnetwork"] = cloud.resource(
        COMPUTE,
        "Subnetwork",
        "subnetwork",
        {
            "region": region,
            "networkRef": cloud.ref("network"),
            "ipCidrRange": NODE_CIDR,
            "privateIpGoogleAccess": True,
            "secondaryIpRange": [
                {"rangeName": "pods", "ipCidrRange": POD_CIDR},
                {"rangeName": "services", "ipCidrRange": SERVICE_CIDR},
            ],
        },
    )
    plane: Obj = {
        "location": region,
        "deletionProtection": False,
        "removeDefaultNodePool": True,
        "initialNodeCount": 1,
        "networkRef": cloud.ref("network"),
        "subnetworkRef": cloud.ref("subnetwork"),
        "ipAllocationPolicy": {
            "clusterSecondaryRangeName": "pods",
            "servicesSecondaryRangeName": "services",
        },
        "releaseChannel": {"channel": "REGULAR"},
        "addonsConfig": {"gcpFilestoreCsiDriverConfig": {"enabled": True}},
    }
    if cloud.version:
        plane["minMasterVersion"] = cloud.version
    out["cluster"] = cloud.resource(
        CONTAINER, "Cluster", "cluster", plane, **connection_secret(cloud, "cluster")
    )
    out[f"nodepool-{SYSTEM_POOL}"] = _pool(
        cloud,
        SYSTEM_POOL,
        {"machineType": SYSTEM_MACHINE_TYPE, "labels": {POOL: SYSTEM_POOL}},
        nodes=1,
        bounds=(1, 2),
        zones=(),
    )
    pools = [f"nodepool-{SYSTEM_POOL}"]
    for pool in cloud.pools or ():
        key = f"nodepool-{pool.name}"
        out[key] = _gpu_pool(cloud, pool, observed.get(key))
        pools.append(key)
    _identity(cloud, out, observed)
    return Provisioned(
        resources=out,
        on_cluster=_on_cluster(cloud, t),
        kubeconfig_from="cluster",
        nodes_from=tuple(pools[:1]),
        gpu_pools_from=tuple(pools[1:]),
        stack_needs=IDENTITY,
        holds_stack=(f"nodepool-{SYSTEM_POOL}", *IDENTITY),
        identity={
            "name": cloud.name("service-account-key-conn"),
            "key": "private_key",
            "type": "GoogleApplicationCredentials",
        },
        storage_class=STORAGE_CLASS,
    )


def _pool(
    cloud: Cloud,
    name: str,
    node_config: Obj,
    *,
    nodes: int,
    bounds: tuple[int, int],
    zones: tuple[str, ...],
) -> Obj:
    for_provider: Obj = {
        "location": cloud.location,
        "clusterRef": cloud.ref("cluster"),
        "initialNodeCount": nodes,
        "autoscaling": {"minNodeCount": bounds[0], "maxNodeCount": bounds[1]},
        "nodeConfig": {"imageType": IMAGE_TYPE, "oauthScopes": [OAUTH_SCOPE], **node_config},
    }
    if zones:
        for_provider["nodeLocations"] = list(zones)
    return cloud.resource(CONTAINER, "NodePool", f"nodepool-{name}", for_provider)


DRA_POOL_LABELS = {
    DRA_DRIVER_LABEL: "true",
    NO_DEVICE_PLUGIN_LABEL: "true",
    GPU_PRESENT_LABEL: "true",
}


def _gpu_pool(cloud: Cloud, pool: PoolPlan, observed: Mapping[str, Any] | None) -> Obj:
    config = {
        "machineType": pool.machine,
        "diskSizeGb": pool.disk_gb,
        "guestAccelerator": [
            {
                "type": pool.accelerator_type,
                "count": pool.accelerator_count,
                "gpuDriverInstallationConfig": dict(DRIVER_INSTALLATION),
            }
        ],
        "labels": {**pool.labels, **DRA_POOL_LABELS},
        "taint": [{"key": GPU_TAINT_KEY, "value": GPU_TAINT_VALUE, "effect": "NO_SCHEDULE"}],
    }
    out = _pool(
        cloud,
        pool.name,
        config,
        nodes=pool.nodes,
        bounds=(pool.min_nodes, pool.max_nodes),
        zones=pool.zones,
    )
    raised = _raised_per_zone(pool, observed)
    if raised is not None:
        out["spec"]["forProvider"]["nodeCount"] = raised
    return out


def _raised_per_zone(pool: PoolPlan, observed: Mapping[str, Any] | None) -> int | None:
    """The nodes per zone a created pool is set to because its admitted replicas need more
    than it has, or None (enough, or not reported). Whether GKE's autoscaler models DRA
    devices on a node of an empty pool is not documented (the open autoscaler's GCE provider
    at v1.35.0 models none), so a pool is grown for them as on EKS and AKS.

    terraform-provider-google v6.47.0 (provider-upjet-gcp v2.6.0's) reads ``node_count`` as
    the average size of the pool's instance groups, one per zone, and sets a changed one with
    SetSize; ``initialNodeCount`` forces a new pool, so it is never raised."""
    size = reported_count(observed, "nodeCount")
    groups = observation(observed).get("instanceGroupUrls")
    # Observed resources may be read lazily: a list arrives as a Sequence view.
    if size is None or not isinstance(groups, Sequence) or isinstance(groups, str) or not groups:
        return None
    per_zone = -(-pool.needed // len(groups))
    return replace(pool, needed=per_zone).raised(size)


def _identity(cloud: Cloud, out: dict[str, Obj], observed: Mapping[str, Any]) -> None:
    account = cloud.resource(
        PLATFORM,
        "ServiceAccount",
        "service-account",
        {"displayName": f"Modelplane InferenceCluster {cloud.cluster}"},
    )
    # The account id is the external name, and GCP bounds it far below a resource name.
    account["metadata"]["annotations"] = {
        EXTERNAL_NAME: dns_label("mp", cloud.cluster, max_len=SERVICE_ACCOUNT_ID_MAX)
    }
    out["service-account"] = account
    out["service-account-key"] = cloud.resource(
        PLATFORM,
        "ServiceAccountKey",
        "service-account-key",
        {"serviceAccountIdRef": cloud.ref("service-account")},
        **connection_secret(cloud, "service-account-key"),
    )
    # The member names the account's email, which GCP assigns: composed once it is known.
    email = at_provider(observed.get("service-account"), "email")
    if email:
        out["iam-container-admin"] = cloud.resource(
            PLATFORM,
            "ProjectIAMMember",
            "iam-container-admin",
            {"role": "roles/container.admin", "member": f"serviceAccount:{email}"},
        )


def _on_cluster(cloud: Cloud, t: Target) -> dict[str, Obj]:
    # Filestore would use the project's default network; pin it to the cluster's (the
    # Network's name in GCP is its resource name, its external name).
    parameters = {"tier": "standard", "network": cloud.name("network")}
    return {
        "storage-class": storage_class(
            t, STORAGE_CLASS, "filestore.csi.storage.gke.io", parameters, allowVolumeExpansion=True
        ),
        DRIVER_INSTALLER: stack_object(t, "gpu-driver", DRIVER_INSTALLER, driver_installer()),
    }


def driver_installer() -> Obj:
    """A DaemonSet running GKE's preloaded driver installer once on every GPU node GKE installs
    no driver on, before a pause container that keeps the pod (and the node's driver) counted.
    It tolerates every taint: GPU nodes carry Modelplane's."""
    labels = {"app.kubernetes.io/name": DRIVER_INSTALLER}
    not_installed_by_gke = [
        {"key": "cloud.google.com/gke-accelerator", "operator": "Exists"},
        {"key": "cloud.google.com/gke-gpu-driver-version", "operator": "DoesNotExist"},
    ]
    pod = {
        "priorityClassName": "system-node-critical",
        "hostNetwork": True,
        "hostPID": True,
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": not_installed_by_gke}]
                }
            }
        },
        "tolerations": [{"operator": "Exists"}],
        "volumes": [
            {"name": name, "hostPath": {"path": path}} for name, path, _ in _INSTALLER_MOUNTS
        ],
        "initContainers": [_installer_container()],
        "containers": [{"name": "pause", "image": PAUSE_IMAGE}],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": DRIVER_INSTALLER, "namespace": "kube-system", "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {"metadata": {"labels": labels}, "spec": pod},
        },
    }


# (volume, host path, path in the installer): the installer writes the driver to the host's
# driver root through the second, and builds against the host's kernel through the others.
_INSTALLER_MOUNTS = (
    ("dev", "/dev", "/dev"),
    ("driver-root", GKE_DRIVER_ROOT, "/usr/local/nvidia"),
    ("vulkan-icd", f"{GKE_DRIVER_ROOT}/vulkan/icd.d", "/etc/vulkan/icd.d"),
    ("host-root", "/", "/root"),
    ("cos-tools", "/var/lib/cos-tools", "/build/cos-tools"),
)


def _installer_container() -> Obj:
    env = {
        "NVIDIA_INSTALL_DIR_HOST": GKE_DRIVER_ROOT,
        "NVIDIA_INSTALL_DIR_CONTAINER": "/usr/local/nvidia",
        "VULKAN_ICD_DIR_HOST": f"{GKE_DRIVER_ROOT}/vulkan/icd.d",
        "VULKAN_ICD_DIR_CONTAINER": "/etc/vulkan/icd.d",
        "ROOT_MOUNT_DIR": "/root",
        "COS_TOOLS_DIR_HOST": "/var/lib/cos-tools",
        "COS_TOOLS_DIR_CONTAINER": "/build/cos-tools",
    }
    return {
        "name": "install",
        "image": DRIVER_INSTALLER_IMAGE,
        "imagePullPolicy": "Never",
        # A restarted pod finds the module loaded: installing again would fail on a busy driver.
        "command": ["bash", "-c", "lsmod | grep -q '^nvidia ' || exec /cos-gpu-installer install"],
        "env": [{"name": k, "value": v} for k, v in env.items()],
        "resources": {"requests": {"cpu": "150m"}},
        "securityContext": {"privileged": True},
        "volumeMounts": [{"name": n, "mountPath": m} for n, _, m in _INSTALLER_MOUNTS],
    }
