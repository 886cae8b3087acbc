"""The parsed (unchecked) syntax tree of a CEL expression, macros expanded.

``parse(expression)`` returns a tree of the frozen dataclasses below. Parsing is cel-cpp's (the
parser behind ``modelplane.kube.cel.runtime``, with the strings, optional and bindings
extensions), so what parses here parses there: macros (``all``, ``exists``, ``exists_one``,
``map``, ``filter``, ``cel.bind``, ``has``) arrive expanded into comprehensions and presence
tests, and ``a.?b`` into a ``_?._`` call, exactly as cel-go's parser expands them.

cel-expr-python hands the parse out only as a serialized ``cel.expr.ParsedExpr``; the message
declarations below follow cel-spec's ``syntax.proto`` (field numbers are its wire contract) and
carry only what a cost estimate reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from cel_expr_python import cel
from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory

from modelplane.kube.cel.runtime import extensions

__all__ = [
    "Call",
    "Comprehension",
    "CreateList",
    "CreateMap",
    "CreateStruct",
    "Expr",
    "Ident",
    "Literal",
    "ParseError",
    "Select",
    "parse",
]


class ParseError(ValueError):
    """An expression that does not parse."""


@dataclass(frozen=True, eq=False)
class Expr:
    id: int


@dataclass(frozen=True, eq=False)
class Literal(Expr):
    kind: str  # null, bool, int, uint, double, string, bytes
    value: Any


@dataclass(frozen=True, eq=False)
class Ident(Expr):
    name: str


@dataclass(frozen=True, eq=False)
class Select(Expr):
    operand: Expr
    field: str
    test_only: bool


@dataclass(frozen=True, eq=False)
class Call(Expr):
    function: str
    target: Expr | None
    args: tuple[Expr, ...]


@dataclass(frozen=True, eq=False)
class CreateList(Expr):
    elements: tuple[Expr, ...]
    optional_indices: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class CreateMap(Expr):
    entries: tuple[tuple[Expr, Expr, bool], ...]  # key, value, optional entry


@dataclass(frozen=True, eq=False)
class CreateStruct(Expr):
    message_name: str
    fields: tuple[tuple[str, Expr, bool], ...]


@dataclass(frozen=True, eq=False)
class Comprehension(Expr):
    iter_var: str
    iter_var2: str
    iter_range: Expr
    accu_var: str
    accu_init: Expr
    loop_condition: Expr
    loop_step: Expr
    result: Expr


_F = descriptor_pb2.FieldDescriptorProto
_PACKAGE = "modelplane.celsyntax"


# Constant's fields: their number, wire type and the kind of the Literal each makes.
_CONSTANTS = {
    "null_value": (1, _F.TYPE_INT32, "null"),  # an enum on the wire: a varint
    "bool_value": (2, _F.TYPE_BOOL, "bool"),
    "int64_value": (3, _F.TYPE_INT64, "int"),
    "uint64_value": (4, _F.TYPE_UINT64, "uint"),
    "double_value": (5, _F.TYPE_DOUBLE, "double"),
    "string_value": (6, _F.TYPE_STRING, "string"),
    "bytes_value": (7, _F.TYPE_BYTES, "bytes"),
}


def _field(
    message: Any, name: str, number: int, kind: int, type_name: str = "", repeated: bool = False
) -> Any:
    f = message.field.add(name=name, number=number, type=kind)
    f.label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
    if type_name:
        f.type_name = f".{_PACKAGE}.{type_name}"
    return f


def _syntax_file() -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(
        name="modelplane/celsyntax.proto", package=_PACKAGE, syntax="proto3"
    )
    parsed = proto.message_type.add(name="ParsedExpr")
    _field(parsed, "expr", 2, _F.TYPE_MESSAGE, "Expr")

    expr = proto.message_type.add(name="Expr")
    ident = expr.nested_type.add(name="Ident")
    _field(ident, "name", 1, _F.TYPE_STRING)
    select = expr.nested_type.add(name="Select")
    _field(select, "operand", 1, _F.TYPE_MESSAGE, "Expr")
    _field(select, "field", 2, _F.TYPE_STRING)
    _field(select, "test_only", 3, _F.TYPE_BOOL)
    call = expr.nested_type.add(name="Call")
    _field(call, "target", 1, _F.TYPE_MESSAGE, "Expr")
    _field(call, "function", 2, _F.TYPE_STRING)
    _field(call, "args", 3, _F.TYPE_MESSAGE, "Expr", repeated=True)
    create_list = expr.nested_type.add(name="CreateList")
    _field(create_list, "elements", 1, _F.TYPE_MESSAGE, "Expr", repeated=True)
    _field(create_list, "optional_indices", 2, _F.TYPE_INT32, repeated=True)
    create_struct = expr.nested_type.add(name="CreateStruct")
    _field(create_struct, "message_name", 1, _F.TYPE_STRING)
    _field(create_struct, "entries", 2, _F.TYPE_MESSAGE, "Expr.CreateStruct.Entry", repeated=True)
    entry = create_struct.nested_type.add(name="Entry")
    entry.oneof_decl.add(name="key_kind")
    _field(entry, "id", 1, _F.TYPE_INT64)
    _field(entry, "field_key", 2, _F.TYPE_STRING).oneof_index = 0
    _field(entry, "map_key", 3, _F.TYPE_MESSAGE, "Expr").oneof_index = 0
    _field(entry, "value", 4, _F.TYPE_MESSAGE, "Expr")
    _field(entry, "optional_entry", 5, _F.TYPE_BOOL)
    comprehension = expr.nested_type.add(name="Comprehension")
    for name, number in (("iter_var", 1), ("accu_var", 3), ("iter_var2", 8)):
        _field(comprehension, name, number, _F.TYPE_STRING)
    for name, number in (
        ("iter_range", 2),
        ("accu_init", 4),
        ("loop_condition", 5),
        ("loop_step", 6),
        ("result", 7),
    ):
        _field(comprehension, name, number, _F.TYPE_MESSAGE, "Expr")
    expr.oneof_decl.add(name="expr_kind")
    _field(expr, "id", 2, _F.TYPE_INT64)
    for name, number, type_name in (
        ("const_expr", 3, "Constant"),
        ("ident_expr", 4, "Expr.Ident"),
        ("select_expr", 5, "Expr.Select"),
        ("call_expr", 6, "Expr.Call"),
        ("list_expr", 7, "Expr.CreateList"),
        ("struct_expr", 8, "Expr.CreateStruct"),
        ("comprehension_expr", 9, "Expr.Comprehension"),
    ):
        _field(expr, name, number, _F.TYPE_MESSAGE, type_name).oneof_index = 0

    constant = proto.message_type.add(name="Constant")
    constant.oneof_decl.add(name="constant_kind")
    for name, (number, kind, _) in _CONSTANTS.items():
        _field(constant, name, number, kind).oneof_index = 0
    return proto


@cache
def _parsed_expr_class() -> Any:
    pool = descriptor_pool.DescriptorPool()
    pool.Add(_syntax_file())
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.ParsedExpr"))


@cache
def _parser() -> Any:
    return cel.NewEnv(None, extensions=extensions())


def parse(expression: str) -> Expr:
    """The syntax tree of ``expression``; ``ParseError`` carries cel-cpp's message."""
    try:
        compiled = _parser().compile(expression, disable_check=True)
    except RuntimeError as e:
        message = str(e).removeprefix("INVALID_ARGUMENT: ").removeprefix("ERROR: ")
        raise ParseError(message.splitlines()[0] if message else "syntax error") from None
    wrapper = any_pb2.Any.FromString(compiled.serialize())
    return _convert(_parsed_expr_class().FromString(wrapper.value).expr)


def _convert(e: Any) -> Expr:
    convert = _CONVERTERS.get(e.WhichOneof("expr_kind"))
    if convert is None:
        raise ParseError("an expression of a kind this estimator does not know")
    return convert(e)


def _constant(e: Any) -> Literal:
    which = e.const_expr.WhichOneof("constant_kind")
    if which is None:
        raise ParseError("a constant of a kind this estimator does not know")
    value = None if which == "null_value" else getattr(e.const_expr, which)
    return Literal(e.id, _CONSTANTS[which][2], value)


def _ident(e: Any) -> Ident:
    return Ident(e.id, e.ident_expr.name)


def _select(e: Any) -> Select:
    s = e.select_expr
    return Select(e.id, _convert(s.operand), s.field, s.test_only)


def _call(e: Any) -> Call:
    c = e.call_expr
    target = _convert(c.target) if c.HasField("target") else None
    return Call(e.id, c.function, target, tuple(_convert(a) for a in c.args))


def _list(e: Any) -> CreateList:
    lst = e.list_expr
    return CreateList(e.id, tuple(_convert(x) for x in lst.elements), tuple(lst.optional_indices))


def _struct_or_map(e: Any) -> CreateStruct | CreateMap:
    s = e.struct_expr
    if s.message_name:
        return CreateStruct(
            e.id,
            s.message_name,
            tuple((x.field_key, _convert(x.value), x.optional_entry) for x in s.entries),
        )
    return CreateMap(
        e.id, tuple((_convert(x.map_key), _convert(x.value), x.optional_entry) for x in s.entries)
    )


def _comprehension(e: Any) -> Comprehension:
    c = e.comprehension_expr
    return Comprehension(
        e.id,
        c.iter_var,
        c.iter_var2,
        _convert(c.iter_range),
        c.accu_var,
        _convert(c.accu_init),
        _convert(c.loop_condition),
        _convert(c.loop_step),
        _convert(c.result),
    )


_CONVERTERS: dict[str, Callable[[Any], Expr]] = {
    "const_expr": _constant,
    "ident_expr": _ident,
    "select_expr": _select,
    "call_expr": _call,
    "list_expr": _list,
    "struct_expr": _struct_or_map,
    "comprehension_expr": _comprehension,
}
