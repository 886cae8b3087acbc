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
from dataclasses import dataclass

from modelplane.kube import objects
from modelplane.kube.objects import Body

Identity = tuple[str, str, str, str]
"""apiVersion, kind, namespace ("" when cluster-scoped), name."""

COMPOSITE_LABEL = "crossplane.io/composite"
RESOURCE_NAME = "crossplane.io/composition-resource-name"


def identity(obj: Body) -> Identity:
    return (
        str(obj.get("apiVersion") or ""),
        str(obj.get("kind") or ""),
        objects.namespace(obj),
        objects.name(obj),
    )


def controller_reference(obj: Body) -> Body | None:
    """The owner reference marked controller (Crossplane's to its composite), if any."""
    for ref in objects.metadata(obj).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return ref
    return None


def owner_name(obj: Body) -> str | None:
    """The name of the composite ``obj`` says owns it: its label, else its controller
    reference's name; None when it names none."""
    label = objects.labels(obj).get(COMPOSITE_LABEL)
    if label:
        return str(label)
    ref = controller_reference(obj)
    return str(ref["name"]) if ref and ref.get("name") else None


@dataclass(frozen=True)
class Claim:
    """What a resource says of its owner, read once: the name its label (or reference) gives,
    its controller reference's uid and kind, and its own namespace."""

    name: str | None
    uid: str | None
    kind: str | None
    referenced: bool
    namespace: str

    @classmethod
    def of(cls, obj: Body) -> Claim:
        ref = controller_reference(obj)
        return cls(
            name=owner_name(obj),
            uid=str(ref["uid"]) if ref is not None and ref.get("uid") else None,
            kind=str(ref["kind"]) if ref is not None and ref.get("kind") else None,
            referenced=ref is not None,
            namespace=objects.namespace(obj),
        )


class Owners:
    """The composites a resource may belong to (every composite of one render pass)."""

    def __init__(self, composites: Iterable[Body]) -> None:
        self._by_name: dict[str, list[Identity]] = {}
        self._kinds: dict[tuple[str, str], set[str]] = {}
        for c in composites:
            ident = identity(c)
            self._by_name.setdefault(ident[3], []).append(ident)
            self._kinds.setdefault((ident[2], ident[3]), set()).add(ident[1])

    def claimed(self, owner: Identity, uid: str | None, claim: Claim) -> bool:
        """Whether what claims ``claim`` was composed by the owner of this identity and uid."""
        _, kind, namespace, name = owner
        if claim.uid and uid:
            return claim.uid == uid
        if claim.name != name:
            return False
        if claim.referenced:
            if claim.kind and claim.kind != kind:
                return False
        elif len(self._kinds.get((namespace, name), ())) > 1:
            return False  # two kinds share this namespace and name: a label cannot choose
        where = claim.namespace
        if namespace:
            if where:
                return where == namespace
            return len(self._by_name.get(name, ())) <= 1
        return not where or not self._kinds.get((where, name))

    def owner_of(self, obj: Body, candidates: Iterable[Body]) -> Body | None:
        """The one of ``candidates`` (composites) that owns ``obj``, if exactly one does."""
        claim = Claim.of(obj)
        found = [c for c in candidates if self.claimed(identity(c), _uid(c), claim)]
        return found[0] if len(found) == 1 else None


def _uid(obj: Body) -> str | None:
    uid = objects.dig(obj, "metadata", "uid")
    return str(uid) if uid else None


Owner = tuple[Identity, str]
"""A composite as the owner of what it composed: its identity and uid ("" without one); a
composite recreated under its name (a new uid) owns nothing its predecessor composed."""


def owner_of(composite: Body) -> Owner:
    return identity(composite), _uid(composite) or ""


_Entry = tuple[int, str, Body, Claim]
"""A composed resource: its precedence, composition resource name, itself, and its claim."""


class Composed:
    """Composed resources (observed state) indexed once by what names their owner, so finding
    a composite's resources costs what it owns, not what the whole fleet composed.

    Resources are given in precedence order: for one owner and composition resource name the
    first given wins.
    """

    def __init__(self, resources: Iterable[Body], owners: Owners) -> None:
        self._owners = owners
        self._by_name: dict[str, list[_Entry]] = {}
        self._by_uid: dict[str, list[_Entry]] = {}
        self._unowned: list[_Entry] = []
        for seq, obj in enumerate(resources):
            key = objects.annotations(obj).get(RESOURCE_NAME)
            if not key:
                continue
            claim = Claim.of(obj)
            entry = (seq, str(key), obj, claim)
            if claim.name:
                self._by_name.setdefault(claim.name, []).append(entry)
            if claim.uid:
                self._by_uid.setdefault(claim.uid, []).append(entry)
            if not claim.name and not claim.referenced:
                self._unowned.append(entry)

    def of(self, owner: Body, *, unowned: bool = False) -> dict[str, Body]:
        """``owner``'s composed resources by composition resource name; with ``unowned``, also
        those that name no owner at all (a hand-written observed file for a lone composite)."""
        ident, uid = identity(owner), _uid(owner)
        candidates = {e[0]: e for e in self._by_name.get(ident[3], ())}
        if uid:
            candidates.update((e[0], e) for e in self._by_uid.get(uid, ()))
        claimed = self._owners.claimed
        mine = [e for e in candidates.values() if claimed(ident, uid, e[3])]
        if unowned:
            mine += self._unowned
        out: dict[str, Body] = {}
        for _, key, obj, _ in sorted(mine, key=lambda e: e[0]):
            out.setdefault(key, obj)
        return out
