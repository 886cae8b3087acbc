"""A GKE InferenceCluster: a regional cluster on its own network, GPU node pools as the classes
describe them (GKE autoscales them; Modelplane installs their driver for DRA), and a service
account the provider configs reach the cluster with."""

from __future__ import annotations

from modelplane.compose.inferencecluster.composer import CLASSES
from tests.compose.inferencecluster.managed import managed, observed_as_ready, provisioned, run

REGION = "us-west1"


def _composed() -> dict:
    return provisioned(managed("GKE")).resources


def test_the_cluster_and_its_pools_are_in_the_clusters_region() -> None:
    composed = _composed()
    locations = {
        r["spec"]["forProvider"]["location"]
        for r in composed.values()
        if r["kind"] in ("Cluster", "NodePool")
    }
    assert locations == {REGION}
    assert composed["subnetwork"]["spec"]["forProvider"]["region"] == REGION


def test_the_gpu_pool_runs_the_class_machine_with_its_accelerators_and_the_pools_counts() -> None:
    fp = _composed()["nodepool-gpua"]["spec"]["forProvider"]
    config = fp["nodeConfig"]
    assert (config["machineType"], config["diskSizeGb"]) == ("g2-standard-48", 500)
    assert config["guestAccelerator"] == [
        {
            "type": "nvidia-l4",
            "count": 4,
            "gpuDriverInstallationConfig": {"gpuDriverVersion": "INSTALLATION_DISABLED"},
        }
    ]
    assert fp["initialNodeCount"] == 2
    assert fp["autoscaling"] == {"minNodeCount": 1, "maxNodeCount": 6}
    assert fp["nodeLocations"] == ["us-west1-a", "us-west1-b"]


def test_the_gpu_pool_is_labelled_for_our_workloads_and_tainted_for_gpus() -> None:
    config = _composed()["nodepool-gpua"]["spec"]["forProvider"]["nodeConfig"]
    assert config["labels"] == {
        "modelplane.ai/pool": "gpua",
        "modelplane.ai/gpu": "nvidia-l4",
        # GKE's autoscaler models the DRA driver's devices on a pool at zero by this label.
        "cloud.google.com/gke-nvidia-gpu-dra-driver": "true",
        # GKE's device plugin stays off: the DRA driver alone hands the GPUs out.
        "gke-no-default-nvidia-gpu-device-plugin": "true",
        # The DRA driver's kubelet plugin runs here without waiting for Node Feature Discovery.
        "nvidia.com/gpu.present": "true",
    }
    assert config["taint"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]


def test_a_system_pool_hosts_the_stack_untainted() -> None:
    config = _composed()["nodepool-system"]["spec"]["forProvider"]["nodeConfig"]
    assert config["labels"] == {"modelplane.ai/pool": "system"}
    assert "taint" not in config and "guestAccelerator" not in config


def test_the_cluster_runs_on_its_own_subnetwork_with_ranges_for_pods_and_services() -> None:
    composed = _composed()
    fp = composed["cluster"]["spec"]["forProvider"]
    assert fp["subnetworkRef"] == {"name": composed["subnetwork"]["metadata"]["name"]}
    ranges = {
        r["rangeName"] for r in composed["subnetwork"]["spec"]["forProvider"]["secondaryIpRange"]
    }
    assert ranges == {
        fp["ipAllocationPolicy"]["clusterSecondaryRangeName"],
        fp["ipAllocationPolicy"]["servicesSecondaryRangeName"],
    }
    assert fp["removeDefaultNodePool"] is True


def test_the_provider_configs_add_the_service_accounts_key_to_the_kubeconfig() -> None:
    composed = _composed()
    key = composed["service-account-key"]["spec"]["writeConnectionSecretToRef"]["name"]
    kubeconfig = composed["cluster"]["spec"]["writeConnectionSecretToRef"]["name"]
    configs = [r for r in composed.values() if r["kind"] == "ClusterProviderConfig"]
    assert len(configs) == 2
    for config in configs:
        assert config["spec"]["credentials"]["secretRef"]["name"] == kubeconfig
        identity = config["spec"]["identity"]
        assert (identity["type"], identity["secretRef"]["name"], identity["secretRef"]["key"]) == (
            "GoogleApplicationCredentials",
            key,
            "private_key",
        )


def test_the_service_account_may_administer_the_cluster_once_its_email_is_known() -> None:
    composed = _composed()
    member = composed["iam-container-admin"]["spec"]["forProvider"]
    assert member["role"] == "roles/container.admin"
    assert member["member"].startswith("serviceAccount:")
    # Before GCP assigned the email, the member cannot be written, and is not.
    assert "iam-container-admin" not in run(managed("GKE")).resources


def test_filestore_backs_modelcache_on_the_clusters_network() -> None:
    composed = _composed()
    [storage] = [
        r["spec"]["forProvider"]["manifest"]
        for r in composed.values()
        if r["kind"] == "Object" and r["spec"]["forProvider"]["manifest"]["kind"] == "StorageClass"
    ]
    assert storage["provisioner"] == "filestore.csi.storage.gke.io"
    assert storage["parameters"]["network"] == composed["network"]["metadata"]["name"]
    fp = composed["cluster"]["spec"]["forProvider"]
    assert fp["addonsConfig"]["gcpFilestoreCsiDriverConfig"] == {"enabled": True}
    assert composed["filestore-api"]["spec"]["forProvider"]["service"] == "file.googleapis.com"


def _installer(composed: dict) -> dict:
    return composed["nvidia-driver-installer"]["spec"]["forProvider"]["manifest"]


def test_modelplane_installs_the_gpu_driver_on_every_gpu_node_gke_leaves_without_one() -> None:
    installer = _installer(_composed())
    assert (installer["kind"], installer["metadata"]["namespace"]) == ("DaemonSet", "kube-system")
    pod = installer["spec"]["template"]["spec"]
    [term] = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert {(e["key"], e["operator"]) for e in term["matchExpressions"]} == {
        ("cloud.google.com/gke-accelerator", "Exists"),
        ("cloud.google.com/gke-gpu-driver-version", "DoesNotExist"),
    }
    assert pod["tolerations"] == [{"operator": "Exists"}]


def test_the_driver_installer_is_there_before_the_classes_are_read() -> None:
    # Withdrawn on a reconcile that cannot rebuild the pools, it would be deleted from the cluster.
    ic = managed("GKE")
    ready = provisioned(ic)
    without_classes = run(ic, observed_as_ready(ready), **{CLASSES: None})
    assert "nvidia-driver-installer" in without_classes.resources


def test_the_dra_driver_finds_the_gpu_driver_where_the_installer_puts_it() -> None:
    composed = _composed()
    values = composed["nvidia-dra-driver"]["spec"]["forProvider"]["values"]
    assert values["nvidiaDriverRoot"] == "/home/kubernetes/bin/nvidia"


def test_a_driver_root_the_platform_team_names_stands() -> None:
    ic = managed("GKE", servingStack={"nvidiaDRADriver": {"driverRoot": "/run/nvidia/driver"}})
    values = provisioned(ic).resources["nvidia-dra-driver"]["spec"]["forProvider"]["values"]
    assert values["nvidiaDriverRoot"] == "/run/nvidia/driver"
