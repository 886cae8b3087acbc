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
from modelplane.kube.objects import Obj

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
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
        return out + _item_constraints(node, raw if isinstance(raw, dict) else {})

    def children(self) -> list[Field]:
        """The fields directly below this one (an array's entries' and a map's values' too)."""
        out = []
        for holder, prefix in _holders(self.node, self.path):
            required = set(holder.get("required") or ())
            for name, child in (holder.get("properties") or {}).items():
                if not prefix and name in _OBJECT_META:
                    continue
                path = f"{prefix}.{name}" if prefix else name
                out.append(Field(path, child, name in required))
        return out

    def walk(self) -> Iterator[Field]:
        """Every field below this one, depth first in schema order."""
        for child in self.children():
            yield child
            yield from child.walk()


def _item_constraints(node: Obj, items: Obj) -> list[str]:
    """An array's entries' enum, then the validation rules of the field and of its entries:
    rules on an array's items are the array's entries' rules, shown with the array."""
    out = []
    if items.get("enum"):
        out.append("each one of " + ", ".join(f"`{v}`" for v in items["enum"]))
    rules = [r for n in (node, items) for r in n.get("x-kubernetes-validations") or ()]
    return out + [str(rule.get("message") or rule.get("rule")) for rule in rules]


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
        spec = yaml.load(path.read_text(), Loader=_LOADER)["spec"]
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
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000)
    return text.strip().removesuffix("...").strip()


def one_line(text: str) -> str:
    return " ".join(text.split())


# --- `modelplane fields` ------------------------------------------------------------------


class FieldNotFoundError(LookupError):
    """A kind or field the definitions do not have; the message names it, one line."""


def find(query: str, known: list[Kind]) -> tuple[Kind, Field]:
    """The kind and field ``<kind>.<path>`` names (the kind alone names its root), as
    ``kubectl explain`` reads it: the kind by any of its names, any case; no ``[]`` needed."""
    called, _, path = query.partition(".")
    by_name = {name: k for k in known for name in sorted(k.names)}
    kind = by_name.get(called.lower())
    if kind is None:
        near = _near(called.lower(), sorted({k.kind.lower() for k in known}))
        raise FieldNotFoundError(f"no kind {called} in the API definitions{near}")
    if not path:
        return kind, kind.root
    wanted = bare(path)
    fields = list(kind.root.walk())
    found = next((f for f in fields if bare(f.path) == wanted), None)
    if found is None:
        near = _near(wanted, [bare(f.path) for f in fields]) or _siblings(kind, wanted, fields)
        raise FieldNotFoundError(f"{kind.kind} has no field {path}{near}")
    return kind, found


def _siblings(kind: Kind, wanted: str, fields: list[Field]) -> str:
    """The fields the nearest existing parent of ``wanted`` has, when nothing is spelt close."""
    parent = wanted.rpartition(".")[0]
    while parent and not any(bare(f.path) == parent for f in fields):
        parent = parent.rpartition(".")[0]
    holder = next((f for f in fields if bare(f.path) == parent), kind.root)
    names = ", ".join(c.name for c in holder.children())
    return f" ({parent or kind.kind} has {names})" if names else ""


def _near(wanted: str, candidates: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(wanted, candidates, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def describe(kind: Kind, field: Field) -> str:
    """One field as ``kubectl explain`` prints it: kind, field and type, description, default,
    constraints, then each field below it with its type and description."""
    lines = [f"KIND:     {kind.kind}", f"GROUP:    {kind.group}", f"VERSION:  {kind.version}", ""]
    if field.path:
        lines += [f"FIELD: {bare(field.path)} <{field.type}>", ""]
    if field.description:
        lines += ["DESCRIPTION:", *_wrapped(field.description), ""]
    if field.default:
        lines += [f"DEFAULT: {field.default}", ""]
    constraints = field.constraints()
    if constraints:
        lines += ["CONSTRAINTS:", *(f"    {c}" for c in constraints), ""]
    children = field.children()
    if children:
        lines.append("FIELDS:")
        for child in children:
            required = " -required-" if child.required else ""
            lines.append(f"  {child.name}\t<{child.type}>{required}")
            lines += [*_wrapped(child.description), ""] if child.description else []
    return "\n".join(lines).rstrip() + "\n"


def _wrapped(text: str) -> list[str]:
    import textwrap

    indent = "    "
    return textwrap.wrap(text, 80 - len(indent), initial_indent=indent, subsequent_indent=indent)
