"""The GPUs the examples' classes declare, as the NVIDIA DRA driver v0.4.1 publishes them.

cmd/gpu-kubelet-plugin/nvlib.go at tag v0.4.1 (github.com/kubernetes-sigs/dra-driver-nvidia-gpu)
takes ``productName`` from NVML's ``device.GetName()`` verbatim (``NVIDIA H100 80GB HBM3``, with
spaces) and the ``memory`` capacity from ``device.GetMemoryInfo().Total``, the usable total NVML
reports, not the marketing size: 81559 MiB for an H100 80GB, which is less than 80Gi.
"""

from __future__ import annotations

import pytest

from modelplane.kube.quantity import parse_quantity
from tests.test_example_devices import documents, shipped

# What NVML reports for the GPUs the examples name (name, total memory).
NVML = {
    "NVIDIA L4": "23034Mi",
    "NVIDIA L40S": "46068Mi",
    "NVIDIA H100 80GB HBM3": "81559Mi",
    "NVIDIA H200": "143771Mi",
    "NVIDIA GB200": "189471Mi",
}


def gpus() -> list[tuple[str, dict]]:
    return [
        (f"{example.name}: {doc['metadata']['name']}/{device['name']}", device)
        for example in shipped()
        for doc in documents(example)
        if doc["kind"] == "InferenceClass"
        for device in doc["spec"]["devices"]
        if device.get("driver") == "gpu.nvidia.com"
    ]


@pytest.mark.parametrize(("where", "device"), gpus(), ids=[w for w, _ in gpus()])
def test_a_gpu_class_states_nvmls_product_name_and_memory(where: str, device: dict) -> None:
    product = (device.get("attributes") or {}).get("productName", {}).get("string")
    memory = device["capacity"]["memory"]["value"]
    if product is not None:
        assert product in NVML, f"{where}: {product!r} is not a name NVML reports"
        assert parse_quantity(memory) == parse_quantity(NVML[product]), where
    else:
        assert memory in NVML.values(), where


def test_the_examples_declare_gpus_to_check() -> None:
    # An empty parametrization would pass silently.
    assert len(gpus()) >= 8
