"""Selector CEL behaviours (quantity, semver, the DRA device shape) that the public
implementation's CEL, quantity and semver tests assert, checked on ours through the selector
compiler the scheduler uses (docs/design/parity.md lists them)."""

from __future__ import annotations

import pytest

from modelplane.scheduling.devices import SelectorProblem, compile_selector, evaluate
from tests.scheduling.test_devices import GPU


def holds(expression: str) -> bool | SelectorProblem:
    return evaluate(expression, GPU.key)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('isSemver("1.0", true)', True),
        ('isSemver("1", true)', True),
        ('isSemver("v1.0.0", true)', True),
        ('isSemver("01.01.01", true)', True),
        ('isSemver("", true)', False),
        ('isSemver(" 1.0.0", true)', False),
        ('isSemver("1.0.0 ", true)', False),
        ('isSemver("1. 0.0", true)', False),
        ('isSemver("1.0")', False),
        ('semver("v01.01", true) == semver("1.1.0")', True),
        ('semver("v2.0", true).major() == 2', True),
        ('semver("1.4", true).patch() == 0', True),
    ],
)
def test_semver_normalizes_only_when_asked_and_never_trims_whitespace(
    expression: str, expected: bool
) -> None:
    assert holds(expression) is expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2', True),
        ('semver("1.2.3").patch() == 3', True),
        ('semver("1.0.0").isLessThan(semver("1.1.0"))', True),
        ('semver("2.0.0").isGreaterThan(semver("10.0.0"))', False),
        ('semver("2.0.0").compareTo(semver("1.9.9")) == 1', True),
    ],
)
def test_semver_components_and_comparisons(expression: str, expected: bool) -> None:
    assert holds(expression) is expected


def test_a_version_that_does_not_parse_is_no_match_not_an_error() -> None:
    assert holds('semver("not-a-version").major() == 1') is False


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('isQuantity("1.5Gi")', True),
        ('isQuantity("2e3")', True),
        ('isQuantity("5n") && isQuantity("5u")', True),
        ('isQuantity("200K")', False),
        ('isQuantity(" 1Gi")', False),
        ('isQuantity("1Gi ")', False),
        ('isQuantity("1,5G")', False),
        ('quantity("200M").compareTo(quantity("0.2G")) == 0', True),
        ('quantity("50M").compareTo(quantity("50Mi")) == -1', True),
        ('quantity("150Mi").isGreaterThan(quantity("100Mi"))', True),
        ('quantity("100M").isLessThan(quantity("50M"))', False),
        ('quantity("1k").add(24) == quantity("1024")', True),
        ('quantity("2Gi").sub(quantity("1Gi")) == quantity("1Gi")', True),
        ('quantity("50k").asInteger() == 50000', True),
        ('quantity("1.5").isInteger()', False),
        ('quantity("1.5").asApproximateFloat() == 1.5', True),
    ],
)
def test_quantity_parses_compares_and_converts_as_kubernetes_does(
    expression: str, expected: bool
) -> None:
    assert holds(expression) is expected


@pytest.mark.parametrize(
    "expression",
    [
        'quantity("9999999999999999999999999999999999999G").asInteger() > 0',
        'quantity("1Zi").isGreaterThan(quantity("1"))',
        'quantity("Mi").isGreaterThan(quantity("1"))',
    ],
)
def test_a_quantity_runtime_error_is_no_match(expression: str) -> None:
    assert holds(expression) is False


def test_large_decimal_quantities_parse_and_compare() -> None:
    assert holds('quantity("100000000000000000000000").isGreaterThan(quantity("10Ei"))') is True


def test_has_on_an_indexed_domain_does_not_compile_as_kubernetes_refuses_it() -> None:
    assert isinstance(compile_selector('has(device.attributes["gpu.nvidia.com"])'), SelectorProblem)


def test_sign_is_called_as_a_global_function() -> None:
    assert holds('sign(quantity("-2")) == -1 && sign(quantity("0")) == 0') is True
    assert isinstance(compile_selector('quantity("-2").sign() == -1'), SelectorProblem)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('quantity("1.0000000001") == quantity("1.000000001")', True),
        ('quantity("0.0000000001") == quantity("1n")', True),
        ('quantity("1.000000001").isGreaterThan(quantity("1"))', True),
    ],
)
def test_values_equal_at_nano_resolution_compare_equal(expression: str, expected: bool) -> None:
    assert holds(expression) is expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('quantity("8Ei") == quantity("10Ei")', True),
        ('quantity("100Ei").compareTo(quantity("8Ei")) == 0', True),
        ('quantity("7Ei").isLessThan(quantity("8Ei"))', True),
        ('quantity("100E").isGreaterThan(quantity("10Ei"))', True),
    ],
)
def test_binary_values_past_int64_saturate_and_decimal_ones_do_not(
    expression: str, expected: bool
) -> None:
    assert holds(expression) is expected
