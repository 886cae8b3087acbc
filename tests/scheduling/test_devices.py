"""DRA device selectors evaluated against InferenceClass device kinds."""

from __future__ import annotations

import pytest

from modelplane.scheduling.devices import SelectorProblem, device_kinds, evaluate, matches
from tests.fleet.builders import gpu_device, inference_class_of

H100 = inference_class_of(
    "h100",
    [
        gpu_device(
            count=8,
            memory="81559Mi",
            attributes={
                "productName": {"string": "H100"},
                "driverVersion": {"version": "550.54.15"},
                "nvlink": {"bool": True},
                "cudaCores": {"int": 16896},
                "resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"},
                "broken": {"version": "9.0"},
            },
        ),
        {"name": "ib", "driver": "ib.example.com", "claim": "Synthetic", "count": 1},
    ],
)
GPU, IB = device_kinds(H100)


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ('device.driver == "gpu.nvidia.com"', True),
        ('device.driver == "amd.com"', False),
        ('device.attributes["gpu.nvidia.com"].productName == "H100"', True),
        ('device.attributes["gpu.nvidia.com"].nvlink', True),
        ('device.attributes["gpu.nvidia.com"].cudaCores > 10000', True),
        ('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0', False),
        ('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("79Gi")) >= 0', True),
        ('device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("40Gi"))', True),
        ('device.capacity["gpu.nvidia.com"].memory.isLessThan(quantity("40Gi"))', False),
        (
            'device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("550.0.0"))',
            True,
        ),
        (
            'device.attributes["gpu.nvidia.com"].driverVersion.compareTo(semver("560.0.0")) < 0',
            True,
        ),
        ('"resource.kubernetes.io" in device.attributes', True),
        ('device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:00"', True),
        ('"example.com" in device.attributes', False),
    ],
)
def test_a_selector_reads_the_dra_device_shape(selector: str, expected: bool) -> None:
    assert evaluate(selector, GPU.key) is expected


@pytest.mark.parametrize(
    "selector",
    [
        'device.attributes["gpu.nvidia.com"].missing == "x"',
        'device.attributes["example.com"].model == "x"',
        'device.capacity["gpu.nvidia.com"].memory.compareTo(semver("1.0.0")) == 0',
        'device.attributes["gpu.nvidia.com"].broken.major() == 9',
    ],
)
def test_a_runtime_error_on_a_device_is_no_match(selector: str) -> None:
    assert evaluate(selector, GPU.key) is False


def test_a_malformed_attribute_hides_only_itself() -> None:
    assert evaluate('device.attributes["gpu.nvidia.com"].productName == "H100"', GPU.key) is True


def test_a_selector_that_does_not_compile_is_a_problem() -> None:
    result = evaluate("device.driver ==", GPU.key)
    assert isinstance(result, SelectorProblem)
    assert "does not compile" in result.message


@pytest.mark.parametrize(
    ("selector", "field"),
    [
        ('device.driverr == "gpu.nvidia.com"', "driverr"),
        ('device.atributes["gpu.nvidia.com"].productName == "H100"', "atributes"),
        ('"gpu.nvidia.com" in device.capacities', "capacities"),
        ('device.driver == "x" || device . attribute["d"].a == 1', "attribute"),
    ],
)
def test_a_field_the_dra_device_lacks_does_not_compile(selector: str, field: str) -> None:
    # Kubernetes type-checks device against its declared fields: a typo is refused there, so
    # here it is a problem reported by name, not a silent no-match on every device.
    result = evaluate(selector, GPU.key)
    assert isinstance(result, SelectorProblem)
    assert f"undefined field '{field}'" in result.message


@pytest.mark.parametrize(
    "selector",
    [
        'device.driver != "device.driverr"',
        "device.driver != 'x device.foo'",
        'device.attributes["gpu.nvidia.com"].device == "x" || true',
        'has(device.allowMultipleAllocations) || device.driver != ""',
    ],
)
def test_declared_device_fields_and_text_in_strings_compile(selector: str) -> None:
    assert evaluate(selector, GPU.key) is True


def test_a_selector_that_is_not_a_bool_is_a_problem() -> None:
    result = evaluate('device.attributes["gpu.nvidia.com"].productName', GPU.key)
    assert isinstance(result, SelectorProblem)
    assert "not bool" in result.message


def test_selectors_of_a_request_are_anded() -> None:
    both = ('device.driver == "gpu.nvidia.com"', 'device.attributes["gpu.nvidia.com"].nvlink')
    assert matches(both, GPU) is True
    assert matches((*both, "false"), GPU) is False


def test_device_kinds_carry_claim_class_and_count() -> None:
    assert (GPU.claimable, GPU.device_class_name, GPU.count) == (True, "gpu.nvidia.com", 8)
    assert (IB.claimable, IB.count) == (False, 1)


def test_equal_device_content_shares_one_evaluation_key() -> None:
    again = device_kinds({"spec": {"devices": [dict(H100["spec"]["devices"][0], name="other")]}})
    assert again[0].key == GPU.key
