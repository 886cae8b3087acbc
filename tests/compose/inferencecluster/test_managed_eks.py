"""An EKS InferenceCluster: the region, the network across the pools' zones, the node groups as
the classes describe them, the autoscaler that makes maxNodeCount reachable, and EFS."""

from __future__ import annotations

from tests.compose.inferencecluster.managed import managed, provisioned

REGION = "us-east-2"


def _composed() -> dict:
    return provisioned(managed("EKS")).resources


def test_every_aws_resource_is_in_the_clusters_region() -> None:
    regions = {
        r["spec"]["forProvider"].get("region")
        for r in _composed().values()
        if r["apiVersion"].split("/")[0].endswith("aws.m.upbound.io")
        and r["kind"] not in ("Role", "RolePolicyAttachment", "Policy")
    }
    assert regions == {REGION}


def test_the_gpu_node_group_runs_the_class_machine_with_the_pools_counts() -> None:
    group = _composed()["nodegroup-gpua"]
    fp = group["spec"]["forProvider"]
    assert fp["instanceTypes"] == ["g6e.12xlarge"]
    assert fp["diskSize"] == 500
    assert fp["amiType"] == "AL2023_x86_64_NVIDIA"
    # Set once; the autoscaler owns the size after (no LateInitialize, nothing in forProvider).
    assert group["spec"]["initProvider"] == {
        "scalingConfig": {"minSize": 1, "maxSize": 6, "desiredSize": 2}
    }
    assert "scalingConfig" not in fp
    assert "LateInitialize" not in group["spec"]["managementPolicies"]


def test_the_gpu_node_group_is_labelled_for_our_workloads_and_tainted_for_gpus() -> None:
    fp = _composed()["nodegroup-gpua"]["spec"]["forProvider"]
    assert fp["labels"] == {"modelplane.ai/pool": "gpua", "modelplane.ai/gpu": "nvidia-l40s"}
    assert fp["taint"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]


def test_the_gpu_node_group_runs_in_the_private_subnets_of_its_zones() -> None:
    composed = _composed()
    names = [r["name"] for r in composed["nodegroup-gpua"]["spec"]["forProvider"]["subnetIdRefs"]]
    zones = [
        (
            composed_subnet["spec"]["forProvider"]["availabilityZone"],
            composed_subnet["spec"]["forProvider"]["mapPublicIpOnLaunch"],
        )
        for composed_subnet in composed.values()
        if composed_subnet["kind"] == "Subnet" and composed_subnet["metadata"]["name"] in names
    ]
    assert sorted(zones) == [("us-east-2b", False), ("us-east-2c", False)]


def test_a_system_node_group_hosts_the_stack_untainted() -> None:
    fp = _composed()["nodegroup-system"]["spec"]["forProvider"]
    assert fp["amiType"] == "AL2023_x86_64_STANDARD"
    assert fp["labels"] == {"modelplane.ai/pool": "system"}
    assert "taint" not in fp


def test_the_network_gives_every_zone_a_public_and_a_private_subnet_behind_a_nat() -> None:
    composed = _composed()
    subnets = of_kind_in(composed, "Subnet")
    assert len(subnets) == 4
    public = [s for s in subnets if s["spec"]["forProvider"]["mapPublicIpOnLaunch"]]
    assert {s["spec"]["forProvider"]["tags"]["kubernetes.io/role/elb"] for s in public} == {"1"}
    assert composed["route-private"]["spec"]["forProvider"]["natGatewayIdRef"] == {
        "name": composed["nat-gateway"]["metadata"]["name"]
    }
    assert composed["route-public"]["spec"]["forProvider"]["gatewayIdRef"] == {
        "name": composed["internet-gateway"]["metadata"]["name"]
    }


def test_a_pool_without_zones_spans_two_zones_as_eks_requires() -> None:
    ic = managed("EKS")
    del ic["spec"]["nodePools"][0]["zones"]
    composed = provisioned(ic).resources
    zones = sorted(
        s["spec"]["forProvider"]["availabilityZone"] for s in of_kind_in(composed, "Subnet")
    )
    assert zones == ["us-east-2a", "us-east-2a", "us-east-2b", "us-east-2b"]


def test_the_cluster_autoscaler_is_installed_with_its_own_pod_identity() -> None:
    composed = _composed()
    autoscaler = composed["cluster-autoscaler"]
    values = autoscaler["spec"]["forProvider"]["values"]
    assert values["cloudProvider"] == "aws"
    assert values["awsRegion"] == REGION
    assert values["autoDiscovery"]["clusterName"] == composed["cluster"]["metadata"]["name"]
    identity = composed["pod-identity-autoscaler"]["spec"]["forProvider"]
    assert (identity["namespace"], identity["serviceAccount"]) == (
        "kube-system",
        "cluster-autoscaler",
    )
    assert identity["roleArnRef"] == {"name": composed["role-autoscaler"]["metadata"]["name"]}


def test_efs_backs_modelcache_with_a_mount_target_in_every_zone() -> None:
    composed = _composed()
    mounts = of_kind_in(composed, "MountTarget")
    assert len(mounts) == 2
    [storage] = [
        r["spec"]["forProvider"]["manifest"]
        for r in composed.values()
        if r["kind"] == "Object" and r["spec"]["forProvider"]["manifest"]["kind"] == "StorageClass"
    ]
    assert storage["provisioner"] == "efs.csi.aws.com"
    # The file system's id, as AWS assigned it (render's simulation: its resource name).
    assert storage["parameters"]["fileSystemId"] == composed["efs"]["metadata"]["name"]
    addons = {r["spec"]["forProvider"]["addonName"] for r in of_kind_in(composed, "Addon")}
    assert {"aws-efs-csi-driver", "eks-pod-identity-agent", "vpc-cni", "coredns"} <= addons


def test_the_kubeconfig_comes_from_a_clusterauth_of_the_cluster() -> None:
    composed = _composed()
    auth = composed["cluster-auth"]
    assert auth["spec"]["forProvider"]["clusterNameRef"] == {
        "name": composed["cluster"]["metadata"]["name"]
    }
    configs = of_kind_in(composed, "ClusterProviderConfig")
    assert {c["spec"]["credentials"]["secretRef"]["name"] for c in configs} == {
        auth["spec"]["writeConnectionSecretToRef"]["name"]
    }
    assert all("identity" not in c["spec"] for c in configs)


def of_kind_in(composed: dict, kind: str) -> list[dict]:
    return [r for r in composed.values() if r["kind"] == kind]
