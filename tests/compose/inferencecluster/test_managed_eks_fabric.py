"""An EKS pool from a Capacity Block on the EFA fabric (the public kimi-k2 example's pool): a
launch template carrying the instance, the disk, the reservation and an EFA interface on every
network card, the security groups EFA needs, and the DRA driver that publishes the interfaces."""

from __future__ import annotations

from tests.compose.inferencecluster.managed import (
    gpu_class,
    managed,
    observed_as_created,
    observed_as_ready,
    provisioned,
    run,
    wave_of,
    waves,
)
from tests.compose.inferencecluster.support import upstream

RESERVATION = "cr-0123456789abcdef0"


def _fabric_cluster() -> dict:
    return managed(
        "EKS",
        nodePools=[
            {
                "name": "gpu-h200",
                "className": "h200",
                "nodeCount": 2,
                "minNodeCount": 2,
                "maxNodeCount": 2,
                "zones": ["us-east-2b"],
                "fabric": {"type": "EFA"},
                "capacityBlock": {"capacityReservationId": RESERVATION},
            }
        ],
    )


def _h200() -> dict:
    cls = gpu_class("EKS", "h200")
    cls["spec"]["provisioning"]["eks"] = {
        "instanceType": "p5en.48xlarge",
        "diskSizeGb": 1024,
        "accelerator": {"type": "nvidia-h200", "count": 8},
    }
    return cls


def _provisioned() -> dict:
    ic = _fabric_cluster()
    response = run(ic, **{"inference-classes": [_h200()]})
    for _ in range(4):
        response = run(ic, observed_as_ready(response), **{"inference-classes": [_h200()]})
    return response.resources


def test_the_launch_template_carries_the_instance_the_disk_and_the_capacity_block() -> None:
    fp = _provisioned()["launch-template-gpu-h200"]["spec"]["forProvider"]
    assert fp["instanceType"] == "p5en.48xlarge"
    assert fp["blockDeviceMappings"] == [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": 1024}}]
    assert fp["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert fp["capacityReservationSpecification"]["capacityReservationTarget"] == {
        "capacityReservationId": RESERVATION
    }


def test_every_network_card_carries_an_efa_interface_in_the_efa_and_cluster_groups() -> None:
    composed = _provisioned()
    interfaces = composed["launch-template-gpu-h200"]["spec"]["forProvider"]["networkInterfaces"]
    assert len(interfaces) == 16
    assert [i["interfaceType"] for i in interfaces] == ["efa"] + ["efa-only"] * 15
    cluster_group = "sg-" + composed["cluster"]["metadata"]["name"]
    efa_group = composed["efa-security-group"]["metadata"]["name"]
    assert all(i["securityGroups"] == [efa_group, cluster_group] for i in interfaces)


def test_the_node_group_launches_from_the_template_as_a_capacity_block() -> None:
    composed = _provisioned()
    fp = composed["nodegroup-gpu-h200"]["spec"]["forProvider"]
    template = composed["launch-template-gpu-h200"]["spec"]["forProvider"]["name"]
    assert fp["launchTemplate"] == {"name": template, "version": "$Latest"}
    assert fp["capacityType"] == "CAPACITY_BLOCK"
    assert "instanceTypes" not in fp and "diskSize" not in fp


def test_the_efa_node_group_waits_for_both_security_group_ids() -> None:
    ic = _fabric_cluster()
    first = run(ic, **{"inference-classes": [_h200()]})
    created = run(ic, observed_as_created(first), **{"inference-classes": [_h200()]})
    assert "nodegroup-gpu-h200" not in created.resources
    assert "gpu-h200 (not created yet)" in created.condition("NodePoolsReady")[2]


def test_the_efa_group_admits_all_traffic_from_and_to_itself() -> None:
    composed = _provisioned()
    name = composed["efa-security-group"]["metadata"]["name"]
    for key in ("efa-ingress", "efa-egress"):
        fp = composed[key]["spec"]["forProvider"]
        assert fp["ipProtocol"] == "-1"
        assert fp["securityGroupIdRef"] == fp["referencedSecurityGroupIdRef"] == {"name": name}


def test_the_efa_dra_driver_runs_on_the_tainted_gpu_nodes() -> None:
    release = _provisioned()["efa-dra-driver"]
    assert release["spec"]["forProvider"]["chart"]["name"] == "aws-dranet"
    assert release["spec"]["forProvider"]["values"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]


def test_every_fabric_object_is_admitted_by_its_crd() -> None:
    for key, obj in _provisioned().items():
        assert [str(e) for e in upstream().admit(obj).errors] == [], key


def test_a_plain_pool_composes_no_template_and_no_efa_group() -> None:
    composed = provisioned(managed("EKS")).resources
    assert not [k for k in composed if k.startswith(("launch-template-", "efa-"))]


def test_the_node_group_goes_before_its_template_and_the_template_before_the_efa_group() -> None:
    wave = wave_of(waves(_provisioned()))
    assert wave["nodegroup-gpu-h200"] < wave["launch-template-gpu-h200"]
    assert wave["launch-template-gpu-h200"] < wave["efa-security-group"]
