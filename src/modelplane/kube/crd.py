"""Load CustomResourceDefinitions and Crossplane CompositeResourceDefinitions.

``load_definitions(paths)`` reads YAML files (or every ``*.yaml``/``*.yml`` below a directory;
multi-document streams welcome) and returns one ``Definition`` per CRD (``apiextensions.k8s.io/v1``)
or XRD (``apiextensions.crossplane.io/v1`` or ``v2``); other documents are ignored.

An XRD is turned into the CRD Crossplane would generate for its composite resource: the XRD's
schema with Crossplane's own fields added (see docs/design/validation.md). Schemas are compiled on
first use of a version; ``Definition.compile()`` compiles every served version and every CEL rule
now, raising ``DefinitionError`` for a bad pattern or a rule that does not compile.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from modelplane.kube import objects
from modelplane.kube.cel.schematypes import check_rules
from modelplane.kube.rules import RuleCompileError, compile_rules
from modelplane.kube.schema import Schema, SchemaError
from modelplane.manifests import yaml_files

CRD_API = "apiextensions.k8s.io/v1"
XRD_APIS = ("apiextensions.crossplane.io/v1", "apiextensions.crossplane.io/v2")


class DefinitionError(ValueError):
    """A definition that cannot be loaded: unreadable, malformed, or with a bad rule."""


@dataclass
class Version:
    name: str
    served: bool
    raw_schema: dict[str, Any]
    source: str
    _schema: Schema | None = None

    def schema(self) -> Schema:
        """The compiled structural schema, with every CEL rule compiled (once)."""
        if self._schema is None:
            where = f"{self.source}: version {self.name}"
            try:
                schema = Schema.of(self.raw_schema)
                compile_rules(schema)
            except (SchemaError, RuleCompileError) as e:
                raise DefinitionError(f"{where}: {e}") from None
            # The API server also type-checks each rule against its schema when the CRD is
            # created: a rule naming a field the schema lacks never reaches an object.
            failures = check_rules(schema)
            if failures:
                raise DefinitionError(f"{where}: {'; '.join(failures)}")
            self._schema = schema
        return self._schema


@dataclass
class Definition:
    group: str
    kind: str
    plural: str
    namespaced: bool
    versions: dict[str, Version] = field(default_factory=dict)
    source: str = ""
    # The document that declared it: CustomResourceDefinition or CompositeResourceDefinition.
    kind_of_definition: str = "CustomResourceDefinition"

    def compile(self) -> None:
        for version in self.versions.values():
            if version.served:
                version.schema()


def _read(path: Path) -> list[Any]:
    try:
        with path.open("rb") as f:
            return [d for d in yaml.load_all(f, Loader=_LOADER) if d is not None]
    except OSError as e:
        raise DefinitionError(f"{path}: cannot read: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise DefinitionError(f"{path}: not YAML: {e}") from None


_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# Parsed definitions per file version: the upstream CRDs take ~0.6 s to parse, and every test
# module or render call that asks for them again shares the parse (and the compiled schemas).
_LOADED: dict[tuple[str, int, int], list[Definition]] = {}


def load_definitions(paths: Iterable[Path]) -> list[Definition]:
    out: list[Definition] = []
    for path in yaml_files(paths):
        try:
            stat = path.stat()
        except OSError as e:
            raise DefinitionError(f"{path}: cannot read: {e.strerror}") from None
        key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
        found = _LOADED.get(key)
        if found is None:
            found = [d for d in (definition_of(doc, str(path)) for doc in _read(path)) if d]
            _LOADED[key] = found
        out.extend(found)
    return out


def definition_of(doc: Any, source: str = "<definition>") -> Definition | None:
    """The definition a CRD or XRD document declares, or None for any other document."""
    if not isinstance(doc, dict):
        return None
    api, kind = doc.get("apiVersion"), doc.get("kind")
    if api == CRD_API and kind == "CustomResourceDefinition":
        return _definition(doc, source, None)
    if api in XRD_APIS and kind == "CompositeResourceDefinition":
        return _definition(doc, source, "LegacyCluster" if api.endswith("/v1") else "Namespaced")
    return None


def _spec(doc: dict[str, Any], source: str) -> dict[str, Any]:
    spec = doc.get("spec")
    name = objects.dig(doc, "metadata", "name", default="?")
    where = f"{source}: {doc.get('kind')} {name}"
    if not isinstance(spec, dict):
        raise DefinitionError(f"{where}: spec: Required value")
    for key in ("group", "names", "versions"):
        if key not in spec:
            raise DefinitionError(f"{where}: spec.{key}: Required value")
    names = spec["names"]
    if not isinstance(names, dict) or "kind" not in names:
        raise DefinitionError(f"{where}: spec.names.kind: Required value")
    return spec


def _definition(doc: dict[str, Any], source: str, xrd_scope: str | None) -> Definition:
    """A CRD's definition or, given an XRD's default scope (``xrd_scope``), the CRD Crossplane
    generates for the XRD."""
    spec = _spec(doc, source)
    names = spec["names"]
    scope = spec.get("scope", xrd_scope or "Namespaced")
    definition = Definition(
        group=spec["group"],
        kind=names["kind"],
        plural=names.get("plural", ""),
        namespaced=scope == "Namespaced",
        source=source,
        kind_of_definition=doc["kind"],
    )
    where = f"{source}: {names['kind']}"
    for v in spec["versions"]:
        raw = objects.dig(v, "schema", "openAPIV3Schema")
        if xrd_scope is not None:
            raw = composite_schema(raw or {}, scope)
        elif not raw:
            raw = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        definition.versions[v["name"]] = Version(v["name"], bool(v.get("served", True)), raw, where)
    return definition


# --- the CRD Crossplane generates for an XR ------------------------------------------------

_STRING = {"type": "string"}
_REF = {"type": "object", "required": ["name"], "properties": {"name": _STRING}}
_SELECTOR = {
    "type": "object",
    "required": ["matchLabels"],
    "properties": {"matchLabels": {"type": "object", "additionalProperties": _STRING}},
}
_UPDATE_POLICY = {"type": "string", "enum": ["Automatic", "Manual"], "default": "Automatic"}
_ANY_OBJECT = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def _crossplane_spec_props(scope: str) -> dict[str, Any]:
    refs: dict[str, Any] = {
        "type": "array",
        "x-kubernetes-list-type": "atomic",
        "items": {
            "type": "object",
            "required": ["apiVersion", "kind"],
            "properties": {
                "apiVersion": _STRING,
                "kind": _STRING,
                "name": _STRING,
                **({"namespace": _STRING} if scope != "Namespaced" else {}),
            },
        },
    }
    props: dict[str, Any] = {
        "compositionRef": _REF,
        "compositionSelector": _SELECTOR,
        "compositionRevisionRef": _REF,
        "compositionRevisionSelector": _SELECTOR,
        "compositionUpdatePolicy": _UPDATE_POLICY,
        "resourceRefs": refs,
    }
    if scope == "LegacyCluster":
        props["claimRef"] = {
            "type": "object",
            "required": ["apiVersion", "kind", "namespace", "name"],
            "properties": {k: _STRING for k in ("apiVersion", "kind", "namespace", "name")},
        }
        props["writeConnectionSecretToRef"] = {
            "type": "object",
            "required": ["name", "namespace"],
            "properties": {"name": _STRING, "namespace": _STRING},
        }
        props["publishConnectionDetailsTo"] = _ANY_OBJECT
        props["environmentConfigRefs"] = {"type": "array", "items": _ANY_OBJECT}
    return props


_CONDITIONS = {
    "type": "array",
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["type"],
    "items": {
        "type": "object",
        "required": ["lastTransitionTime", "reason", "status", "type"],
        "properties": {
            "lastTransitionTime": {"type": "string", "format": "date-time"},
            "message": _STRING,
            "observedGeneration": {"type": "integer", "format": "int64"},
            "reason": _STRING,
            "status": _STRING,
            "type": _STRING,
        },
    },
}


def composite_schema(xr: dict[str, Any], scope: str) -> dict[str, Any]:
    """The generated CRD's ``openAPIV3Schema`` for an XR schema of the given scope."""
    xr = copy.deepcopy(xr)
    props = xr.get("properties") or {}
    spec = props.get("spec") or {"type": "object"}
    spec.setdefault("type", "object")
    spec_props = spec.setdefault("properties", {})
    if scope == "LegacyCluster":
        spec_props.update(_crossplane_spec_props(scope))
    else:
        spec_props["crossplane"] = {"type": "object", "properties": _crossplane_spec_props(scope)}
    status = props.get("status") or {"type": "object"}
    status.setdefault("type", "object")
    status_props = status.setdefault("properties", {})
    status_props["conditions"] = _CONDITIONS
    status_props["crossplane"] = _ANY_OBJECT
    if scope == "LegacyCluster":
        status_props["connectionDetails"] = {
            "type": "object",
            "properties": {"lastPublishedTime": {"type": "string", "format": "date-time"}},
        }
    root: dict[str, Any] = {
        "type": "object",
        "required": ["spec"],
        "properties": {
            "apiVersion": _STRING,
            "kind": _STRING,
            "metadata": {
                "type": "object",
                "properties": {"name": {"type": "string", "maxLength": _name_length(props)}},
            },
            "spec": spec,
            "status": status,
        },
    }
    if "description" in xr:
        root["description"] = xr["description"]
    return root


COMPOSITE_NAME_LENGTH = 63
"""Crossplane caps a composite's name at 63 characters, so that it fits the
``crossplane.io/composite`` label every composed resource carries (crossplane-runtime v2.3.4
``pkg/xcrd/crd.go``: ``maxCompositeNameLength``); an XRD may only lower it."""


def _name_length(props: dict[str, Any]) -> int:
    length = objects.dig(props, "metadata", "properties", "name", "maxLength")
    return min(length, COMPOSITE_NAME_LENGTH) if isinstance(length, int) else COMPOSITE_NAME_LENGTH
