"""GPUs on a GKE cluster Modelplane provisions, as GKE, its driver installer and the NVIDIA DRA
driver v0.4.1 find them.

- GKE's DRA guide (cloud.google.com/kubernetes-engine/docs/how-to/set-up-dra): DRA needs GPU
  driver installation disabled (``gpu-driver-version=disabled``) and GKE's device plugin off (the
  node label ``gke-no-default-nvidia-gpu-device-plugin=true``); the driver is then installed by
  hand. terraform-provider-google v6.47.0 (what provider-upjet-gcp v2.6.0 builds on),
  google/services/container/node_config.go, takes ``gpu_driver_version`` from
  GPU_DRIVER_VERSION_UNSPECIFIED, INSTALLATION_DISABLED, DEFAULT and LATEST.
- GKE's COS driver installer (GoogleCloudPlatform/container-engine-accelerators at 992db81,
  nvidia-driver-installer/cos/daemonset-preloaded.yaml): the image ``cos-nvidia-installer:fixed``
  is preloaded on GPU nodes, installs into ``NVIDIA_INSTALL_DIR_HOST`` (``/home/kubernetes/bin/
  nvidia``), whose ``lib64`` holds the libraries (the manifest's own NVML user sets
  ``LD_LIBRARY_PATH`` there), and runs on nodes labelled ``cloud.google.com/gke-accelerator``
  where GKE installed no driver (no ``cloud.google.com/gke-gpu-driver-version``).
- dra-driver-nvidia-gpu v0.4.1, cmd/gpu-kubelet-plugin/root.go: the kubelet plugin looks for
  ``libnvidia-ml.so.1`` and ``nvidia-smi`` under its driver root only (the chart's
  ``nvidiaDriverRoot``, default ``/``), in the root itself and the directories listed below;
  docs/install.md: on GKE the root is ``/home/kubernetes/bin/nvidia``.
"""

from __future__ import annotations

import posixpath
from typing import Any

from tests.compose.inferencecluster.managed import managed, provisioned

Obj = dict[str, Any]

LIBRARY_DIRS = (
    "/",
    "/usr/lib64",
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib64",
    "/lib/x86_64-linux-gnu",
    "/lib/aarch64-linux-gnu",
)
BINARY_DIRS = ("/", "/opt/bin", "/usr/bin", "/usr/sbin", "/bin", "/sbin")
GKE_DRIVER_VERSIONS = {
    "GPU_DRIVER_VERSION_UNSPECIFIED",
    "INSTALLATION_DISABLED",
    "DEFAULT",
    "LATEST",
}
PRELOADED_INSTALLER = "cos-nvidia-installer:fixed"


def _composed() -> dict[str, Obj]:
    return provisioned(managed("GKE")).resources


def _gpu_pool_nodes(composed: dict[str, Obj]) -> dict[str, str]:
    """The labels a node of the GPU pool carries: the pool's, and GKE's accelerator label."""
    config = composed["nodepool-gpua"]["spec"]["forProvider"]["nodeConfig"]
    [accelerator] = config["guestAccelerator"]
    return {**config["labels"], "cloud.google.com/gke-accelerator": accelerator["type"]}


def _selects(term: Obj, labels: dict[str, str]) -> bool:
    ops = {
        "Exists": lambda e: e["key"] in labels,
        "DoesNotExist": lambda e: e["key"] not in labels,
        "In": lambda e: labels.get(e["key"]) in e["values"],
    }
    return all(ops[e["operator"]](e) for e in term["matchExpressions"])


def _terms(pod: Obj) -> list[Obj]:
    required = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    return list(required["nodeSelectorTerms"])


def _installer(composed: dict[str, Obj]) -> Obj:
    return composed["nvidia-driver-installer"]["spec"]["forProvider"]["manifest"]


def _driver_root(composed: dict[str, Obj]) -> str:
    return str(composed["nvidia-dra-driver"]["spec"]["forProvider"]["values"]["nvidiaDriverRoot"])


def test_a_gpu_pool_leaves_its_gpus_to_the_dra_driver() -> None:
    config = _composed()["nodepool-gpua"]["spec"]["forProvider"]["nodeConfig"]
    [accelerator] = config["guestAccelerator"]
    version = accelerator["gpuDriverInstallationConfig"]["gpuDriverVersion"]
    assert version in GKE_DRIVER_VERSIONS
    assert version == "INSTALLATION_DISABLED"
    assert config["labels"]["gke-no-default-nvidia-gpu-device-plugin"] == "true"


def test_the_installer_is_the_image_gke_preloads() -> None:
    [container] = _installer(_composed())["spec"]["template"]["spec"]["initContainers"]
    assert (container["image"], container["imagePullPolicy"]) == (PRELOADED_INSTALLER, "Never")


def test_the_installer_runs_on_every_node_of_a_gpu_pool() -> None:
    composed = _composed()
    pod = _installer(composed)["spec"]["template"]["spec"]
    assert any(_selects(term, _gpu_pool_nodes(composed)) for term in _terms(pod))
    assert {"operator": "Exists"} in pod["tolerations"]  # the pool's GPU taint too


def test_the_kubelet_plugin_finds_nvml_where_the_installer_puts_the_libraries() -> None:
    composed = _composed()
    [container] = _installer(composed)["spec"]["template"]["spec"]["initContainers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    root = _driver_root(composed)
    assert env["NVIDIA_INSTALL_DIR_HOST"] == root
    assert posixpath.join(root, "lib64") in {
        posixpath.join(root, d.lstrip("/")) for d in LIBRARY_DIRS
    }


def test_the_kubelet_plugin_finds_nvidia_smi_where_the_installer_puts_the_binaries() -> None:
    root = _driver_root(_composed())
    assert posixpath.join(root, "bin") in {posixpath.join(root, d.lstrip("/")) for d in BINARY_DIRS}


def test_the_kubelet_plugin_runs_on_every_node_of_a_gpu_pool_without_waiting_for_nfd() -> None:
    composed = _composed()
    plugin = composed["nvidia-dra-driver"]["spec"]["forProvider"]["values"]["kubeletPlugin"]
    labels = _gpu_pool_nodes(composed)
    assert any(_selects(term, labels) for term in _terms(plugin))
