"""Which composite owns a composed resource, decided as Crossplane decides it.

Crossplane labels every composed resource ``crossplane.io/composite: <owner name>`` and sets a
controller owner reference carrying the owner's kind, name and uid; a namespaced composite's
resources live in its own namespace. A name alone is therefore not an owner: deployment ``qwen``
in namespace ``a`` and deployment ``qwen`` in namespace ``b`` each own their own replicas. A
resource belongs to a composite when:

- both carry a uid (the resource in its controller reference): the uids are equal;
- otherwise its label (or reference) names the composite, a reference names its kind, and
  - the composite is namespaced: the resource is in the composite's namespace; a resource
    written without a namespace (by hand, for ``render``) only when no other composite has
    that name;
  - the composite is cluster-scoped: no namespaced composite of that name lives in the
    resource's namespace (which would own it instead).

A label alone cannot tell apart two composites of different kinds sharing a namespace and name;
a resource naming such a pair without a reference belongs to neither.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

Obj = Mapping[str, Any]
Identity = tuple[str, str, str, str]
"""apiVersion, kind, namespace ("" when cluster-scoped), name."""

COMPOSITE_LABEL = "crossplane.io/composite"


def identity(obj: Obj) -> Identity:
    meta = obj.get("metadata") or {}
    return (
        str(obj.get("apiVersion") or ""),
        str(obj.get("kind") or ""),
        str(meta.get("namespace") or ""),
        str(meta.get("name") or ""),
    )


def controller_reference(obj: Obj) -> Obj | None:
    """The owner reference marked controller (Crossplane's to its composite), if any."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return ref
    return None


def owner_name(obj: Obj) -> str | None:
    """The name of the composite ``obj`` says owns it: its label, else its controller
    reference's name; None when it names none."""
    label = ((obj.get("metadata") or {}).get("labels") or {}).get(COMPOSITE_LABEL)
    if label:
        return str(label)
    ref = controller_reference(obj)
    return str(ref["name"]) if ref and ref.get("name") else None


class Owners:
    """The composites a resource may belong to (every composite of one render pass)."""

    def __init__(self, composites: Iterable[Obj]) -> None:
        self._by_name: dict[str, list[Identity]] = {}
        self._by_uid: dict[str, Identity] = {}
        self._kinds: dict[tuple[str, str], set[str]] = {}
        for c in composites:
            ident = identity(c)
            self._by_name.setdefault(ident[3], []).append(ident)
            self._kinds.setdefault((ident[2], ident[3]), set()).add(ident[1])
            uid = (c.get("metadata") or {}).get("uid")
            if uid:
                self._by_uid[str(uid)] = ident

    def owns(self, owner: Obj, obj: Obj) -> bool:
        """Whether ``obj`` is a resource composed by ``owner``."""
        _, kind, namespace, name = identity(owner)
        ref = controller_reference(obj)
        uid = (owner.get("metadata") or {}).get("uid")
        if ref is not None and ref.get("uid") and uid:
            return str(ref["uid"]) == str(uid)
        if owner_name(obj) != name:
            return False
        if ref is not None:
            if ref.get("kind") and ref["kind"] != kind:
                return False
        elif len(self._kinds.get((namespace, name), ())) > 1:
            return False  # two kinds share this namespace and name: a label cannot choose
        where = str((obj.get("metadata") or {}).get("namespace") or "")
        if namespace:
            if where:
                return where == namespace
            return len(self._by_name.get(name, ())) <= 1
        return not where or not self._kinds.get((where, name))

    def owner_of(self, obj: Obj, candidates: Iterable[Obj]) -> Obj | None:
        """The one of ``candidates`` (composites) that owns ``obj``, if exactly one does."""
        found = [c for c in candidates if self.owns(c, obj)]
        return found[0] if len(found) == 1 else None


class Composed:
    """Composed resources (observed state) indexed once by what names their owner, so finding
    a composite's resources costs what it owns, not what the whole fleet composed.

    Resources are given in precedence order: for one owner and composition resource name the
    first given wins.
    """

    def __init__(self, resources: Iterable[Obj], owners: Owners, resource_name: str) -> None:
        self._owners = owners
        self._key = resource_name
        self._by_name: dict[str, list[tuple[int, Obj]]] = {}
        self._by_uid: dict[str, list[tuple[int, Obj]]] = {}
        self._unowned: list[tuple[int, Obj]] = []
        for seq, obj in enumerate(resources):
            if not ((obj.get("metadata") or {}).get("annotations") or {}).get(resource_name):
                continue
            name = owner_name(obj)
            ref = controller_reference(obj)
            if name:
                self._by_name.setdefault(name, []).append((seq, obj))
            if ref is not None and ref.get("uid"):
                self._by_uid.setdefault(str(ref["uid"]), []).append((seq, obj))
            if not name and ref is None:
                self._unowned.append((seq, obj))

    def of(self, owner: Obj, *, unowned: bool = False) -> dict[str, Obj]:
        """``owner``'s composed resources by composition resource name; with ``unowned``, also
        those that name no owner at all (a hand-written observed file for a lone composite)."""
        meta = owner.get("metadata") or {}
        candidates = dict(self._by_name.get(str(meta.get("name") or ""), ()))
        if meta.get("uid"):
            candidates.update(self._by_uid.get(str(meta["uid"]), ()))
        mine = [(seq, obj) for seq, obj in candidates.items() if self._owners.owns(owner, obj)]
        if unowned:
            mine += self._unowned
        out: dict[str, Obj] = {}
        for _, obj in sorted(mine, key=lambda pair: pair[0]):
            key = str(obj["metadata"]["annotations"][self._key])
            out.setdefault(key, obj)
        return out
