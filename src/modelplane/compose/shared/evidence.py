"""Evidence that something is gone: asked for by name and not there.

A label-selected list can come back empty or short (an informer that lags, a cache not synced
yet) and looks then exactly like every object deleted. So when a composite stands on an object
such a list no longer holds, it asks for that object by name (a required resource selected by
``matchName``) and keeps what it composed until the answer comes: Crossplane fetches the new
requirement and calls again within the same reconcile. Nothing back is the evidence; an object
back means the list lagged, and it is read as if listed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.apis import API_VERSION
from modelplane.composer import Inputs, Requirement
from modelplane.kube import objects
from modelplane.kube.objects import Obj


@dataclass(frozen=True)
class Lookup:
    """The answers to by-name requirements, by the name asked for."""

    requirements: dict[str, Requirement] = field(default_factory=dict)
    """The requirements to return, so the answers keep coming while they are needed."""
    found: dict[str, Obj] = field(default_factory=dict)
    gone: frozenset[str] = frozenset()
    pending: frozenset[str] = frozenset()
    """Asked for, not fetched yet: nothing is known of them."""
    kind: str = ""

    def asked(self) -> list[str]:
        """What a condition says is being read: each pending name, asked for by name."""
        return [f"{self.kind} {n} by name (not listed)" for n in sorted(self.pending)]


def requirement_name(prefix: str, name: str, namespace: str | None = None) -> str:
    return f"{prefix}/{namespace}/{name}" if namespace else f"{prefix}/{name}"


def look_up(
    inputs: Inputs,
    prefix: str,
    api_version: str,
    kind: str,
    names: Iterable[str],
    namespace: str | None = None,
) -> Lookup:
    """Ask for each of ``names`` by name (in ``namespace``, when the kind is namespaced) and
    sort what the request already answers."""
    requirements: dict[str, Requirement] = {}
    found: dict[str, Obj] = {}
    gone: set[str] = set()
    pending: set[str] = set()
    for name in sorted(set(names)):
        key = requirement_name(prefix, name, namespace)
        requirements[key] = Requirement(api_version, kind, match_name=name, namespace=namespace)
        items = inputs.required.get(key)
        if items is None:
            pending.add(name)
            continue
        match = [o for o in items if _name_of(o) == name]
        if match:
            found[name] = match[0]
        else:
            gone.add(name)
    return Lookup(requirements, found, frozenset(gone), frozenset(pending), kind)


def look_up_unlisted(
    inputs: Inputs,
    prefix: str,
    api_version: str,
    kind: str,
    names: Iterable[str],
    listed: Iterable[Mapping[str, Any]],
    namespace: str | None = None,
) -> Lookup:
    """``look_up`` of those of ``names`` that no object of ``listed`` is named."""
    held = {_name_of(o) for o in listed}
    return look_up(inputs, prefix, api_version, kind, set(names) - held, namespace)


def recorded_names(objs: Iterable[Mapping[str, Any]], annotation: str) -> set[str]:
    """The names ``annotation`` records on ``objs`` (comma separated): what they were composed
    for, asked for by name when a list comes back without them."""
    out: set[str] = set()
    for obj in objs:
        out |= {n for n in str(objects.annotations(obj).get(annotation) or "").split(",") if n}
    return out


def _name_of(obj: Any) -> str | None:
    """An object's name; None for anything that is not an object with metadata."""
    if isinstance(obj, Mapping) and isinstance(obj.get("metadata"), Mapping):
        return str(obj["metadata"].get("name"))
    return None


def listed_and_found(
    inputs: Inputs, requirement: str, prefix: str, kind: str, names: Iterable[str]
) -> tuple[list[Obj] | None, Lookup]:
    """The items of the Modelplane ``kind`` listed under ``requirement``, and those of ``names``
    the list does not hold asked for by name and added once found: what a composer reads as the
    list. None while the list, or any object asked for, is not fetched yet."""
    listed = inputs.required.get(requirement)
    if listed is None:
        return None, Lookup()
    lookup = look_up_unlisted(inputs, prefix, API_VERSION, kind, names, listed)
    if lookup.pending:
        return None, lookup
    return [*listed, *lookup.found.values()], lookup
