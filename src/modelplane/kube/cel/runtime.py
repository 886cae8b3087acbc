"""CEL in the Kubernetes dialect, on cel-expr-python (Google's cel-cpp).

The public API, used by the admission engine (CRD ``x-kubernetes-validations``) and by the
scheduler (DRA device selectors):

``Environment(variables: Mapping[str, CelType] | None = None)``
    A compile environment: the strings and optional extensions, ``cel.bind``, and the Kubernetes
    ``quantity`` and ``semver`` libraries as typed functions. Variables default to ``DYN``; use
    the type constants of this module (``DYN``, ``STRING``, ``INT``, ``BOOL``, ``DOUBLE``,
    ``QUANTITY``, ``SEMVER``, ``map_of(k, v)``, ``list_of(t)``).
``env.compile(expression) -> Program``
    Parses and type-checks once; a bad expression raises ``CelCompileError`` whose message is
    cel-cpp's, with the caret snippet (``<input>:1:10: Syntax error: ...``).
``env.activation(values) -> Activation``
    Converts the inputs once, for evaluating several programs on the same values.
``program.evaluate(values_or_activation) -> object``
    Runs the program on a dict of variables (or a prebuilt activation) and returns a plain Python
    value (bool, int, float, str, list, dict, ``Quantity``, ``Semver``). A runtime error (no such
    key, no matching overload, a bad quantity) raises ``CelEvaluationError``.
``quantity_value(text)`` / ``semver_value(text)``
    CEL values for DRA capacities (quantities) and ``version`` attributes, to place inside the
    dicts handed to ``evaluate`` (``{"device": {"capacity": {"gpu.nvidia.com": {"memory":
    quantity_value("80Gi")}}}}``).

For DRA selectors, ``modelplane.kube.dra`` builds the ``device`` variable from an InferenceClass
or ResourceSlice device (``device_value``) and shares one ``selector_environment()``.

Kubernetes libraries provided: ``quantity(s)``, ``isQuantity(s)``, ``sign(q)``, and on a quantity
``isInteger()``, ``asInteger()``, ``asApproximateFloat()``, ``add(q|int)``, ``sub(q|int)``,
``compareTo(q)``, ``isLessThan(q)``, ``isGreaterThan(q)``; ``semver(s[, normalize])``,
``isSemver(s[, normalize])``, and on a version ``major()``, ``minor()``, ``patch()``,
``compareTo``, ``isLessThan``, ``isGreaterThan``; the lists functions ``isSorted()`` and
``sum()``; regex ``find`` and ``findAll``. Quantities and versions are runtime-built proto
messages holding a canonical form, so ``==`` compares values (``quantity("1Gi") ==
quantity("1024Mi")``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from functools import cache
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import Message

from modelplane.kube.quantity import Quantity, QuantityError, is_quantity, parse_quantity
from modelplane.kube.semver import Semver, SemverError, is_semver, parse_semver

__all__ = [
    "BOOL",
    "DOUBLE",
    "DYN",
    "INT",
    "QUANTITY",
    "SEMVER",
    "STRING",
    "Activation",
    "CelCompileError",
    "CelError",
    "CelEvaluationError",
    "CelType",
    "Environment",
    "Program",
    "list_of",
    "map_of",
    "quantity_value",
    "semver_value",
    "to_python",
]

from cel_expr_python.cel import Activation
from cel_expr_python.cel import Type as CelType

DYN = cel.Type.DYN
STRING = cel.Type.STRING
INT = cel.Type.INT
BOOL = cel.Type.BOOL
DOUBLE = cel.Type.DOUBLE
QUANTITY = cel.Type("k8scel.Quantity")
SEMVER = cel.Type("k8scel.Semver")


def list_of(element: CelType) -> CelType:
    return cel.Type.List(element)


def map_of(key: CelType, value: CelType) -> CelType:
    return cel.Type.Map(key, value)


class CelError(Exception):
    """Base of the CEL errors."""


class CelCompileError(CelError):
    """An expression that does not parse or type-check."""


class CelEvaluationError(CelError):
    """An expression that failed at runtime (no such key, no matching overload, ...)."""


_F = descriptor_pb2.FieldDescriptorProto


# Quantities and versions cross into cel-cpp as proto messages built at runtime (cel-expr-python
# cannot carry opaque Python objects). Each holds one canonical string, so message equality is
# value equality.
def k8scel_file() -> descriptor_pb2.FileDescriptorProto:
    """The runtime proto file declaring ``k8scel.Quantity`` and ``k8scel.Semver``."""
    proto = descriptor_pb2.FileDescriptorProto(
        name="modelplane/k8scel.proto", package="k8scel", syntax="proto3"
    )
    for name in ("Quantity", "Semver"):
        message = proto.message_type.add(name=name)
        message.field.add(name="value", number=1, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
    return proto


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(k8scel_file())
_QUANTITY_MESSAGE = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("k8scel.Quantity"))
_SEMVER_MESSAGE = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("k8scel.Semver"))


def quantity_value(value: str | Quantity) -> Message:
    """The CEL value of a quantity (raises ``QuantityError`` for a malformed string)."""
    q = value if isinstance(value, Quantity) else parse_quantity(value)
    return _QUANTITY_MESSAGE(value=f"{q.value.numerator}/{q.value.denominator}")


def semver_value(value: str | Semver) -> Message:
    """The CEL value of a semantic version (raises ``SemverError`` for a malformed string)."""
    v = value if isinstance(value, Semver) else parse_semver(value)
    # Build metadata does not take part in equality or precedence.
    return _SEMVER_MESSAGE(value=str(Semver(v.major, v.minor, v.patch, v.pre)))


def _quantity(message: Message) -> Quantity:
    numerator, denominator = message.value.split("/")  # type: ignore[attr-defined]
    return Quantity(Fraction(int(numerator), int(denominator)))


def _semver(message: Message) -> Semver:
    return parse_semver(message.value)  # type: ignore[attr-defined]


def to_python(value: Any) -> Any:
    """A plain Python value from a CEL result: messages become ``Quantity`` / ``Semver``."""
    if isinstance(value, Message):
        name = value.DESCRIPTOR.name
        if name == "Quantity":
            return _quantity(value)
        if name == "Semver":
            return _semver(value)
        return value
    if isinstance(value, list):
        return [to_python(v) for v in value]
    if isinstance(value, dict):
        return {k: to_python(v) for k, v in value.items()}
    return value


# --- the Kubernetes libraries --------------------------------------------------------------


def _cel_quantity(text: str) -> Message:
    try:
        return quantity_value(text)
    except QuantityError as e:
        raise ValueError(str(e)) from None


def _cel_semver(text: str, normalize: bool = False) -> Message:
    try:
        return semver_value(parse_semver(text, normalize))
    except SemverError as e:
        raise ValueError(str(e)) from None


def _compare(a: Message, b: Message) -> int:
    # One implementation serves both the Quantity and the Semver overloads: cel-cpp keys
    # runtime overloads by argument kinds, and (message, message) may be registered only once.
    kind_a, kind_b = a.DESCRIPTOR.name, b.DESCRIPTOR.name
    if kind_a != kind_b:
        raise TypeError(f"no such overload: compareTo({kind_a}, {kind_b})")
    if kind_a == "Quantity":
        return _quantity(a).compare(_quantity(b))
    return _semver(a).compare(_semver(b))


def _as_integer(q: Message) -> int:
    try:
        return _quantity(q).as_integer()
    except QuantityError as e:
        raise ValueError(str(e)) from None


def _add(q: Message, other: Message | int) -> Message:
    amount = _quantity(other) if isinstance(other, Message) else other
    return quantity_value(_quantity(q).add(amount))


def _sub(q: Message, other: Message | int) -> Message:
    amount = _quantity(other) if isinstance(other, Message) else other
    return quantity_value(_quantity(q).sub(amount))


def _is_sorted(items: list[Any]) -> bool:
    return all(a <= b for a, b in itertools.pairwise(items))


def _sum(items: list[Any]) -> Any:
    total: Any = 0
    for item in items:
        total = total + item
    return total


def _find(text: str, pattern: str) -> str:
    match = re.search(pattern, text)
    return match.group(0) if match else ""


def _find_all(text: str, pattern: str) -> list[str]:
    return [m.group(0) for m in re.finditer(pattern, text)]


def _overload(
    name: str,
    result: CelType,
    params: list[CelType],
    impl: Callable[..., Any] | None,
    member: bool = False,
) -> Any:
    if impl is None:
        return cel.Overload(name, result, params, is_member=member)
    return cel.Overload(name, result, params, is_member=member, impl=impl)


_Overload = tuple[str, CelType, list[CelType], Callable[..., Any] | None]


@cache
def _functions() -> list[Any]:
    """The Kubernetes libraries' functions (quantity, semver, list and regex extras), declared
    once per process."""
    q, s = QUANTITY, SEMVER
    member: list[tuple[str, list[_Overload]]] = [
        ("isInteger", [("quantity_is_integer", BOOL, [q], lambda a: _quantity(a).is_integer())]),
        ("asInteger", [("quantity_as_integer", INT, [q], _as_integer)]),
        (
            "asApproximateFloat",
            [("quantity_as_float", DOUBLE, [q], lambda a: _quantity(a).as_approximate_float())],
        ),
        ("add", [("quantity_add", q, [q, q], _add), ("quantity_add_int", q, [q, INT], _add)]),
        ("sub", [("quantity_sub", q, [q, q], _sub), ("quantity_sub_int", q, [q, INT], _sub)]),
        (
            "compareTo",
            [("quantity_compare", INT, [q, q], _compare), ("semver_compare", INT, [s, s], None)],
        ),
        (
            "isLessThan",
            [
                ("quantity_less", BOOL, [q, q], lambda a, b: _compare(a, b) < 0),
                ("semver_less", BOOL, [s, s], None),
            ],
        ),
        (
            "isGreaterThan",
            [
                ("quantity_greater", BOOL, [q, q], lambda a, b: _compare(a, b) > 0),
                ("semver_greater", BOOL, [s, s], None),
            ],
        ),
        ("major", [("semver_major", INT, [s], lambda a: _semver(a).major)]),
        ("minor", [("semver_minor", INT, [s], lambda a: _semver(a).minor)]),
        ("patch", [("semver_patch", INT, [s], lambda a: _semver(a).patch)]),
        ("isSorted", [("list_is_sorted", BOOL, [list_of(DYN)], _is_sorted)]),
        ("sum", [("list_sum", DYN, [list_of(DYN)], _sum)]),
        ("find", [("string_find", STRING, [STRING, STRING], _find)]),
        ("findAll", [("string_find_all", list_of(STRING), [STRING, STRING], _find_all)]),
    ]
    glob: list[tuple[str, list[_Overload]]] = [
        ("quantity", [("quantity_parse", q, [STRING], _cel_quantity)]),
        ("isQuantity", [("quantity_is", BOOL, [STRING], is_quantity)]),
        # Global, not a member, as Kubernetes declares it (pkg/cel/library/quantity.go): cel-go
        # then refuses ``q.sign()``, whatever the library's own doc comment shows.
        ("sign", [("quantity_sign", INT, [q], lambda a: _quantity(a).sign())]),
        (
            "semver",
            [
                ("semver_parse", s, [STRING], _cel_semver),
                ("semver_parse_normalize", s, [STRING, BOOL], _cel_semver),
            ],
        ),
        (
            "isSemver",
            [
                ("semver_is", BOOL, [STRING], is_semver),
                ("semver_is_normalize", BOOL, [STRING, BOOL], is_semver),
            ],
        ),
    ]
    decls = [
        cel.FunctionDecl(name, [_overload(*o, member=True) for o in overloads])
        for name, overloads in member
    ]
    decls += [
        cel.FunctionDecl(name, [_overload(*o) for o in overloads]) for name, overloads in glob
    ]
    return decls


def _native(value: Any) -> Any:
    """Turn ``Quantity`` / ``Semver`` objects inside inputs into their CEL messages."""
    if isinstance(value, dict):
        return {k: _native(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_native(v) for v in value]
    if isinstance(value, Quantity):
        return quantity_value(value)
    if isinstance(value, Semver):
        return semver_value(value)
    return value


class Program:
    """A compiled expression; evaluate it as often as needed."""

    __slots__ = ("_env", "_expression")

    def __init__(self, env: Environment, expression: Any) -> None:
        self._env = env
        self._expression = expression

    def evaluate(self, values: Mapping[str, Any] | Activation) -> Any:
        activation = values if isinstance(values, cel.Activation) else self._env.activation(values)
        return to_python(self.evaluate_raw(activation))

    def evaluate_raw(self, activation: Activation) -> Any:
        """Like ``evaluate`` but returns cel-expr-python's plain value (no message conversion)."""
        result = self._expression.eval(activation)
        if result.type() == cel.Type.ERROR:
            raise CelEvaluationError(_runtime_message(str(result.value())))
        return result.plain_value()


def extensions() -> list[Any]:
    """The CEL extensions the API server enables beyond the standard library, made afresh for
    each environment: compiling here and in ``schematypes``, parsing in ``syntax`` alike."""
    return [ext_strings.ExtStrings(), ext_optional.ExtOptional(), ext_bindings.ExtBindings()]


class Environment:
    """A CEL environment in the Kubernetes dialect with the given variables."""

    def __init__(self, variables: Mapping[str, CelType] | None = None) -> None:
        self.variables = dict(variables or {})
        self._env = cel.NewEnv(
            _POOL, variables=self.variables, extensions=extensions(), functions=_functions()
        )

    def compile(self, expression: str) -> Program:
        try:
            compiled = self._env.compile(expression)
        except RuntimeError as e:
            raise CelCompileError(_clean(str(e))) from None
        return Program(self, compiled)

    def activation(self, values: Mapping[str, Any]) -> Activation:
        return self._env.Activation(_native(dict(values)))

    def raw_activation(self, values: Mapping[str, Any]) -> Activation:
        """An activation from values already in CEL form (no Quantity/Semver conversion)."""
        return self._env.Activation(values)


def _clean(message: str) -> str:
    # cel-cpp wraps the message in a status: "INVALID_ARGUMENT: ERROR: ... [INVALID_ARGUMENT]"
    message = message.removeprefix("INVALID_ARGUMENT: ").removesuffix(" [INVALID_ARGUMENT]")
    return message.removeprefix("ERROR: ").strip()


_STATUS = re.compile(r"^[A-Z_]+: ")
_NO_KEY = re.compile(r'^Key not found in map ?: "?(.*?)"?$')


def _runtime_message(message: str) -> str:
    # Speak cel-go's words where they differ, since Kubernetes users read cel-go's messages.
    message = _STATUS.sub("", message, count=1)
    no_key = _NO_KEY.match(message)
    if no_key:
        return f"no such key: {no_key.group(1)}"
    return message
