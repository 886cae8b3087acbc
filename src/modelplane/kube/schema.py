"""Structural schemas: prune, default and validate an object as the API server does.

``Schema.of(openapi_dict)`` compiles an ``openAPIV3Schema`` once (patterns compiled, defaults
and rules located). Then, for an object:

- ``prune_and_default(schema, obj)`` returns a pruned, defaulted copy and the unknown-field
  errors that strict field validation reports. Unknown fields are dropped unless
  ``x-kubernetes-preserve-unknown-fields`` holds; nulls on non-nullable fields without a default
  are dropped; defaults fill absent (or null) properties, nested and inside list items.
  Floats with integral values in integer fields become ints (protobuf ``Struct`` carries only
  doubles).
- ``validate(schema, obj)`` reports every OpenAPI problem with kube-openapi's messages and
  apiextensions' error kinds, then list-type ``map``/``set`` uniqueness.

CEL rules (``x-kubernetes-validations``) are evaluated by ``modelplane.kube.rules``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from modelplane.kube.cel.names import is_plain
from modelplane.kube.errors import OMIT, ErrorType, FieldError, Key, Path, render_path
from modelplane.shortlist import counted

_MISSING: Any = object()


class SchemaError(ValueError):
    """A definition whose schema cannot be used (a pattern that does not compile, ...)."""


@dataclass(eq=False)
class Schema:
    type: str = ""
    properties: dict[str, Schema] | None = None
    additional: Schema | None = None
    items: Schema | None = None
    required: tuple[str, ...] = ()
    nullable: bool = False
    default: Any = _MISSING
    enum: list[Any] | None = None
    pattern: re.Pattern[str] | None = None
    pattern_text: str = ""
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    min_properties: int | None = None
    max_properties: int | None = None
    int_or_string: bool = False
    preserve_unknown: bool = False
    embedded: bool = False
    list_type: str | None = None
    list_map_keys: tuple[str, ...] = ()
    any_of: list[Schema] = field(default_factory=list)
    all_of: list[Schema] = field(default_factory=list)
    one_of: list[Schema] = field(default_factory=list)
    not_: Schema | None = None
    rules: list[dict[str, Any]] = field(default_factory=list)
    # Whether this node or any below it carries CEL rules: the rule walk skips the rest.
    has_rules: bool = False
    # True when CEL sees values of this subtree exactly as decoded (no escaped property
    # names, no int-to-double coercion), so they can be handed over without a copy.
    cel_identity: bool = True
    # Properties that carry a default, and, for leaves with nothing to check but their type,
    # that type: both let the walks skip per-node work on the common case.
    defaulted: tuple[tuple[str, Schema], ...] = ()
    plain_leaf: str = ""
    # Filled by modelplane.kube.rules on first use.
    compiled_rules: Any = None

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Schema:
        return _compile(raw, "openAPIV3Schema")

    def children(self, where: str) -> Iterator[tuple[Schema, str]]:
        """Each sub-schema below properties, additionalProperties and items, with its
        location below ``where`` as definition errors name it."""
        for name, sub in (self.properties or {}).items():
            yield sub, f"{where}.properties[{name}]"
        if self.additional is not None:
            yield self.additional, f"{where}.additionalProperties"
        if self.items is not None:
            yield self.items, f"{where}.items"


def _compile(raw: dict[str, Any], where: str) -> Schema:
    if not isinstance(raw, dict):
        raise SchemaError(f"{where}: a schema must be an object")
    node = Schema(
        type=raw.get("type", "") or "",
        required=tuple(raw.get("required") or ()),
        nullable=bool(raw.get("nullable", False)),
        default=raw.get("default", _MISSING),
        enum=raw.get("enum"),
        minimum=raw.get("minimum"),
        maximum=raw.get("maximum"),
        exclusive_minimum=bool(raw.get("exclusiveMinimum", False)),
        exclusive_maximum=bool(raw.get("exclusiveMaximum", False)),
        min_length=raw.get("minLength"),
        max_length=raw.get("maxLength"),
        min_items=raw.get("minItems"),
        max_items=raw.get("maxItems"),
        min_properties=raw.get("minProperties"),
        max_properties=raw.get("maxProperties"),
        int_or_string=bool(raw.get("x-kubernetes-int-or-string", False)),
        preserve_unknown=bool(raw.get("x-kubernetes-preserve-unknown-fields", False)),
        embedded=bool(raw.get("x-kubernetes-embedded-resource", False)),
        list_type=raw.get("x-kubernetes-list-type"),
        list_map_keys=tuple(raw.get("x-kubernetes-list-map-keys") or ()),
        rules=list(raw.get("x-kubernetes-validations") or ()),
    )
    if "pattern" in raw:
        node.pattern = re2_compile(raw["pattern"], f"{where}.pattern")
        node.pattern_text = raw["pattern"]
    _compile_subschemas(node, raw, where)
    if node.embedded:
        _add_resource_fields(node)
    _derive_shortcuts(node)
    if node.type in ("string", "boolean") and _checks_only_type(node):
        node.plain_leaf = node.type
    return node


def _compile_subschemas(node: Schema, raw: dict[str, Any], where: str) -> None:
    if "properties" in raw:
        node.properties = {
            name: _compile(sub, f"{where}.properties[{name}]")
            for name, sub in (raw["properties"] or {}).items()
        }
    additional = raw.get("additionalProperties")
    if isinstance(additional, dict):
        node.additional = _compile(additional, f"{where}.additionalProperties")
    elif additional is True:
        node.additional = Schema(preserve_unknown=True)
    if isinstance(raw.get("items"), dict):
        node.items = _compile(raw["items"], f"{where}.items")
    for key, target in (("anyOf", node.any_of), ("allOf", node.all_of), ("oneOf", node.one_of)):
        for i, sub in enumerate(raw.get(key) or ()):
            target.append(_compile(sub, f"{where}.{key}[{i}]"))
    if isinstance(raw.get("not"), dict):
        node.not_ = _compile(raw["not"], f"{where}.not")


def _add_resource_fields(node: Schema) -> None:
    # An embedded resource keeps apiVersion, kind and metadata even without a schema.
    node.properties = dict(node.properties or {})
    for name in ("apiVersion", "kind"):
        node.properties.setdefault(name, Schema(type="string"))
    node.properties.setdefault("metadata", Schema(type="object", preserve_unknown=True))


def _derive_shortcuts(node: Schema) -> None:
    """has_rules, defaulted and cel_identity, from the node and its compiled subschemas."""
    kids = [k for k in (*(node.properties or {}).values(), node.additional, node.items) if k]
    node.has_rules = bool(node.rules) or any(k.has_rules for k in kids)
    node.defaulted = tuple(
        (name, sub) for name, sub in (node.properties or {}).items() if sub.default is not _MISSING
    )
    node.cel_identity = (
        node.type != "number"
        and all(is_plain(n) for n in node.properties or {})
        and all(k.cel_identity for k in kids)
    )


def _checks_only_type(node: Schema) -> bool:
    """Whether validating the node checks its type and nothing else."""
    return (
        not node.nullable
        and node.enum is None
        and node.pattern is None
        and node.min_length is None
        and node.max_length is None
        and not (node.any_of or node.all_of or node.one_of or node.not_)
    )


# Kubernetes patterns are Go RE2. Python's re reads the same syntax with three differences
# that matter here: ``$`` also matches before a trailing newline (RE2: only at the end),
# ``\d``/``\w``/``\s`` are Unicode-aware (RE2: ASCII), and re accepts lookarounds and
# backreferences, which the API server refuses when the CRD is created.
_NOT_RE2 = re.compile(r"\(\?<?[=!]|\\[1-9]")


def re2_compile(text: str, where: str) -> re.Pattern[str]:
    """Compile an RE2 pattern with Python's re, keeping RE2's meaning."""
    if _NOT_RE2.search(text):
        raise SchemaError(f"{where}: {text!r} is not RE2 syntax (lookaround or backreference)")
    try:
        return re.compile(_anchor_end(text), re.ASCII)
    except re.error as e:
        raise SchemaError(f"{where}: cannot compile {text!r}: {e}") from None


def _anchor_end(text: str) -> str:
    # Rewrite each unescaped ``$`` outside a character class as ``\Z``.
    out: list[str] = []
    in_class = escaped = False
    for ch in text:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "$":
            out.append("\\Z")
            continue
        out.append(ch)
    return "".join(out)


# --- prune and default ---------------------------------------------------------------------


def prune_and_default(schema: Schema, obj: Any) -> tuple[Any, list[FieldError]]:
    """A pruned and defaulted copy of ``obj`` and the unknown fields that were dropped."""
    errors: list[FieldError] = []
    return _prune(schema, obj, (), errors), errors


def _prune(schema: Schema, value: Any, path: Path, errors: list[FieldError]) -> Any:
    if isinstance(value, dict):
        return _prune_object(schema, value, path, errors)
    if isinstance(value, list):
        items = schema.items
        if items is None:
            return copy_json(value)
        return [_prune(items, v, (*path, i), errors) for i, v in enumerate(value)]
    if isinstance(value, float) and (schema.type == "integer" or schema.int_or_string):
        return int(value) if value.is_integer() else value
    if isinstance(value, int) and not isinstance(value, bool) and schema.type == "number":
        return float(value)
    return value


def _prune_object(
    schema: Schema, value: dict[str, Any], path: Path, errors: list[FieldError]
) -> dict[str, Any]:
    props = schema.properties
    additional = schema.additional
    out: dict[str, Any] = {}
    for key, sub in value.items():
        if props is not None and key in props:
            child = props[key]
        elif additional is not None:
            child = additional
        else:
            _unknown(schema, key, sub, path, out, errors)
            continue
        kind = type(sub)
        if kind is str or kind is bool:
            out[key] = sub
            continue
        if sub is None and not child.nullable:
            # PruneNonNullableNullsWithoutDefaults; a default below replaces the null.
            continue
        child_path = (*path, Key(key) if child is additional else key)
        out[key] = _prune(child, sub, child_path, errors)
    for key, child in schema.defaulted:
        if key not in out:
            # A default is itself defaulted below, as structural defaulting recurses into it.
            out[key] = _prune(child, copy_json(child.default), (*path, key), [])
    return out


def _unknown(
    schema: Schema, key: str, sub: Any, path: Path, out: dict[str, Any], errors: list[FieldError]
) -> None:
    """A field the schema does not declare: kept where unknown fields are preserved (or the
    schema declares no object), else dropped as an unknown-field error."""
    if schema.preserve_unknown or (schema.properties is None and schema.type != "object"):
        out[key] = copy_json(sub)
    else:
        errors.append(FieldError(render_path((*path, key)), ErrorType.UNKNOWN_FIELD, OMIT))


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON-shaped value (much faster than copy.deepcopy)."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value


# --- validate ------------------------------------------------------------------------------

_TYPE_NAMES = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
}


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _type_ok(expected: str, value: Any) -> bool:
    kind = type(value)
    if expected == "object":
        return kind is dict
    if expected == "array":
        return kind is list
    if expected == "string":
        return kind is str
    if expected == "integer":
        return kind is int or (kind is float and value.is_integer())
    if expected == "number":
        return kind is int or kind is float
    if expected == "boolean":
        return kind is bool
    return True


def validate(schema: Schema, obj: Any, path: Path = ()) -> list[FieldError]:
    """Every OpenAPI and list-type error of ``obj`` (already pruned and defaulted)."""
    errors: list[FieldError] = []
    _validate(schema, obj, path, errors)
    return errors


def type_invalid(path: Path, expected: str, value: Any) -> FieldError:
    """A value not of the ``expected`` type, as kube-openapi words it."""
    name, actual = render_path(path), json_type(value)
    message = f'{name} in body must be of type {expected}: "{actual}"'
    return FieldError(name, ErrorType.TYPE_INVALID, actual, message)


def _mistyped(schema: Schema, value: Any, path: Path) -> FieldError | None:
    """The error of a value not of the schema's type: null where it is not nullable, an
    int-or-string that is neither."""
    expected = schema.type
    if value is None:
        if schema.nullable or not (expected or schema.int_or_string):
            return None
        return type_invalid(path, expected or "integer,string", value)
    if expected and not _type_ok(expected, value):
        return type_invalid(path, expected, value)
    if schema.int_or_string and not expected and not (type(value) is int or isinstance(value, str)):
        return type_invalid(path, "integer,string", value)
    return None


def _validate(schema: Schema, value: Any, path: Path, errors: list[FieldError]) -> None:
    mistyped = _mistyped(schema, value, path)
    if mistyped is not None:
        errors.append(mistyped)
    if mistyped is not None or value is None:
        return
    if schema.enum is not None and not any(_same(value, e) for e in schema.enum):
        errors.append(_not_supported(schema.enum, value, path))

    check = _VALIDATE_KIND.get(type(value))
    if check is not None:
        check(schema, value, path, errors)

    if schema.any_of or schema.all_of or schema.one_of or schema.not_:
        _validate_composition(schema, value, path, errors)


def _not_supported(enum: list[Any], value: Any, path: Path) -> FieldError:
    allowed = ", ".join(f'"{e}"' if isinstance(e, str) else f'"{_json(e)}"' for e in enum)
    detail = f"supported values: {allowed}"
    return FieldError(render_path(path), ErrorType.NOT_SUPPORTED, value, detail)


def _same(a: Any, b: Any) -> bool:
    return (type(a) is type(b) and a == b) or (
        isinstance(a, int | float)
        and isinstance(b, int | float)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
        and a == b
    )


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _validate_string(schema: Schema, value: str, path: Path, errors: list[FieldError]) -> None:
    if schema.max_length is not None and len(value) > schema.max_length:
        detail = f"may not be more than {counted(schema.max_length, 'byte')}"
        errors.append(FieldError(render_path(path), ErrorType.TOO_LONG, value, detail))
    if schema.min_length is not None and len(value) < schema.min_length:
        errors.append(_invalid(path, value, f"should be at least {schema.min_length} chars long"))
    if schema.pattern is not None and schema.pattern.search(value) is None:
        errors.append(_invalid(path, value, f"should match '{schema.pattern_text}'"))


def _number_text(n: float) -> str:
    return str(int(n)) if isinstance(n, float) and n.is_integer() else str(n)


def _validate_number(schema: Schema, value: float, path: Path, errors: list[FieldError]) -> None:
    if schema.minimum is not None:
        low = schema.minimum
        if value < low or (schema.exclusive_minimum and value == low):
            op = "greater than" if schema.exclusive_minimum else "greater than or equal to"
            errors.append(_invalid(path, value, f"should be {op} {_number_text(low)}"))
    if schema.maximum is not None:
        high = schema.maximum
        if value > high or (schema.exclusive_maximum and value == high):
            op = "less than" if schema.exclusive_maximum else "less than or equal to"
            errors.append(_invalid(path, value, f"should be {op} {_number_text(high)}"))


def _check_count(
    n: int, low: int | None, high: int | None, noun: str, path: Path, errors: list[FieldError]
) -> None:
    """minItems/maxItems and minProperties/maxProperties, worded as the API server words them."""
    if high is not None and n > high:
        detail = f"must have at most {counted(high, 'item')}"
        errors.append(FieldError(render_path(path), ErrorType.TOO_MANY, n, detail))
    if low is not None and n < low:
        errors.append(_invalid(path, n, f"should have at least {low} {noun}"))


def _invalid(path: Path, value: Any, phrase: str) -> FieldError:
    """The OpenAPI validator's 'Invalid value' errors: '<field> in body <phrase>'."""
    name = render_path(path)
    return FieldError(name, ErrorType.INVALID, value, f"{name} in body {phrase}")


def _validate_array(schema: Schema, value: list[Any], path: Path, errors: list[FieldError]) -> None:
    _check_count(len(value), schema.min_items, schema.max_items, "items", path, errors)
    items = schema.items
    if items is not None:
        for i, item in enumerate(value):
            _validate(items, item, (*path, i), errors)
    if schema.list_type == "map":
        _unique_map(schema, value, path, errors)
    elif schema.list_type == "set":
        _unique_set(value, path, errors)


def _unique_map(schema: Schema, value: list[Any], path: Path, errors: list[FieldError]) -> None:
    keys = schema.list_map_keys
    item_schema = schema.items
    key_defaults = {
        k: item_schema.properties[k].default
        for k in keys
        if item_schema is not None
        and item_schema.properties
        and k in item_schema.properties
        and item_schema.properties[k].default is not _MISSING
    }
    seen: set[Any] = set()
    for i, item in enumerate(value):
        if item is None:
            continue
        if not isinstance(item, dict):
            detail = "must be an object for an array of list-type map"
            errors.append(FieldError(render_path((*path, i)), ErrorType.INVALID, item, detail))
            return
        entry = {k: item.get(k, key_defaults.get(k)) for k in keys}
        identity = _identity(tuple(entry.values()))
        if identity in seen:
            errors.append(FieldError(render_path((*path, i)), ErrorType.DUPLICATE, entry))
        seen.add(identity)


def _identity(value: Any) -> Any:
    """A hashable stand-in for a JSON value; 1 and true stay distinct."""
    if isinstance(value, tuple):
        return tuple(_identity(v) for v in value)
    if isinstance(value, dict | list):
        return ("json", _json(value))
    if isinstance(value, bool) or not isinstance(value, int | float):
        return (type(value).__name__, value)
    return ("number", value)


def _unique_set(value: list[Any], path: Path, errors: list[FieldError]) -> None:
    seen: set[Any] = set()
    for i, item in enumerate(value):
        identity = _identity(item)
        if identity in seen:
            errors.append(FieldError(render_path((*path, i)), ErrorType.DUPLICATE, item))
        seen.add(identity)


def _validate_object(
    schema: Schema, value: dict[str, Any], path: Path, errors: list[FieldError]
) -> None:
    _check_count(
        len(value), schema.min_properties, schema.max_properties, "properties", path, errors
    )
    for key in schema.required:
        if key not in value:
            errors.append(FieldError(render_path((*path, key)), ErrorType.REQUIRED))
    props = schema.properties
    additional = schema.additional
    for key, sub in value.items():
        if props is not None and key in props:
            child = props[key]
            leaf = child.plain_leaf
            if leaf and (type(sub) is str if leaf == "string" else type(sub) is bool):
                continue
            _validate(child, sub, (*path, key), errors)
        elif additional is not None:
            _validate(additional, sub, (*path, Key(key)), errors)


_VALIDATE_KIND: dict[type, Callable[..., None]] = {
    str: _validate_string,
    int: _validate_number,
    float: _validate_number,
    list: _validate_array,
    dict: _validate_object,
}
"""What a value is checked for beyond its type, by its exact type (a bool: nothing more)."""


def _validate_composition(schema: Schema, value: Any, path: Path, errors: list[FieldError]) -> None:
    # Structural schemas allow only value validations under these keywords; the int-or-string
    # anyOf is covered by the type check above.
    for sub in schema.all_of:
        _validate(sub, value, path, errors)
    if (
        schema.any_of
        and not schema.int_or_string
        and not any(not validate(sub, value, path) for sub in schema.any_of)
    ):
        errors.append(_invalid(path, value, "must validate at least one schema (anyOf)"))
    if schema.one_of:
        matches = sum(1 for sub in schema.one_of if not validate(sub, value, path))
        if matches != 1:
            errors.append(_invalid(path, value, "must validate one and only one schema (oneOf)"))
    if schema.not_ is not None and not validate(schema.not_, value, path):
        errors.append(_invalid(path, value, "must not validate the schema (not)"))
