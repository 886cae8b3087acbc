from typing import Any

import pytest

from modelplane.kube.cel.runtime import (
    DYN,
    CelCompileError,
    CelEvaluationError,
    Environment,
    quantity_value,
    semver_value,
)
from modelplane.kube.quantity import parse_quantity

DEVICE = {
    "driver": "gpu.nvidia.com",
    "attributes": {
        "gpu.nvidia.com": {"productName": "H100", "cudaComputeCapability": semver_value("9.0.0")}
    },
    "capacity": {"gpu.nvidia.com": {"memory": quantity_value("80Gi")}},
}


@pytest.fixture(scope="module")
def env() -> Environment:
    return Environment({"self": DYN, "device": DYN})


def run(env: Environment, expr: str, **values: Any) -> Any:
    return env.compile(expr).evaluate({"self": {}, "device": DEVICE, **values})


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("20Gi")) >= 0', True),
        ('device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("80Gi"))', False),
        ('device.capacity["gpu.nvidia.com"].memory.isLessThan(quantity("81Gi"))', True),
        (
            'device.attributes["gpu.nvidia.com"].cudaComputeCapability.isGreaterThan(semver("8.9.0"))',
            True,
        ),
        ('device.attributes["gpu.nvidia.com"].cudaComputeCapability.compareTo(semver("9.0.0"))', 0),
        ('device.attributes["gpu.nvidia.com"].productName == "H100"', True),
        ('device.driver == "gpu.nvidia.com"', True),
    ],
)
def test_dra_device_selectors(env: Environment, expr: str, expected: object) -> None:
    assert run(env, expr) == expected


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ('quantity("1Gi") == quantity("1024Mi")', True),
        ('quantity("1") == quantity("1000m")', True),
        ('isQuantity("1Gi")', True),
        ('isQuantity("1GB")', False),
        ('sign(quantity("-5"))', -1),
        ('quantity("2k").isInteger()', True),
        ('quantity("2k").asInteger()', 2000),
        ('quantity("500m").asApproximateFloat()', 0.5),
        ('quantity("1").add(quantity("500m")).compareTo(quantity("1.5"))', 0),
        ('sign(quantity("1").sub(1))', 0),
        ('quantity("1Gi").add(1)', parse_quantity("1073741825")),
        ('semver("1.2.3").major()', 1),
        ('semver("1.2.3").minor()', 2),
        ('semver("1.2.3").patch()', 3),
        ('semver("v1.2", true) == semver("1.2.0")', True),
        ('semver("1.0.0+a") == semver("1.0.0+b")', True),
        ('isSemver("1.2")', False),
        ('isSemver("1.2", true)', True),
        ('semver("1.0.0-rc.1").isLessThan(semver("1.0.0"))', True),
    ],
)
def test_kubernetes_quantity_and_semver_libraries(
    env: Environment, expr: str, expected: object
) -> None:
    assert run(env, expr) == expected


@pytest.mark.parametrize(
    ("expr", "self", "expected"),
    [
        ("self.?serving.?port.orValue(8000)", {}, 8000),
        ("self.?serving.?port.orValue(8000)", {"serving": {"port": 9000}}, 9000),
        ("'example.com/key'.split('/')[0]", {}, "example.com"),
        ("type(self.port) == string", {"port": "http"}, True),
        ("type(self.port) == string", {"port": 80}, False),
        ("self.l.exists_one(x, x == 1)", {"l": [1, 2, 1]}, False),
        ("self.l.filter(x, x > 1).map(x, x * 2)", {"l": [1, 2, 3]}, [4, 6]),
        ("'ab-1'.matches('^[a-z]+-[0-9]$')", {}, True),
        ("'k' in self", {"k": 1}, True),
        ("has(self.a) && size(self.a) == 2", {"a": "xy"}, True),
        ("[3, 1].isSorted()", {}, False),
        ("cel.bind(x, 2, x * x)", {}, 4),
    ],
)
def test_kubernetes_dialect(env: Environment, expr: str, self: object, expected: object) -> None:
    assert run(env, expr, self=self) == expected


def test_a_syntax_error_is_a_compile_error_with_its_position(env: Environment) -> None:
    with pytest.raises(CelCompileError, match=r"<input>:1:10: Syntax error"):
        env.compile("self.foo(")


def test_a_type_error_is_a_compile_error(env: Environment) -> None:
    with pytest.raises(CelCompileError, match="found no matching overload for 'quantity'"):
        env.compile("quantity(1)")
    with pytest.raises(CelCompileError, match="no matching overload for 'compareTo'"):
        env.compile('quantity("1").compareTo(semver("1.0.0"))')


# kubernetes/apiserver pkg/cel/library/quantity.go at v0.34.0 declares ``sign`` with
# cel.Overload, a global function; cel-go v0.26.0 (its go.mod), checker/checker.go, skips an
# overload whose call style differs from the call's, so the member form does not compile there.
@pytest.mark.parametrize("expr", ['quantity("1").sign()', "self.q.sign() == 1"])
def test_sign_is_a_global_function_so_the_member_form_does_not_compile(
    env: Environment, expr: str
) -> None:
    with pytest.raises(CelCompileError, match="'sign'"):
        env.compile(expr)


def test_an_undeclared_variable_is_a_compile_error(env: Environment) -> None:
    with pytest.raises(CelCompileError, match="undeclared reference to 'nope'"):
        env.compile("nope == 1")


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("self.missing", "no such key: missing"),
        ('quantity("bogus")', "quantities must match the regular expression"),
        ('quantity("1.5").asInteger()', "cannot convert value to integer"),
        ('semver("1.2")', "No Major.Minor.Patch"),
    ],
)
def test_runtime_errors_raise(env: Environment, expr: str, message: str) -> None:
    with pytest.raises(CelEvaluationError, match=message):
        run(env, expr)


def test_an_activation_is_reusable_across_programs(env: Environment) -> None:
    activation = env.activation({"self": {"a": 1}, "device": DEVICE})
    assert env.compile("self.a == 1").evaluate(activation) is True
    assert env.compile("device.driver").evaluate(activation) == "gpu.nvidia.com"


def test_quantities_in_inputs_are_converted(env: Environment) -> None:
    assert run(env, 'self.q.isGreaterThan(quantity("1"))', self={"q": parse_quantity("2")})
