"""Offline admission: what the API server does to a custom resource on create.

``Admission.from_paths(paths)`` loads CRDs and XRDs (files or directories);
``Admission.default()`` loads everything under the project's ``apis/`` (cached).
``admission.admit(obj)`` returns ``Admitted(object, errors)``: the pruned and defaulted copy and
every error, in the API server's order: unknown fields (strict field validation), ObjectMeta,
the structural schema (OpenAPI and list-type checks), then the CEL rules on the defaulted
object. As on the API server, CEL rules are skipped when a blocking error (a wrong type, a
missing required field, an unsupported enum value, a value too long, too many items) was found,
and one error says so.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modelplane.apis import apis_dir
from modelplane.kube import rules
from modelplane.kube.crd import Definition, Version, load_definitions
from modelplane.kube.errors import ErrorType, FieldError
from modelplane.kube.lru import Lru
from modelplane.kube.rules import evaluate
from modelplane.kube.schema import Schema, copy_json, prune_and_default, type_invalid, validate


class UnknownKindError(KeyError):
    """An object whose apiVersion and kind no loaded definition serves."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Admitted:
    """The outcome of admitting one object."""

    object: dict[str, Any]
    errors: list[FieldError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """What the object is admitted despite, as ``path: message`` (the API server's warnings)."""

    @property
    def ok(self) -> bool:
        return not self.errors


_BLOCKING = {
    ErrorType.NOT_SUPPORTED,
    ErrorType.REQUIRED,
    ErrorType.TOO_LONG,
    ErrorType.TOO_MANY,
    ErrorType.TYPE_INVALID,
}
_NOT_CHECKED = FieldError(
    "<nil>",
    ErrorType.INVALID,
    None,
    "some validation rules were not checked because the object was invalid; "
    "correct the existing errors to complete validation",
)


class Admission:
    """Admission for every kind of the given definitions."""

    def __init__(self, definitions: Iterable[Definition]) -> None:
        self._kinds = {(d.group, d.kind): d for d in definitions}

    @classmethod
    def from_paths(cls, paths: Iterable[Path | str]) -> Admission:
        return cls(load_definitions(Path(p) for p in paths))

    @classmethod
    @functools.cache
    def default(cls) -> Admission:
        return cls.from_paths([apis_dir()])

    def definitions(self) -> list[Definition]:
        return list(self._kinds.values())

    def add(self, definitions: Iterable[Definition]) -> Admission:
        """A new Admission with these definitions too (they win on a clash)."""
        return Admission([*self._kinds.values(), *definitions])

    def version(self, api_version: str, kind: str) -> Version | None:
        group, _, version = api_version.rpartition("/")
        definition = self._kinds.get((group, kind))
        if definition is None:
            return None
        found = definition.versions.get(version)
        return found if found is not None and found.served else None

    def knows(self, api_version: str, kind: str) -> bool:
        return self.version(api_version, kind) is not None

    def knows_kind(self, api_version: str, kind: str) -> bool:
        """True when the group defines ``kind`` at all, served in this version or not."""
        return (api_version.rpartition("/")[0], kind) in self._kinds

    def admit(self, obj: dict[str, Any]) -> Admitted:
        """Prune, default and validate ``obj``; raises ``UnknownKindError`` for unknown kinds."""
        if not isinstance(obj, dict):
            raise TypeError(f"a Kubernetes object is a mapping, not {type(obj).__name__}")
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        version = (
            self.version(api_version, kind)
            if isinstance(api_version, str) and isinstance(kind, str)
            else None
        )
        if version is None:
            message = f"no served definition for apiVersion {api_version!r} kind {kind!r}"
            raise UnknownKindError(message)
        return admit(version.schema(), obj)


# Whole admissions, memoised by object content: render runs compositions to a fixed point and a
# reconcile loop sees the same XR again and again. Bounded; the schema is held by the entry, so
# its id cannot be reused while the entry lives.
_RESULTS: Lru[tuple[Schema, str, list[FieldError]]] = Lru(256)


def admit(schema: Schema, obj: dict[str, Any]) -> Admitted:
    """Admission of ``obj`` against one compiled version schema."""
    if not rules.memoise:
        return _admit(schema, obj)
    try:
        text = json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):
        # Not plain JSON (a datetime, a NaN): admit it without memoising.
        return _admit(schema, obj)
    key = (id(schema), text)
    hit = _RESULTS.get(key)
    if hit is not None and hit[0] is schema:
        return Admitted(json.loads(hit[1]), list(hit[2]))
    admitted = _admit(schema, obj)
    _RESULTS.put(key, (schema, json.dumps(admitted.object), list(admitted.errors)))
    return admitted


def _admit(schema: Schema, obj: dict[str, Any]) -> Admitted:
    # apiVersion, kind and metadata belong to every object, whatever the schema declares.
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
    pruned, errors = prune_and_default(schema, body)
    metadata, meta_errors = _object_meta(obj.get("metadata"))
    head = {k: copy_json(obj[k]) for k in ("apiVersion", "kind") if k in obj}
    result = {**head, "metadata": metadata, **pruned}
    errors += meta_errors
    # A CRD may constrain metadata.name and generateName (only those); its rules see only them.
    visible = {k: metadata[k] for k in ("name", "generateName") if isinstance(metadata.get(k), str)}
    errors += validate(schema, {**pruned, "metadata": visible})
    if any(e.type in _BLOCKING for e in errors):
        errors.append(_NOT_CHECKED)
    else:
        errors += evaluate(schema, {**head, **pruned, "metadata": visible})
    return Admitted(result, errors)


# --- ObjectMeta ----------------------------------------------------------------------------

_META_FIELDS = {
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
}
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def subdomain_errors(path: str, value: str) -> list[FieldError]:
    """The API server's errors for a name that must be a DNS subdomain (an object's name, so
    anything naming one: a DeviceClass a DRA request names, say)."""
    if len(value) > 253:
        return [FieldError(path, ErrorType.INVALID, value, "must be no more than 253 characters")]
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        return [FieldError(path, ErrorType.INVALID, value, _SUBDOMAIN_MESSAGE)]
    return []


def _object_meta(meta: Any) -> tuple[dict[str, Any], list[FieldError]]:
    errors: list[FieldError] = []
    if not isinstance(meta, dict):
        meta = {}
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if key in _META_FIELDS:
            out[key] = copy_json(value)
        else:
            errors.append(FieldError(f"metadata.{key}", ErrorType.UNKNOWN_FIELD))
    errors += _string_errors(out)
    name = out.get("name")
    if not name and not out.get("generateName"):
        detail = "name or generateName is required"
        errors.append(FieldError("metadata.name", ErrorType.REQUIRED, detail=detail))
    elif isinstance(name, str) and name:
        errors += subdomain_errors("metadata.name", name)
    for key in ("labels", "annotations"):
        value = out.get(key)
        if value is not None and not (
            isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
        ):
            detail = f"metadata.{key} must be a map of strings"
            errors.append(FieldError(f"metadata.{key}", ErrorType.TYPE_INVALID, "object", detail))
    return out, errors


def _string_errors(meta: dict[str, Any]) -> list[FieldError]:
    """A name, generateName or namespace that is not a string: the API server decodes metadata
    into ObjectMeta and refuses it; admitted, a composer would name objects after ``5``."""
    return [
        type_invalid(("metadata", key), "string", meta[key])
        for key in ("name", "generateName", "namespace")
        if meta.get(key) is not None and not isinstance(meta[key], str)
    ]
