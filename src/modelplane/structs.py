"""Protobuf Struct <-> plain Python data, the only place the two meet.

Struct carries every number as a double. JSON (and so Kubernetes) has no integer/float
distinction on the wire, so an integral double becomes a Python int: the API server would
have serialised it without a fraction, and CEL and schema checks need it as an int.

Required resources can be large (a scheduler reads every replica of the fleet) while composers
read a few fields of each, so they can be read through ``StructView``: a read-only Mapping that
converts only what is accessed. Views written back into a response are copied as protobuf, never
converted; ``lazy_paths`` names the parts of a composite to read that way.

Writing costs about a microsecond a value from Python, so constant sub-trees of composed output
are ``frozen``: encoded once per process and written as one protobuf copy.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeVar, cast, overload

from google.protobuf import struct_pb2

from modelplane.kube.errors import ErrorType, FieldError, render_path
from modelplane.kube.schema import Schema

T = TypeVar("T")


def struct_to_dict(s: struct_pb2.Struct) -> dict[str, Any]:
    return _fields_to_dict(s.fields)


LazyPaths = Mapping[str, Any]
"""A tree of keys (``[]``: every item of a list) whose leaves are ``True``; see ``lazy_paths``."""


def lazy_paths(*patterns: str) -> LazyPaths:
    """Sub-trees to leave as views when converting, as dotted paths; ``[]`` is every item.

    ``lazy_paths("spec.engines[].members")`` leaves each engine's members a ``ListView``.
    """
    tree: dict[str, Any] = {}
    for pattern in patterns:
        node = tree
        keys = pattern.replace("[]", ".[]").split(".")
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = True
    return tree


def struct_to_dict_lazily(s: struct_pb2.Struct, lazy: LazyPaths) -> dict[str, Any]:
    """Like ``struct_to_dict``, but the sub-trees ``lazy`` names stay read-only views: for
    parts a composer only passes through (they are written back as one protobuf copy) or
    digests whole."""
    return _lazy_fields(s.fields, lazy)


def _lazy_fields(fields: Any, tree: LazyPaths) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k in fields:
        sub = tree.get(k)
        if sub is None:
            out[k] = value_to_py(fields[k])
        elif sub is True:
            out[k] = _view(fields[k])
        else:
            out[k] = _lazy_value(fields[k], sub)
    return out


def _lazy_value(v: struct_pb2.Value, tree: LazyPaths) -> Any:
    kind = v.WhichOneof("kind")
    if kind == "struct_value":
        return _lazy_fields(v.struct_value.fields, tree)
    if kind == "list_value":
        items = tree.get("[]")
        if items is None:
            return _values_to_list(v.list_value.values)
        if items is True:
            return [_view(x) for x in v.list_value.values]
        return [_lazy_value(x, items) for x in v.list_value.values]
    return value_to_py(v)


def value_to_py(v: struct_pb2.Value) -> Any:
    kind = v.WhichOneof("kind")
    if kind == "string_value":
        return v.string_value
    if kind == "struct_value":
        return _fields_to_dict(v.struct_value.fields)
    if kind == "list_value":
        return _values_to_list(v.list_value.values)
    if kind == "number_value":
        return _number(v.number_value)
    if kind == "bool_value":
        return v.bool_value
    return None


# As for writing (below): scalars in line, a call only per container. Keys then lookups, since
# the upb map's items() is a Python-level generator.
def _fields_to_dict(fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k in fields:
        v = fields[k]
        kind = v.WhichOneof("kind")
        if kind == "string_value":
            out[k] = v.string_value
        elif kind == "struct_value":
            out[k] = _fields_to_dict(v.struct_value.fields)
        elif kind == "list_value":
            out[k] = _values_to_list(v.list_value.values)
        elif kind == "number_value":
            n = v.number_value
            out[k] = int(n) if n.is_integer() else n
        elif kind == "bool_value":
            out[k] = v.bool_value
        else:
            out[k] = None
    return out


def _values_to_list(values: Any) -> list[Any]:
    out: list[Any] = []
    add = out.append
    for v in values:
        kind = v.WhichOneof("kind")
        if kind == "string_value":
            add(v.string_value)
        elif kind == "struct_value":
            add(_fields_to_dict(v.struct_value.fields))
        elif kind == "list_value":
            add(_values_to_list(v.list_value.values))
        elif kind == "number_value":
            n = v.number_value
            add(int(n) if n.is_integer() else n)
        elif kind == "bool_value":
            add(v.bool_value)
        else:
            add(None)
    return out


def dict_to_struct(d: Mapping[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    fill_struct(s, d)
    return s


def fill_struct(s: struct_pb2.Struct, d: Mapping[str, Any]) -> None:
    """Write ``d`` into ``s`` in place: building where the Struct lives saves copying it there."""
    if isinstance(d, (StructView, FrozenDict)):
        s.CopyFrom(d.struct)
        return
    _fill_fields(s.fields, d)


def to_value(v: Any) -> struct_pb2.Value:
    out = struct_pb2.Value()
    _set(out, v)
    return out


def _set(out: struct_pb2.Value, v: Any) -> None:
    t = type(v)
    if t is str:
        out.string_value = v
    elif t is dict:
        if v:
            _fill_fields(out.struct_value.fields, v)
        else:
            out.struct_value.SetInParent()
    elif t is list:
        if v:
            _fill_values(out.list_value.values, v)
        else:
            out.list_value.SetInParent()
    elif t is int or t is float:
        out.number_value = v
    elif t is bool:
        out.bool_value = v
    else:
        _set_other(out, v)


# The two loops below write most of every response, a value at a time. Scalars are written in
# line and containers recurse, dispatched on exact types: composers build plain dicts, lists and
# scalars, and a Python call or an abstract isinstance check per value costs as much as the
# protobuf write itself.
def _fill_fields(fields: Any, d: Mapping[str, Any]) -> None:
    for k, x in d.items():
        t = type(x)
        if t is str:
            fields[k].string_value = x
        elif t is dict:
            if x:
                _fill_fields(fields[k].struct_value.fields, x)
            else:
                fields[k].struct_value.SetInParent()
        elif t is list:
            if x:
                _fill_values(fields[k].list_value.values, x)
            else:
                fields[k].list_value.SetInParent()
        elif t is FrozenDict:
            fields[k].struct_value.CopyFrom(x.struct)
        elif t is FrozenList:
            fields[k].list_value.CopyFrom(x.list)
        elif t is int or t is float:
            fields[k].number_value = x
        elif t is bool:
            fields[k].bool_value = x
        else:
            _set_other(fields[k], x)


def _fill_values(values: Any, items: list[Any]) -> None:
    for x in items:
        t = type(x)
        if t is str:
            values.add().string_value = x
        elif t is dict:
            if x:
                _fill_fields(values.add().struct_value.fields, x)
            else:
                values.add().struct_value.SetInParent()
        elif t is list:
            if x:
                _fill_values(values.add().list_value.values, x)
            else:
                values.add().list_value.SetInParent()
        elif t is FrozenDict:
            values.add().struct_value.CopyFrom(x.struct)
        elif t is FrozenList:
            values.add().list_value.CopyFrom(x.list)
        elif t is int or t is float:
            values.add().number_value = x
        elif t is bool:
            values.add().bool_value = x
        else:
            _set_other(values.add(), x)


def _set_other(out: struct_pb2.Value, v: Any) -> None:
    t = type(v)
    if t is FrozenDict:
        out.struct_value.CopyFrom(v.struct)
    elif t is FrozenList:
        out.list_value.CopyFrom(v.list)
    elif v is None:
        out.null_value = struct_pb2.NULL_VALUE
    elif isinstance(v, StructView):
        out.struct_value.CopyFrom(v.struct)
    elif isinstance(v, ListView):
        out.list_value.CopyFrom(v.list)
    elif isinstance(v, (str, int, float)):
        _set(out, v if isinstance(v, str) else float(v))
    elif isinstance(v, Mapping):
        _set(out, dict(v))
    elif isinstance(v, (list, tuple)):
        _set(out, list(v))
    else:
        raise TypeError(f"cannot encode a {type(v).__name__} in a protobuf Struct: {v!r}")


def _number(n: float) -> int | float:
    return int(n) if n.is_integer() else n


# --- Plain data without a Struct ------------------------------------------------------------


def plain(v: Any) -> Any:
    """``v`` exactly as writing it into a Struct and reading it back gives it (integral numbers
    as ints, frozen and viewed parts as plain dicts and lists), without protobuf: for `render`,
    which composes in process. Raises TypeError where writing would. Frozen parts come back as
    one shared copy (``FrozenDict.plain``): the result is read, never changed in place."""
    t = type(v)
    if t is dict:
        return _plain_fields(v)
    if t is list:
        return _plain_values(v)
    if t is str or t is int or t is bool or v is None:
        return v
    if t is float:
        return _number(v)
    return _plain_other(v)


# Scalars in line and a call per container, as for writing: this walks all a render composes.
def _plain_fields(d: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, x in d.items():
        if type(k) is not str:
            raise TypeError(f"a Struct's keys are strings, not {type(k).__name__}: {k!r}")
        t = type(x)
        if t is str or t is int or t is bool or x is None:
            out[k] = x
        elif t is dict:
            out[k] = _plain_fields(x)
        elif t is list:
            out[k] = _plain_values(x)
        elif t is FrozenDict or t is FrozenList:
            out[k] = x.plain
        else:
            out[k] = plain(x)
    return out


def _plain_values(items: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    add = out.append
    for x in items:
        t = type(x)
        if t is str or t is int or t is bool or x is None:
            add(x)
        elif t is dict:
            add(_plain_fields(x))
        elif t is list:
            add(_plain_values(x))
        elif t is FrozenDict or t is FrozenList:
            add(x.plain)
        else:
            add(plain(x))
    return out


def _plain_other(v: Any) -> Any:
    t = type(v)
    if t is FrozenDict or t is FrozenList:
        return v.plain
    if isinstance(v, StructView):
        return v.to_dict()
    if isinstance(v, ListView):
        return _values_to_list(v.list.values)
    if isinstance(v, str):
        return str(v)
    if isinstance(v, (int, float)):
        return _number(float(v))
    if isinstance(v, Mapping):
        return _plain_fields(v)
    if isinstance(v, (list, tuple)):
        return _plain_values(v)
    raise TypeError(f"cannot encode a {type(v).__name__} in a protobuf Struct: {v!r}")


def _view(v: struct_pb2.Value) -> Any:
    kind = v.WhichOneof("kind")
    if kind == "string_value":
        return v.string_value
    if kind == "struct_value":
        return StructView(v.struct_value)
    if kind == "list_value":
        return ListView(v.list_value)
    if kind == "number_value":
        return _number(v.number_value)
    if kind == "bool_value":
        return v.bool_value
    return None


class StructView(Mapping[str, Any]):
    """A read-only Mapping over a Struct; nested objects and lists are views too."""

    __slots__ = ("_fields", "struct")

    def __init__(self, struct: struct_pb2.Struct) -> None:
        self.struct = struct
        self._fields = struct.fields

    # `fields[key]` on a missing key would insert it into the message, so membership is tested
    # first; `in` plus `[]` is also several times faster than the map's own get().
    def __getitem__(self, key: str) -> Any:
        fields = self._fields
        if key in fields:
            return _view(fields[key])
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        fields = self._fields
        return _view(fields[key]) if key in fields else default

    def __contains__(self, key: object) -> bool:
        return key in self._fields

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __repr__(self) -> str:
        return f"StructView({struct_to_dict(self.struct)!r})"

    def to_dict(self) -> dict[str, Any]:
        return struct_to_dict(self.struct)


class ListView(Sequence[Any]):
    __slots__ = ("_values", "list")

    def __init__(self, lst: struct_pb2.ListValue) -> None:
        self.list = lst
        self._values = lst.values

    @overload
    def __getitem__(self, i: int) -> Any: ...
    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...
    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [_view(v) for v in self._values[i]]
        return _view(self._values[i])

    def __iter__(self) -> Iterator[Any]:
        return (_view(v) for v in self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, ListView)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ListView({[value_to_py(v) for v in self._values]!r})"


def frozen(obj: T) -> T:
    """A constant sub-tree of composed output, encoded once for the life of the process.

    Composers build every object afresh, and each value costs about a microsecond to write
    into a Struct; a frozen dict or list is written with one protobuf copy instead. It reads
    as the plain data it holds (it is a dict or list), but refuses changes: the copy it
    writes could not follow them. Nested dicts and lists are frozen too.
    """
    if type(obj) is FrozenDict or type(obj) is FrozenList:
        return obj
    if isinstance(obj, Mapping):
        return cast(T, FrozenDict({k: frozen(v) for k, v in obj.items()}))
    if isinstance(obj, (list, tuple)):
        return cast(T, FrozenList([frozen(v) for v in obj]))
    return obj


def _refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise TypeError(
        f"a frozen {type(self).__mro__[1].__name__} is shared composed output: "
        "change a copy (dict(x) or list(x)) instead"
    )


class FrozenDict(dict[str, Any]):
    """A read-only dict carrying its own Struct; build one with ``frozen``."""

    __slots__ = ("plain", "struct")

    def __init__(self, items: Mapping[str, Any]) -> None:
        super().__init__(items)
        self.struct = struct_pb2.Struct()
        _fill_fields(self.struct.fields, items)
        self.plain = _fields_to_dict(self.struct.fields)
        """What it holds as plain data (as read back from its Struct), for ``plain``."""

    # copy, deepcopy and pickle give the plain dict it holds: a copy is the caller's to change.
    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse
    __ior__ = _refuse


class FrozenList(list[Any]):
    """A read-only list carrying its own ListValue; build one with ``frozen``."""

    __slots__ = ("list", "plain")

    def __init__(self, items: list[Any]) -> None:
        super().__init__(items)
        self.list = struct_pb2.ListValue()
        _fill_values(self.list.values, items)
        self.plain = _values_to_list(self.list.values)
        """What it holds as plain data (as read back from its ListValue), for ``plain``."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))

    __setitem__ = __delitem__ = append = extend = insert = pop = remove = _refuse
    clear = sort = reverse = __iadd__ = __imul__ = _refuse


# --- Checked reads --------------------------------------------------------------------------
#
# Required and observed resources come from the API server, which stored them only if they fit
# their schema; a hand-made or fuzzed request need not. Rather than walk every field of every
# object up front (a fleet's 4,000 replicas cost 3x the reconcile), a checked view compares
# each value a composer reads with the type its schema declares there, and a mismatch raises
# ``ShapeError`` naming the object and field as the API server would. Only what is read costs,
# about a dictionary lookup and a set membership more than an unchecked read.

_JSON_TYPE = {
    "string_value": "string",
    "number_value": "number",
    "bool_value": "boolean",
    "struct_value": "object",
    "list_value": "array",
    "null_value": "null",
    None: "null",
}
_KINDS = {
    "string": frozenset({"string_value"}),
    "integer": frozenset({"number_value"}),
    "number": frozenset({"number_value"}),
    "boolean": frozenset({"bool_value"}),
    "object": frozenset({"struct_value"}),
    "array": frozenset({"list_value"}),
}
_ANY = frozenset(_JSON_TYPE)
_NULL = frozenset({"null_value", None})


class ShapeError(Exception):
    """A resource whose value at a field is not of the type its schema declares there.

    Not a ValueError or TypeError, so no composer's own handler swallows it.
    """

    def __init__(self, origin: str, error: FieldError) -> None:
        super().__init__(f"{origin} is invalid: {error}")
        self.error = error


class Shape:
    """A structural schema node as reads check it: the value kinds it accepts, its required
    properties and, built on first use, the shape of each child."""

    __slots__ = ("children", "integer", "items", "kinds", "required", "schema")

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        expected = schema.type
        if expected:
            kinds = _KINDS.get(expected, _ANY)
        elif schema.int_or_string:
            kinds = frozenset({"string_value", "number_value"})
        else:
            kinds = _ANY
        self.kinds = kinds | _NULL if schema.nullable or kinds is _ANY else kinds
        self.integer = expected == "integer" or (schema.int_or_string and not expected)
        self.required = frozenset(schema.required)
        self.children: dict[str, Shape | None] = {}
        self.items = shape_of(schema.items) if schema.items is not None else None

    def child(self, key: str) -> Shape | None:
        """The shape of property ``key``; None for a field the schema does not know (the API
        server prunes those, so no composer relies on one): read as is."""
        props = self.schema.properties
        sub = props.get(key) if props else None
        if sub is None:
            sub = self.schema.additional
        found = self.children[key] = shape_of(sub) if sub is not None else None
        return found


_SHAPES: dict[int, tuple[Schema, Shape]] = {}


def shape_of(schema: Schema) -> Shape:
    """The Shape of a schema node, built once per process (schemas live as long)."""
    held = _SHAPES.get(id(schema))
    if held is None or held[0] is not schema:
        held = _SHAPES[id(schema)] = (schema, Shape(schema))
    return held[1]


Origin = str | tuple[str, str, Any] | None
"""What names a resource in errors: the words, or (what, list, index) to which the resource's
own ``Kind.group "name"`` is added when an error is raised, or None for that name alone."""


def checked_view(struct: struct_pb2.Struct, schema: Schema | Shape, origin: Origin) -> StructView:
    """A read-only view of ``struct`` whose reads are checked against ``schema`` (a structural
    schema: types, required properties; nothing else); ``origin`` names the object in errors."""
    shape = schema if type(schema) is Shape else shape_of(schema)  # type: ignore[arg-type]
    return CheckedStructView(struct, shape, None, origin)


def check_struct(struct: struct_pb2.Struct, schema: Schema, origin: Origin) -> None:
    """Raise ``ShapeError`` for the first field of ``struct`` that does not fit ``schema``."""
    error = _first_error(shape_of(schema), struct.fields, [])
    if error is not None:
        raise ShapeError(_named(origin, struct), error)


def check_field(struct: struct_pb2.Struct, key: str, schema: Schema, origin: Origin) -> None:
    """Raise ``ShapeError`` if ``struct``'s field ``key`` does not fit ``schema``, the schema
    of that field."""
    if key in struct.fields:
        error = _value_error(shape_of(schema), struct.fields[key], [key])
        if error is not None:
            raise ShapeError(_named(origin, struct), error)


def identity(struct: struct_pb2.Struct) -> tuple[str, str]:
    """An object's apiVersion and kind, "" for either it lacks."""
    fields = struct.fields
    api_version = fields["apiVersion"].string_value if "apiVersion" in fields else ""
    return api_version, fields["kind"].string_value if "kind" in fields else ""


def describe(struct: struct_pb2.Struct) -> str:
    """``Kind.group "name"``, as the API server names an object, from whatever is there."""
    api_version, kind = identity(struct)
    group = api_version.rpartition("/")[0]
    kind, name = kind or "<no kind>", name_of(struct)
    return f'{kind}.{group} "{name}"' if group else f'{kind} "{name}"'


def name_of(struct: struct_pb2.Struct) -> str:
    """An object's ``metadata.name``, "" when it has none."""
    meta = struct.fields.get("metadata")
    if meta is None or meta.WhichOneof("kind") != "struct_value":
        return ""
    name = meta.struct_value.fields.get("name")
    return name.string_value if name is not None else ""


def _first_error(shape: Shape, fields: Any, path: list[str | int]) -> FieldError | None:
    for name in shape.schema.required:
        if name not in fields:
            return _required([*path, name])
    schema = shape.schema
    if schema.properties is None and schema.additional is None:
        return None
    children = shape.children
    for key in fields:
        sub = children[key] if key in children else shape.child(key)
        if sub is None:
            continue
        path.append(key)
        error = _value_error(sub, fields[key], path)
        path.pop()
        if error is not None:
            return error
    return None


def _value_error(shape: Shape, v: struct_pb2.Value, path: list[str | int]) -> FieldError | None:
    kind = v.WhichOneof("kind")
    if kind not in shape.kinds or (
        shape.integer and kind == "number_value" and not v.number_value.is_integer()
    ):
        return _mistyped(path, shape, kind, v)
    if kind == "struct_value":
        return _first_error(shape, v.struct_value.fields, path)
    if kind == "list_value" and shape.items is not None:
        for i, item in enumerate(v.list_value.values):
            path.append(i)
            error = _value_error(shape.items, item, path)
            path.pop()
            if error is not None:
                return error
    return None


def _mistyped(
    path: list[str | int], shape: Shape, kind: str | None, v: struct_pb2.Value
) -> FieldError:
    name = render_path(tuple(path))
    expected = shape.schema.type or "integer,string"
    # As the API server decodes JSON: an integral number is an integer.
    integral = kind == "number_value" and v.number_value.is_integer()
    actual = "integer" if integral else _JSON_TYPE[kind]
    message = f'{name} in body must be of type {expected}: "{actual}"'
    return FieldError(name, ErrorType.TYPE_INVALID, actual, message)


def _required(path: list[str | int]) -> FieldError:
    return FieldError(render_path(tuple(path)), ErrorType.REQUIRED)


# The read path: one call per value read, and a view per container, as unchecked reads.
def _checked(v: struct_pb2.Value, shape: Shape | None, up: Any, key: str | int) -> Any:
    kind = v.WhichOneof("kind")
    if shape is None:
        return _view(v)
    if kind not in shape.kinds or (
        shape.integer and kind == "number_value" and not v.number_value.is_integer()
    ):
        raise ShapeError(_origin(up), _mistyped(_path(up, key), shape, kind, v))
    if kind == "string_value":
        return v.string_value
    if kind == "struct_value":
        return CheckedStructView(v.struct_value, shape, up, key)
    if kind == "list_value":
        return CheckedListView(v.list_value, shape.items, up, key)
    if kind == "number_value":
        return _number(v.number_value)
    if kind == "bool_value":
        return v.bool_value
    return None


def _path(up: Any, key: str | int) -> list[str | int]:
    path = [key]
    while up is not None and up._up is not None:
        path.append(up._key)
        up = up._up
    return path[::-1]


def _origin(view: Any) -> str:
    while view._up is not None:
        view = view._up
    return _named(view._key, view.struct)


def _named(origin: Origin, struct: struct_pb2.Struct) -> str:
    if isinstance(origin, str):
        return origin
    if origin is None:
        return describe(struct)
    what, where, index = origin
    at = where if index is None else f"{where}[{index}]"
    return f"{what} {at} {describe(struct)}"


class CheckedStructView(StructView):
    """A StructView whose reads are checked against a structural schema (``checked_view``)."""

    __slots__ = ("_key", "_shape", "_up")

    def __init__(self, struct: struct_pb2.Struct, shape: Shape, up: Any, key: Any) -> None:
        self.struct = struct
        self._fields = struct.fields
        self._shape = shape
        self._up = up  # the view this one was read from; None at the root, whose key names it
        self._key = key

    def __getitem__(self, key: str) -> Any:
        found = self.get(key, _ABSENT)
        if found is _ABSENT:
            raise KeyError(key)
        return found

    # _checked in line: this is most of what a fleet reconcile reads.
    def get(self, key: str, default: Any = None) -> Any:
        fields = self._fields
        shape = self._shape
        if key not in fields:
            if key in shape.required:
                raise ShapeError(_origin(self), _required(_path(self, key)))
            return default
        v = fields[key]
        children = shape.children
        sub = children[key] if key in children else shape.child(key)
        if sub is None:
            return _view(v)
        kind = v.WhichOneof("kind")
        if kind not in sub.kinds:
            raise ShapeError(_origin(self), _mistyped(_path(self, key), sub, kind, v))
        if kind == "string_value":
            return v.string_value
        if kind == "struct_value":
            return CheckedStructView(v.struct_value, sub, self, key)
        if kind == "list_value":
            return CheckedListView(v.list_value, sub.items, self, key)
        if kind == "number_value":
            n = v.number_value
            if n.is_integer():
                return int(n)
            if sub.integer:
                raise ShapeError(_origin(self), _mistyped(_path(self, key), sub, kind, v))
            return n
        if kind == "bool_value":
            return v.bool_value
        return None


_ABSENT: Any = object()


class CheckedListView(ListView):
    """A ListView whose items are checked against the list's ``items`` schema."""

    __slots__ = ("_key", "_shape", "_up")

    def __init__(self, lst: struct_pb2.ListValue, shape: Shape | None, up: Any, key: Any) -> None:
        self.list = lst
        self._values = lst.values
        self._shape = shape
        self._up = up
        self._key = key

    @overload
    def __getitem__(self, i: int) -> Any: ...
    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...
    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self._values)))]
        return _checked(self._values[i], self._shape, self, i)

    def __iter__(self) -> Iterator[Any]:
        shape = self._shape
        return (_checked(v, shape, self, i) for i, v in enumerate(self._values))
