"""DRA selectors evaluated on devices described as InferenceClass / ResourceSlice devices."""

from __future__ import annotations

import pytest

from modelplane.kube.cel.runtime import CelEvaluationError
from modelplane.kube.dra import device_value, selector_environment

H100 = {
    "driver": "gpu.nvidia.com",
    "attributes": {
        "productName": {"string": "NVIDIA H100 80GB HBM3"},
        "cudaComputeCapability": {"version": "9.0.0"},
        "gpu.nvidia.com/mig": {"bool": False},
        "dra.net/rdma": {"bool": True},
        "index": {"int": 3},
    },
    "capacity": {"memory": {"value": "80Gi"}},
}


def matches(selector: str) -> bool:
    device = device_value(**H100, expression=selector)
    return selector_environment().compile(selector).evaluate({"device": device}) is True


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ('device.driver == "gpu.nvidia.com"', True),
        ('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("20Gi")) >= 0', True),
        ('device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("80Gi"))', False),
        (
            'device.attributes["gpu.nvidia.com"].cudaComputeCapability.isGreaterThan(semver("8.9.0"))',
            True,
        ),
        (
            'device.attributes["gpu.nvidia.com"].cudaComputeCapability.isLessThan(semver("9.0.0"))',
            False,
        ),
        ('device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100")', True),
        ('device.attributes["gpu.nvidia.com"].mig', False),
        ('device.attributes["dra.net"].rdma', True),
        ('device.attributes["gpu.nvidia.com"].index == 3', True),
        ('has(device.attributes["amd.com"].family)', False),
    ],
)
def test_selectors(selector: str, expected: bool) -> None:
    assert matches(selector) is expected


def test_a_missing_attribute_is_an_evaluation_error() -> None:
    with pytest.raises(CelEvaluationError, match="no such key: family"):
        matches('device.attributes["gpu.nvidia.com"].family == "hopper"')


def test_an_untyped_attribute_is_refused() -> None:
    with pytest.raises(ValueError, match="sets none of"):
        device_value("d", {"x": {"float": 1.0}})
