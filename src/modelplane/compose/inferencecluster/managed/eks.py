"""An EKS cluster that serves GPUs: its network, identities, control plane, node groups, the
cluster autoscaler (EKS node groups do not scale by themselves) and EFS for ModelCache.

The network is the standard EKS topology: a public and a private subnet per zone; nodes run in
the private ones and reach out through a NAT gateway, load balancers land in the public ones
(tagged for ELB discovery). The zones are those the pools name, topped up to the two EKS
requires. GPU node groups run the AL2023 NVIDIA AMI (the driver is in the image). The
kubeconfig comes from a ClusterAuth, which mints a token with the platform team's AWS
credentials and refreshes it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from modelplane.compose.inferencecluster.managed import eks_fabric as fabric
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
    storage_class,
)
from modelplane.compose.inferencecluster.managed.eks_fabric import ec2
from modelplane.compose.inferencecluster.releases import Chart, release
from modelplane.compose.inferencecluster.target import Target
from modelplane.compose.shared.gpu_taint import GPU_TAINT_KEY
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.labels import POOL
from modelplane.observed import carried

EKS = "eks.aws.m.upbound.io/v1beta1"
IAM = "iam.aws.m.upbound.io/v1beta1"
EFS = "efs.aws.m.upbound.io/v1beta1"

VPC_CIDR = "10.0.0.0/16"
NAMES = NameBudget()
"""Every name AWS takes here fits a Kubernetes name: a cluster's 100 characters, a node group's
63, a role's 64."""
MAX_ZONES = 8
"""Each zone takes a /20 in each half of the /16."""
SYSTEM_INSTANCE_TYPE = "m6i.xlarge"
SYSTEM_NODES = PoolPlan(
    name=SYSTEM_POOL,
    machine=SYSTEM_INSTANCE_TYPE,
    disk_gb=0,
    accelerator_type="",
    accelerator_count=0,
    nodes=1,
    min_nodes=1,
    max_nodes=2,
    zones=(),
)
"""The system node group's size: 1, growing to 2 (its other fields are not read)."""
AMI_SYSTEM = "AL2023_x86_64_STANDARD"
AMI_GPU = "AL2023_x86_64_NVIDIA"
ADDONS = ("vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent")
EFS_CSI_ADDON = "aws-efs-csi-driver"
PREINSTALLED_ADDONS = ("vpc-cni", "kube-proxy", "coredns")
"""The add-ons EKS installs self-managed with every cluster: their managed add-on takes them over
(resolveConflictsOnCreate OVERWRITE), where the default NONE fails the create on any field the
self-managed copy set differently."""
STACK_NEEDS_ON_DELETE = (
    "addon-vpc-cni",
    "addon-kube-proxy",
    "addon-coredns",
    "addon-eks-pod-identity-agent",
    f"addon-{EFS_CSI_ADDON}",
    "route-private",
    "route-public",
)
"""What Helm's uninstalls, their hooks' pods and the EFS CSI controller releasing the caches'
volumes need while the stack is deleted: pod networking, DNS, the pods' AWS credentials and the
private subnets' route out (whose references hold the NAT gateway, the internet gateway, the
route tables and the subnets), with every route table association."""
STORAGE_CLASS = "modelplane-rwx-efs"
# The scaling config is set through initProvider and then left to the autoscaler. upjet at the
# commit provider-upjet-aws v2.6.0 builds on (59c45527ebe4) drops the diffs of a field only
# initProvider sets by the field's path in the API's shape, which misses a nested one
# (scalingConfig.desiredSize is scaling_config.0.desired_size in Terraform's diff): with
# minSize and maxSize in forProvider, every poll would set the size back to the seed. Only a
# change of the bounds, or admitted replicas needing more nodes than the group has, puts
# scalingConfig in forProvider, until the node group reports them.
NODE_GROUP_POLICIES = ["Observe", "Create", "Update", "Delete"]
AUTOSCALER = Chart(
    "cluster-autoscaler",
    "https://kubernetes.github.io/autoscaler",
    "cluster-autoscaler",
    "kube-system",
)
AUTOSCALER_VERSION = "9.57.0"
AUTOSCALER_SERVICE_ACCOUNT = "cluster-autoscaler"
EFS_CSI_SERVICE_ACCOUNT = "efs-csi-controller-sa"

POLICY = "arn:aws:iam::aws:policy/"
CLUSTER_POLICIES = {"cluster": POLICY + "AmazonEKSClusterPolicy"}
NODE_POLICIES = {
    "worker": POLICY + "AmazonEKSWorkerNodePolicy",
    "cni": POLICY + "AmazonEKS_CNI_Policy",
    "ecr": POLICY + "AmazonEC2ContainerRegistryReadOnly",
}
EFS_CSI_POLICY = POLICY + "service-role/AmazonEFSCSIDriverPolicy"
AUTOSCALER_POLICY = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Action": [
                "autoscaling:DescribeAutoScalingGroups",
                "autoscaling:DescribeAutoScalingInstances",
                "autoscaling:DescribeLaunchConfigurations",
                "autoscaling:DescribeScalingActivities",
                "autoscaling:DescribeTags",
                "ec2:DescribeImages",
                "ec2:DescribeInstanceTypes",
                "ec2:DescribeLaunchTemplateVersions",
                "ec2:GetInstanceTypesFromInstanceRequirements",
                "eks:DescribeNodegroup",
            ],
            "Resource": ["*"],
        },
        {
            "Effect": "Allow",
            "Action": [
                "autoscaling:SetDesiredCapacity",
                "autoscaling:TerminateInstanceInAutoScalingGroup",
            ],
            "Resource": ["*"],
        },
    ],
}


def _trust(service: str, actions: tuple[str, ...] = ("sts:AssumeRole",)) -> str:
    statement = {"Effect": "Allow", "Principal": {"Service": service}, "Action": list(actions)}
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]}, separators=(",", ":"))


POD_IDENTITY_TRUST = _trust("pods.eks.amazonaws.com", ("sts:AssumeRole", "sts:TagSession"))


def zones(cloud: Cloud) -> list[str]:
    named = sorted({z for p in cloud.pools or () for z in p.zones})
    for letter in "ab":
        if len(named) >= 2:
            break
        candidate = f"{cloud.location}{letter}"
        if candidate not in named:
            named.append(candidate)
    return sorted(named)


def problems(cloud: Cloud) -> list[str]:
    if len(zones(cloud)) > MAX_ZONES:
        return [
            f"spec.nodePools[].zones name more than {MAX_ZONES} zones; an EKS cluster spans"
            f" at most {MAX_ZONES}"
        ]
    return []


def provision(cloud: Cloud, t: Target, observed: Mapping[str, Any]) -> Provisioned:
    out: dict[str, Obj] = {}
    _network(cloud, out)
    _identities(cloud, out)
    _control_plane(cloud, out)
    _efs_csi_addon(cloud, out, observed)
    pools, outlives = _node_groups(cloud, out, observed)
    _storage(cloud, out)
    on_cluster = _on_cluster(cloud, t, observed)
    return Provisioned(
        resources=out,
        on_cluster=on_cluster,
        kubeconfig_from="cluster-auth",
        nodes_from=tuple(pools[:1]),
        gpu_pools_from=tuple(pools[1:]),
        outlives=(*outlives, *policies_outlive_their_users(out), *_efs_csi_outlives(out)),
        holds_stack=(f"nodegroup-{SYSTEM_POOL}", "cluster-auth", *_stack_needs_on_delete(out)),
        storage_class=STORAGE_CLASS,
    )


def _stack_needs_on_delete(out: Mapping[str, Obj]) -> tuple[str, ...]:
    """STACK_NEEDS_ON_DELETE and the route table associations, which nothing refers to: one
    gone early takes its subnet's route out with it."""
    associations = sorted(k for k in out if k.startswith("route-table-association-"))
    return (*STACK_NEEDS_ON_DELETE, *associations)


def _network(cloud: Cloud, out: dict[str, Obj]) -> None:
    out["vpc"] = ec2(
        cloud,
        "VPC",
        "vpc",
        {"cidrBlock": VPC_CIDR, "enableDnsHostnames": True, "enableDnsSupport": True},
    )
    vpc = {"vpcIdRef": cloud.ref("vpc")}
    out["internet-gateway"] = ec2(cloud, "InternetGateway", "internet-gateway", vpc)
    for tier in ("public", "private"):
        out[f"route-table-{tier}"] = ec2(cloud, "RouteTable", f"route-table-{tier}", vpc)
    out["route-public"] = ec2(
        cloud,
        "Route",
        "route-public",
        {
            "routeTableIdRef": cloud.ref("route-table-public"),
            "destinationCidrBlock": "0.0.0.0/0",
            "gatewayIdRef": cloud.ref("internet-gateway"),
        },
    )
    for i, zone in enumerate(zones(cloud)):
        for tier, third, role in (
            ("public", 16 * i, "elb"),
            ("private", 128 + 16 * i, "internal-elb"),
        ):
            subnet = f"subnet-{tier}-{zone}"
            out[subnet] = ec2(
                cloud,
                "Subnet",
                subnet,
                {
                    **vpc,
                    "availabilityZone": zone,
                    "cidrBlock": f"10.0.{third}.0/20",
                    "mapPublicIpOnLaunch": tier == "public",
                    "tags": {f"kubernetes.io/role/{role}": "1"},
                },
            )
            out[f"route-table-association-{tier}-{zone}"] = ec2(
                cloud,
                "RouteTableAssociation",
                f"route-table-association-{tier}-{zone}",
                {
                    "routeTableIdRef": cloud.ref(f"route-table-{tier}"),
                    "subnetIdRef": cloud.ref(subnet),
                },
            )
    out["nat-address"] = ec2(cloud, "EIP", "nat-address", {"domain": "vpc"})
    out["nat-gateway"] = ec2(
        cloud,
        "NATGateway",
        "nat-gateway",
        {
            "allocationIdRef": cloud.ref("nat-address"),
            "subnetIdRef": cloud.ref(f"subnet-public-{zones(cloud)[0]}"),
            "connectivityType": "public",
        },
    )
    out["route-private"] = ec2(
        cloud,
        "Route",
        "route-private",
        {
            "routeTableIdRef": cloud.ref("route-table-private"),
            "destinationCidrBlock": "0.0.0.0/0",
            "natGatewayIdRef": cloud.ref("nat-gateway"),
        },
    )


def _role(
    cloud: Cloud, out: dict[str, Obj], role: str, trust: str, policies: dict[str, str]
) -> None:
    out[f"role-{role}"] = cloud.resource(IAM, "Role", f"role-{role}", {"assumeRolePolicy": trust})
    for name, arn in policies.items():
        key = f"role-{role}-{name}"
        out[key] = cloud.resource(
            IAM,
            "RolePolicyAttachment",
            key,
            {"policyArn": arn, "roleRef": cloud.ref(f"role-{role}")},
        )


ROLE_USER_REFS = ("roleArnRef", "nodeRoleArnRef")
"""The references by which a resource acts with a role: the cluster's control plane, a node
group's nodes, a pod identity's pods."""


def policies_outlive_their_users(out: Mapping[str, Obj]) -> list[tuple[str, str]]:
    """(attachment, user): a role's policy attachments outlive whatever acts with the role. Only
    the role is named by its users, so nothing else would hold the attachments: deleted first,
    they would take from the control plane the ELB permissions (AmazonEKSClusterPolicy) its
    cloud provider deletes the gateway's load balancer with, and from nodes being drained and
    terminated the permissions they and their network interfaces are released with."""
    attachments: dict[str, list[str]] = {}
    for key, obj in sorted(out.items()):
        if obj["kind"] == "RolePolicyAttachment":
            role = obj["spec"]["forProvider"]["roleRef"]["name"]
            attachments.setdefault(role, []).append(key)
    pairs = []
    for key, obj in sorted(out.items()):
        for field in ROLE_USER_REFS:
            role = str(objects.dig(obj["spec"]["forProvider"], field, "name") or "")
            pairs += [(attachment, key) for attachment in attachments.get(role, ())]
    return pairs


def _identities(cloud: Cloud, out: dict[str, Obj]) -> None:
    _role(cloud, out, "cluster", _trust("eks.amazonaws.com"), CLUSTER_POLICIES)
    _role(cloud, out, "node", _trust("ec2.amazonaws.com"), NODE_POLICIES)
    _role(cloud, out, "efs-csi", POD_IDENTITY_TRUST, {"efs": EFS_CSI_POLICY})
    out["policy-autoscaler"] = cloud.resource(
        IAM,
        "Policy",
        "policy-autoscaler",
        {"policy": json.dumps(AUTOSCALER_POLICY, separators=(",", ":"))},
    )
    _role(cloud, out, "autoscaler", POD_IDENTITY_TRUST, {})
    out["role-autoscaler-policy"] = cloud.resource(
        IAM,
        "RolePolicyAttachment",
        "role-autoscaler-policy",
        {"policyArnRef": cloud.ref("policy-autoscaler"), "roleRef": cloud.ref("role-autoscaler")},
    )
    out["pod-identity-autoscaler"] = cloud.resource(
        EKS,
        "PodIdentityAssociation",
        "pod-identity-autoscaler",
        {
            "region": cloud.location,
            "clusterNameRef": cloud.ref("cluster"),
            "namespace": "kube-system",
            "serviceAccount": AUTOSCALER_SERVICE_ACCOUNT,
            "roleArnRef": cloud.ref("role-autoscaler"),
        },
    )


def _control_plane(cloud: Cloud, out: dict[str, Obj]) -> None:
    subnets = [
        cloud.ref(f"subnet-{tier}-{z}") for z in zones(cloud) for tier in ("public", "private")
    ]
    plane: Obj = {
        "region": cloud.location,
        "roleArnRef": cloud.ref("role-cluster"),
        "accessConfig": {
            "authenticationMode": "API_AND_CONFIG_MAP",
            "bootstrapClusterCreatorAdminPermissions": True,
        },
        "vpcConfig": {
            "endpointPrivateAccess": True,
            "endpointPublicAccess": True,
            "subnetIdRefs": subnets,
        },
    }
    if cloud.version:
        plane["version"] = cloud.version
    out["cluster"] = cloud.resource(EKS, "Cluster", "cluster", plane)
    out["cluster-auth"] = cloud.resource(
        EKS,
        "ClusterAuth",
        "cluster-auth",
        {"region": cloud.location, "clusterNameRef": cloud.ref("cluster")},
        **connection_secret(cloud, "cluster-auth"),
    )
    for addon in ADDONS:
        extra = {"resolveConflictsOnCreate": "OVERWRITE"} if addon in PREINSTALLED_ADDONS else {}
        out[f"addon-{addon}"] = _addon(cloud, addon, extra)


def _addon(cloud: Cloud, addon: str, extra: Obj) -> Obj:
    for_provider = {
        "region": cloud.location,
        "addonName": addon,
        "clusterNameRef": cloud.ref("cluster"),
        **extra,
    }
    return cloud.resource(EKS, "Addon", f"addon-{addon}", for_provider)


def _efs_csi_addon(cloud: Cloud, out: dict[str, Obj], observed: Mapping[str, Any]) -> None:
    """The EFS CSI driver add-on with its own pod identity, composed once AWS reported its
    role's ARN. Created with the add-on, the association exists before the controller's pods
    start; a separate PodIdentityAssociation created alongside may come after them, and pods
    started before it run without AWS credentials until restarted. The add-on's
    podIdentityAssociation takes a role ARN only (no reference), hence the wait."""
    key = f"addon-{EFS_CSI_ADDON}"
    role_arn = at_provider(observed.get("role-efs-csi"), "arn")
    if not role_arn:
        if key in observed:
            out[key] = carried(observed[key])
        return
    association = {"roleArn": role_arn, "serviceAccount": EFS_CSI_SERVICE_ACCOUNT}
    out[key] = _addon(cloud, EFS_CSI_ADDON, {"podIdentityAssociation": [association]})


def _efs_csi_outlives(out: Mapping[str, Obj]) -> list[tuple[str, str]]:
    """The EFS CSI role and its policy outlive the add-on that names the role by ARN (no
    reference says so): the controller deletes the caches' access points with them."""
    addon = f"addon-{EFS_CSI_ADDON}"
    if addon not in out:
        return []
    return [("role-efs-csi", addon), ("role-efs-csi-efs", addon)]


def _node_group(
    cloud: Cloud, key: str, for_provider: Obj, pool: PoolPlan, observed: Mapping[str, Any] | None
) -> Obj:
    base = {
        "region": cloud.location,
        "clusterNameRef": cloud.ref("cluster"),
        "nodeRoleArnRef": cloud.ref("role-node"),
        **for_provider,
    }
    rescaled = _rescaled(pool, observed)
    if rescaled:
        base["scalingConfig"] = rescaled
    scaling = {"minSize": pool.min_nodes, "maxSize": pool.max_nodes, "desiredSize": pool.seed}
    return cloud.resource(
        EKS,
        "NodeGroup",
        key,
        base,
        initProvider={"scalingConfig": scaling},
        managementPolicies=list(NODE_GROUP_POLICIES),
    )


def _rescaled(pool: PoolPlan, observed: Mapping[str, Any] | None) -> Obj | None:
    """The scaling config that moves a created node group to new bounds, or up to the nodes
    its admitted replicas need, keeping the size the autoscaler gave it when that is more
    (within the bounds); None while the group reports the bounds asked for and enough nodes,
    or reports no scaling config (not created yet: initProvider creates it)."""
    reported = observation(observed).get("scalingConfig")
    if not isinstance(reported, Mapping) or not {"minSize", "maxSize", "desiredSize"} <= set(
        reported
    ):
        return None
    size = int(reported["desiredSize"])
    bounds = (pool.min_nodes, pool.max_nodes)
    if (int(reported["minSize"]), int(reported["maxSize"])) == bounds and pool.raised(size) is None:
        return None
    desired = pool.within(max(size, pool.needed))
    return {"minSize": bounds[0], "maxSize": bounds[1], "desiredSize": desired}


def _node_groups(
    cloud: Cloud, out: dict[str, Obj], observed: Mapping[str, Any]
) -> tuple[list[str], list[tuple[str, str]]]:
    private = [cloud.ref(f"subnet-private-{z}") for z in zones(cloud)]
    system = f"nodegroup-{SYSTEM_POOL}"
    out[system] = _node_group(
        cloud,
        system,
        {
            "amiType": AMI_SYSTEM,
            "instanceTypes": [SYSTEM_INSTANCE_TYPE],
            "subnetIdRefs": private,
            "labels": {POOL: SYSTEM_POOL},
        },
        SYSTEM_NODES,
        observed.get(system),
    )
    keys, outlives = [system], []
    if fabric.uses_efa(cloud):
        fabric.efa_security_group(cloud, out)
    groups = fabric.security_groups(observed)
    for pool in cloud.pools or ():
        key = f"nodegroup-{pool.name}"
        keys.append(key)
        group = _gpu_group(cloud, pool)
        if fabric.needs_template(pool):
            template = f"launch-template-{pool.name}"
            out[template] = fabric.launch_template(cloud, pool, groups)
            outlives.append((template, key))
            if pool.fabric == fabric.EFA:
                outlives.append(("efa-security-group", template))
                if not groups and key not in observed:
                    continue  # its nodes would launch without the groups' ids
            group = fabric.templated_group(cloud, pool, group)
        out[key] = _node_group(cloud, key, group, pool, observed.get(key))
    return keys, outlives


def _gpu_group(cloud: Cloud, pool: PoolPlan) -> Obj:
    subnets = [cloud.ref(f"subnet-private-{z}") for z in (pool.zones or zones(cloud))]
    return {
        "amiType": AMI_GPU,
        "instanceTypes": [pool.machine],
        "diskSize": pool.disk_gb,
        "subnetIdRefs": subnets,
        # The cluster autoscaler (v1.35.0) models a node of a group at zero with these, read
        # through EKS's DescribeNodegroup (its policy grants eks:DescribeNodegroup): node group
        # tags are not copied to the Auto Scaling group, and it reads none but resources/ ones.
        "labels": pool.labels,
        "taint": [{"key": GPU_TAINT_KEY, "value": GPU_TAINT_VALUE, "effect": "NO_SCHEDULE"}],
    }


def _storage(cloud: Cloud, out: dict[str, Obj]) -> None:
    out["efs"] = cloud.resource(
        EFS,
        "FileSystem",
        "efs",
        {"region": cloud.location, "encrypted": True, "throughputMode": "elastic"},
    )
    out["efs-security-group"] = ec2(
        cloud,
        "SecurityGroup",
        "efs-security-group",
        {"vpcIdRef": cloud.ref("vpc"), "name": cloud.name("efs")},
    )
    out["efs-nfs-ingress"] = ec2(
        cloud,
        "SecurityGroupIngressRule",
        "efs-nfs-ingress",
        {
            "securityGroupIdRef": cloud.ref("efs-security-group"),
            "ipProtocol": "tcp",
            "fromPort": 2049,
            "toPort": 2049,
            "cidrIpv4": VPC_CIDR,
        },
    )
    for zone in zones(cloud):
        key = f"efs-mount-{zone}"
        out[key] = cloud.resource(
            EFS,
            "MountTarget",
            key,
            {
                "region": cloud.location,
                "fileSystemIdRef": cloud.ref("efs"),
                "subnetIdRef": cloud.ref(f"subnet-private-{zone}"),
                "securityGroupsRefs": [cloud.ref("efs-security-group")],
            },
        )


def _on_cluster(cloud: Cloud, t: Target, observed: Mapping[str, Any]) -> dict[str, Obj]:
    out: dict[str, Obj] = {}
    values = {
        "cloudProvider": "aws",
        "awsRegion": cloud.location,
        "autoDiscovery": {"clusterName": cloud.name("cluster")},
        "rbac": {"serviceAccount": {"name": AUTOSCALER_SERVICE_ACCOUNT}},
        "extraArgs": {"balance-similar-node-groups": True},
    }
    out[AUTOSCALER.key] = release(t, "cluster-autoscaler", AUTOSCALER, AUTOSCALER_VERSION, values)
    if fabric.uses_efa(cloud):
        out[fabric.DRA_DRIVER.key] = fabric.dra_driver(t)
    # The StorageClass pins the file system's id, known once AWS created it.
    fs_id = at_provider(observed.get("efs"), "id")
    if fs_id:
        parameters = {"provisioningMode": "efs-ap", "fileSystemId": fs_id, "directoryPerms": "700"}
        out["storage-class"] = storage_class(t, STORAGE_CLASS, "efs.csi.aws.com", parameters)
    return out
