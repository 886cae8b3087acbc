"""What an EKS pool needs beyond a plain node group: a launch template when the pool comes from
an EC2 Capacity Block or joins the EFA fabric, the security group EFA's OS-bypass traffic needs,
and the EFA DRA driver that publishes the interfaces a multi-node gang claims.

A node group with a launch template takes the instance type and the disk from the template
(EKS refuses ``instanceTypes`` or ``diskSize`` beside one). An EFA interface on every network
card gives the instance its full fabric bandwidth: card 0 is ``efa`` (it also carries IP
traffic), the others ``efa-only``. Defining the interfaces makes their security groups
authoritative, so each carries the EFA group and the cluster's own; both ids are known only once
AWS created them, and the pool's node group waits for them: a node launched without the
cluster's group could never reach its API server.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.compose.inferencecluster.managed.common import (
    Cloud,
    PoolPlan,
    at_provider,
    observation,
)
from modelplane.compose.inferencecluster.releases import Chart, release
from modelplane.compose.inferencecluster.target import Target
from modelplane.compose.shared.gpu_taint import GPU_TOLERATION
from modelplane.kube import objects
from modelplane.kube.objects import Obj

EC2 = "ec2.aws.m.upbound.io/v1beta1"
EFA = "EFA"
ROOT_DEVICE = "/dev/xvda"
"""The root volume of the AL2023 EKS AMIs, sized through the template's block device mapping."""
CAPACITY_BLOCK = "CAPACITY_BLOCK"
# The EFA network cards of the GPU instance types that have them (AWS's EFA documentation);
# another EFA-capable type gets one interface: correct, if not its full bandwidth.
EFA_CARDS = {
    "p4d.24xlarge": 4,
    "p4de.24xlarge": 4,
    "p5.48xlarge": 32,
    "p5e.48xlarge": 32,
    "p5en.48xlarge": 16,
}
DRA_DRIVER = Chart(
    "efa-dra-driver", "https://aws.github.io/eks-charts", "aws-dranet", "kube-system"
)
DRA_DRIVER_VERSION = "1.0.0"


def ec2(cloud: Cloud, kind: str, key: str, for_provider: Obj) -> Obj:
    """An EC2 resource in the cluster's region."""
    return cloud.resource(EC2, kind, key, {"region": cloud.location, **for_provider})


def needs_template(pool: PoolPlan) -> bool:
    return pool.fabric == EFA or bool(pool.capacity_reservation)


def uses_efa(cloud: Cloud) -> bool:
    return any(p.fabric == EFA for p in cloud.pools or ())


def security_groups(observed: Mapping[str, Any]) -> list[str]:
    """The EFA group's and the cluster's group's ids, once AWS assigned both; else none."""
    efa = at_provider(observed.get("efa-security-group"), "id")
    vpc = observation(observed.get("cluster"))
    cluster = str(objects.dig(vpc, "vpcConfig", "clusterSecurityGroupId") or "")
    return [efa, cluster] if efa and cluster else []


def launch_template(cloud: Cloud, pool: PoolPlan, groups: list[str]) -> Obj:
    for_provider: Obj = {
        "name": cloud.name(f"launch-template-{pool.name}"),
        "instanceType": pool.machine,
        "blockDeviceMappings": [{"deviceName": ROOT_DEVICE, "ebs": {"volumeSize": pool.disk_gb}}],
    }
    if pool.capacity_reservation:
        for_provider["instanceMarketOptions"] = {"marketType": "capacity-block"}
        for_provider["capacityReservationSpecification"] = {
            "capacityReservationPreference": "capacity-reservations-only",
            "capacityReservationTarget": {"capacityReservationId": pool.capacity_reservation},
        }
    if pool.fabric == EFA:
        interfaces = []
        for card in range(EFA_CARDS.get(pool.machine, 1)):
            interface: Obj = {
                "networkCardIndex": card,
                "deviceIndex": 0 if card == 0 else 1,
                "interfaceType": "efa" if card == 0 else "efa-only",
            }
            if groups:
                interface["securityGroups"] = list(groups)
            interfaces.append(interface)
        for_provider["networkInterfaces"] = interfaces
    return ec2(cloud, "LaunchTemplate", f"launch-template-{pool.name}", for_provider)


def templated_group(cloud: Cloud, pool: PoolPlan, group: Obj) -> Obj:
    """The node group ``group`` launching from the pool's template instead of its own type."""
    out = {k: v for k, v in group.items() if k not in ("instanceTypes", "diskSize")}
    out["launchTemplate"] = {
        "name": cloud.name(f"launch-template-{pool.name}"),
        "version": "$Latest",
    }
    if pool.capacity_reservation:
        out["capacityType"] = CAPACITY_BLOCK
    return out


def efa_security_group(cloud: Cloud, out: dict[str, Obj]) -> None:
    """One group every EFA pool shares, open to all traffic from and to itself."""
    out["efa-security-group"] = ec2(
        cloud,
        "SecurityGroup",
        "efa-security-group",
        {"vpcIdRef": cloud.ref("vpc"), "name": cloud.name("efa")},
    )
    for kind, key in (
        ("SecurityGroupIngressRule", "efa-ingress"),
        ("SecurityGroupEgressRule", "efa-egress"),
    ):
        out[key] = ec2(
            cloud,
            kind,
            key,
            {
                "ipProtocol": "-1",
                "securityGroupIdRef": cloud.ref("efa-security-group"),
                "referencedSecurityGroupIdRef": cloud.ref("efa-security-group"),
            },
        )


def dra_driver(t: Target) -> Obj:
    # The driver's DaemonSet must run on the GPU nodes, which carry the GPU taint.
    values = {"tolerations": [dict(GPU_TOLERATION)]}
    return release(t, "efa-dra-driver", DRA_DRIVER, DRA_DRIVER_VERSION, values)
