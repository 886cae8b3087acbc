"""Field errors printed the way the Kubernetes API server prints them.

``str(FieldError)`` follows apimachinery's ``field.Error.Error()``:
``spec.engines[0]: Invalid value: "object": <detail>``. Values are rendered as Go's ``%v`` /
``%q`` / ``%#v`` would render the decoded JSON value, so messages read the same as kubectl's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from typing import Any


class ErrorType(Enum):
    """apimachinery's field.ErrorType; the value is Go's constant, ``text`` what is printed."""

    NOT_FOUND = "FieldValueNotFound"
    REQUIRED = "FieldValueRequired"
    DUPLICATE = "FieldValueDuplicate"
    INVALID = "FieldValueInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    INTERNAL = "InternalError"
    TYPE_INVALID = "FieldValueTypeInvalid"
    # Not a field.Error type: strict field validation reports pruned fields as
    # `unknown field "spec.foo"`; it shares the list so every problem is reported together.
    UNKNOWN_FIELD = "UnknownField"

    @property
    def text(self) -> str:
        return _TEXT[self]


_TEXT = {
    ErrorType.NOT_FOUND: "Not found",
    ErrorType.REQUIRED: "Required value",
    ErrorType.DUPLICATE: "Duplicate value",
    ErrorType.INVALID: "Invalid value",
    ErrorType.NOT_SUPPORTED: "Unsupported value",
    ErrorType.FORBIDDEN: "Forbidden",
    ErrorType.TOO_LONG: "Too long",
    ErrorType.TOO_MANY: "Too many",
    ErrorType.INTERNAL: "Internal error",
    ErrorType.TYPE_INVALID: "Invalid value",
    ErrorType.UNKNOWN_FIELD: "Unknown field",
}


class _Omit:
    def __repr__(self) -> str:
        return "OMIT"


OMIT: Any = _Omit()

# Types whose error bodies never show the bad value (apimachinery's ErrorBody).
_VALUELESS = {ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL}


@dataclass(frozen=True)
class FieldError:
    """One problem with one field: ``path`` is rendered (``spec.engines[0].name``)."""

    path: str
    type: ErrorType
    value: Any = OMIT
    detail: str = ""

    def body(self) -> str:
        if self.type is ErrorType.UNKNOWN_FIELD:
            return f"unknown field {go_quote(self.path)}"
        if self.type in _VALUELESS or self.value is OMIT:
            text = self.type.text
        else:
            text = f"{self.type.text}: {go_value(self.value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def __str__(self) -> str:
        if self.type is ErrorType.UNKNOWN_FIELD:
            return self.body()
        return f"{self.path}: {self.body()}"


def go_quote(text: str) -> str:
    """Go's ``%q`` for the strings that appear in manifests."""
    return json.dumps(text, ensure_ascii=False)


def go_value(value: Any) -> str:
    """How ``field.Error`` prints a bad value: ``%v`` for scalars, ``%q`` strings, ``%#v`` else."""
    # As inside a ``%#v``, but for nil, which field.Error prints as a quoted "null".
    return '"null"' if value is None else _inner(value)


def go_syntax(value: Any) -> str:
    """Go's ``%#v`` of a decoded JSON value (``map[string]interface {}{"name":"a"}``)."""
    if isinstance(value, dict):
        items = ", ".join(f"{go_quote(str(k))}:{_inner(v)}" for k, v in sorted(value.items()))
        return "map[string]interface {}{" + items + "}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(_inner(v) for v in value) + "}"
    return _inner(value)


def _inner(value: Any) -> str:
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else str(value)
    if isinstance(value, str):
        return go_quote(value)
    return go_syntax(value)


# --- paths ---------------------------------------------------------------------------------


class Key(str):
    """A map key inside a path (additionalProperties), as opposed to a declared property."""

    __slots__ = ()


Path = tuple[str | int, ...]


def render_path(path: Path, keys_in_brackets: bool = False) -> str:
    """``("spec", "engines", 0, "name")`` → ``spec.engines[0].name``.

    CEL errors print map keys as ``[key]`` (``field.Path.Key``); the OpenAPI validator prints
    ``.key``. An empty path is the root, which apimachinery prints as ``<nil>``.
    """
    out: list[str] = []
    for part in path:
        if isinstance(part, int) or (keys_in_brackets and isinstance(part, Key)):
            out.append(f"[{part}]")
        elif out:
            out.append(f".{part}")
        else:
            out.append(part)
    return "".join(out) or "<nil>"
