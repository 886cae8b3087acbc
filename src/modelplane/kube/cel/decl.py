"""What CEL knows of a schema node's size: the API server's declaration types.

Before it estimates a rule's cost, the API server turns the structural schema under the rule into
CEL declaration types (apiserver ``pkg/cel/common/schemas.go``, ``SchemaDeclType``). Each carries
the most elements a value can hold (``max_elements``: characters of a string, items of a list,
entries of a map) and the fewest bytes it serializes to in JSON (``min_size``). Where the schema
sets no bound (``maxLength``, ``maxItems``, ``maxProperties``), the bound is how many fit in the
largest request the API server accepts, 3 MiB:

- a string holds ``3 MiB - 2`` characters (the two quotes); with ``maxLength`` it holds
  ``4 * maxLength`` (bytes: a character is up to 4 UTF-8 bytes); a string enum without
  ``maxLength`` holds its longest value; ``format: byte`` holds ``maxLength`` bytes;
  ``duration`` and ``date-time`` 32, ``date`` 12 (those ignore ``maxLength``);
- a list holds ``(3 MiB - 2) // (min_size(item) + 1)`` items (one comma each);
- a map holds ``(3 MiB - 2) // (min_size(value) + 6)`` entries (quotes, colon, comma, key);
- an object serializes to at least ``{}`` plus, for each required property without a default,
  ``len(name) + min_size(property) + 4``.

Map keys are declared with no size at all (``max_elements`` 0), as the API server declares them.
A resource root (and an ``x-kubernetes-embedded-resource``) always exposes ``apiVersion``,
``kind``, ``metadata.name`` and ``metadata.generateName``; like Kubernetes 1.34 to 1.36 these
get no length bound of their own (1.37 caps the names at 253, which only lowers costs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from modelplane.kube import objects
from modelplane.kube.cel.names import escape

MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024
MIN_STRING_SIZE = 2
MIN_BOOL_SIZE = 4
MIN_NUMBER_SIZE = 1
MIN_DURATION_SIZE_JSON = 3
MAX_DURATION_SIZE_JSON = 32
JSON_DATE_SIZE = 12
MIN_DATETIME_SIZE_JSON = 21
MAX_DATETIME_SIZE_JSON = 32


@dataclass(eq=False)
class Decl:
    """One declaration type. ``kind`` is the CEL kind of its values: object (a struct), list,
    map, string, bytes, duration, timestamp, bool, int, double, or dyn (int-or-string)."""

    kind: str
    min_size: int
    max_elements: int = 0
    fields: dict[str, Decl] = field(default_factory=dict)
    elem: Decl | None = None
    key: Decl | None = None
    # False when max_elements is the 3 MiB fallback: the schema sets no bound here.
    bounded: bool = True


def decl_of(schema: Any, resource_root: bool = False) -> Decl | None:
    """The declaration type of a raw ``openAPIV3Schema`` node, None when CEL cannot see it."""
    if not isinstance(schema, dict):
        return None
    if schema.get("x-kubernetes-int-or-string"):
        return _int_or_string(schema)
    if resource_root or schema.get("x-kubernetes-embedded-resource"):
        schema = _with_type_and_object_meta(schema)
    kind = schema.get("type")
    if kind == "array":
        return _list(schema)
    if kind == "object":
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            return _map(schema, additional)
        return _object(schema)
    if kind == "string":
        return _string(schema)
    if kind == "boolean":
        return Decl("bool", MIN_BOOL_SIZE)
    if kind == "number":
        return Decl("double", MIN_NUMBER_SIZE)
    if kind == "integer":
        return Decl("int", MIN_NUMBER_SIZE)
    return None


def _int_or_string(schema: dict[str, Any]) -> Decl:
    max_length = schema.get("maxLength")
    bound = _bound(max_length) * 4 if max_length is not None else _bound(None)
    return Decl("dyn", 1, bound, bounded=max_length is not None)


def _list(schema: dict[str, Any]) -> Decl | None:
    items = schema.get("items")
    if not isinstance(items, dict):
        return None
    elem = decl_of(items)
    if elem is None:
        return None
    max_items = schema.get("maxItems")
    bound = _bound(max_items, elem.min_size + 1)
    return Decl("list", 2, bound, elem=elem, bounded=max_items is not None)


def _map(schema: dict[str, Any], additional: dict[str, Any]) -> Decl | None:
    value = decl_of(additional)
    if value is None:
        return None
    max_properties = schema.get("maxProperties")
    bound = _bound(max_properties, value.min_size + 6)
    key = Decl("string", MIN_STRING_SIZE)
    return Decl("map", 2, bound, elem=value, key=key, bounded=max_properties is not None)


def _object(schema: dict[str, Any]) -> Decl:
    required = set(schema.get("required") or ())
    obj = Decl("object", 2)
    for name, prop in (schema.get("properties") or {}).items():
        sub = decl_of(prop)
        if sub is None:
            continue
        cel_name = escape(name)
        if cel_name is not None:
            obj.fields[cel_name] = sub
        if name in required and "default" not in prop:
            obj.min_size += len(name) + sub.min_size + 4
    return obj


def _string(schema: dict[str, Any]) -> Decl:
    fmt = schema.get("format")
    max_length = schema.get("maxLength")
    if fmt == "byte":
        return Decl("bytes", MIN_STRING_SIZE, _bound(max_length), bounded=max_length is not None)
    if fmt == "duration":
        return Decl("duration", MIN_DURATION_SIZE_JSON, MAX_DURATION_SIZE_JSON)
    if fmt == "date":
        return Decl("timestamp", JSON_DATE_SIZE, JSON_DATE_SIZE)
    if fmt == "date-time":
        return Decl("timestamp", MIN_DATETIME_SIZE_JSON, MAX_DATETIME_SIZE_JSON)
    if max_length is not None:
        bound = _bound(max_length) * 4
    elif schema.get("enum"):
        # Go's len(): UTF-8 bytes.
        bound = max((len(v.encode()) for v in schema["enum"] if isinstance(v, str)), default=0)
    else:
        return Decl("string", MIN_STRING_SIZE, _bound(None), bounded=False)
    return Decl("string", MIN_STRING_SIZE, bound)


_STRING = {"type": "string"}


def _with_type_and_object_meta(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties") or {}
    meta = props.get("metadata") or {}
    meta_props = meta.get("properties") or {}
    if (
        props
        and objects.dig(props, "kind", "type") == "string"
        and objects.dig(props, "apiVersion", "type") == "string"
        and meta.get("type") == "object"
        and meta_props
        and objects.dig(meta_props, "name", "type") == "string"
        and objects.dig(meta_props, "generateName", "type") == "string"
    ):
        return schema
    out = dict(schema)
    out["properties"] = {
        **props,
        "kind": _STRING,
        "apiVersion": _STRING,
        "metadata": {"type": "object", "properties": {"name": _STRING, "generateName": _STRING}},
    }
    return out


def _bound(given: Any, per_element: int = 1) -> int:
    """A schema's maxItems, maxProperties or maxLength (a negative one is 0), else as many
    elements of ``per_element`` bytes as a request holds within its enclosing pair of bytes."""
    if given is None:
        return (MAX_REQUEST_SIZE_BYTES - 2) // per_element
    return max(int(given), 0)


def max_cardinality(min_size: int) -> int:
    """How often data of ``min_size`` bytes can repeat in one request (one comma each)."""
    return MAX_REQUEST_SIZE_BYTES // (min_size + 1)
