"""Every field of every kind, read from the XRDs: what `modelplane fields` prints and what
tools/field_reference.py writes into docs/reference.md, so the two cannot say different things.

A field is named by its path from the object's root as the reference shows it: ``spec.replicas``;
an array's entries add ``[]`` (``spec.endpoints[].weight``) and a map's values ``.<key>``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from modelplane.apis import DEFINITION

Obj = dict[str, Any]
# Every object has them; the API server, not the XRD, defines them.
_OBJECT_META = ("apiVersion", "kind", "metadata")
_BOUNDS = (
    ("minimum", "min"),
    ("maximum", "max"),
    ("minLength", "min length"),
    ("maxLength", "max length"),
    ("minItems", "min items"),
    ("maxItems", "max items"),
    ("maxProperties", "max properties"),
)


@dataclass(frozen=True)
class Field:
    """One field's schema, and whether its parent requires it."""

    path: str
    node: Obj
    required: bool = False

    @property
    def name(self) -> str:
        return self.path.rpartition(".")[2]

    @property
    def type(self) -> str:
        node = self.node
        if node.get("x-kubernetes-int-or-string"):
            return "integer or string"
        kind = str(node.get("type", "any"))
        items = node.get("items")
        if kind == "array" and isinstance(items, dict):
            return f"array of {items.get('type', 'any')}"
        return kind

    @property
    def default(self) -> str:
        """The default as YAML flow text, or "" when there is none."""
        return flow(self.node["default"]) if "default" in self.node else ""

    @property
    def description(self) -> str:
        return one_line(str(self.node.get("description") or ""))

    def constraints(self) -> list[str]:
        """Required, enum, bounds, pattern and format, then each validation rule's message."""
        node = self.node
        out = ["required"] if self.required else []
        if "enum" in node:
            out.append("one of " + ", ".join(f"`{v}`" for v in node["enum"]))
        out += [f"{word} {node[key]}" for key, word in _BOUNDS if key in node]
        if "pattern" in node:
            out.append(f"pattern `{node['pattern']}`")
        if node.get("format"):
            out.append(f"format {node['format']}")
        raw = node.get("items")
        items: Obj = raw if isinstance(raw, dict) else {}
        if items.get("enum"):
            out.append("each one of " + ", ".join(f"`{v}`" for v in items["enum"]))
        # Rules on an array's items are the array's entries' rules: shown with the array.
        for rule in [
            *(node.get("x-kubernetes-validations") or ()),
            *(items.get("x-kubernetes-validations") or ()),
        ]:
            out.append(str(rule.get("message") or rule.get("rule")))
        return out

    def children(self) -> list[Field]:
        """The fields directly below this one (an array's entries' and a map's values' too)."""
        return [
            Field(path, child, name in required)
            for holder, prefix in _holders(self.node, self.path)
            for required in [set(holder.get("required") or ())]
            for name, child in (holder.get("properties") or {}).items()
            for path in [f"{prefix}.{name}" if prefix else name]
            if prefix or name not in _OBJECT_META
        ]

    def walk(self) -> Iterator[Field]:
        """Every field below this one, depth first in schema order."""
        for child in self.children():
            yield child
            yield from child.walk()


@dataclass(frozen=True)
class Kind:
    """One served version of a kind an XRD defines."""

    kind: str
    group: str
    version: str
    scope: str
    source: Path
    names: frozenset[str]
    """What a user may call it: the kind, its plural, singular and short names, lower case."""
    root: Field

    @property
    def description(self) -> str:
        return self.root.description


def kinds(apis: Path) -> list[Kind]:
    """Each served version of each kind under ``apis``, by definition path."""
    out = []
    for path in sorted(apis.glob(f"*/{DEFINITION}")):
        spec = yaml.safe_load(path.read_text())["spec"]
        names = spec["names"]
        called = {names["kind"], names.get("plural"), names.get("singular")}
        called |= set(names.get("shortNames") or ())
        for version in spec["versions"]:
            if not version.get("served", True):
                continue
            out.append(
                Kind(
                    kind=names["kind"],
                    group=spec["group"],
                    version=version["name"],
                    scope=spec.get("scope", "Namespaced"),
                    source=path,
                    names=frozenset(str(n).lower() for n in called if n),
                    root=Field("", version["schema"]["openAPIV3Schema"]),
                )
            )
    return out


def bare(path: str) -> str:
    """A path as a user writes it, as ``kubectl explain`` takes it: no ``[]``, no ``.<key>``."""
    return path.replace("[]", "").replace(".<key>", "")


def _holders(node: Obj, path: str) -> Iterator[tuple[Obj, str]]:
    """The schemas whose properties are a field's children, with the path prefix of each."""
    yield node, path
    items = node.get("items")
    if isinstance(items, dict):
        yield items, path + "[]"
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and extra.get("properties"):
        yield extra, path + ".<key>"


def flow(value: Any) -> str:
    return (
        yaml.safe_dump(value, default_flow_style=True, width=10_000)
        .strip()
        .removesuffix("...")
        .strip()
    )


def one_line(text: str) -> str:
    return " ".join(text.split())
