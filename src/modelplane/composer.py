"""The composer contract: plain Python data in, plain Python data out.

A composer is a pure function ``compose(inputs: Inputs) -> Result``. It never sees protobuf:
the gRPC edge (``modelplane.function``) and the local engine (``modelplane.render``) both
convert at their boundary and call the same composer. A composer that cannot decide holds:
``Result.held`` carries every observed resource forward as it stands, deleting nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from modelplane.kube.objects import Obj, condition, dig
from modelplane.structs import LazyPaths, lazy_paths

Ready = Literal["True", "False", "Unspecified"]
# Server-set metadata (uid, resourceVersion, managedFields, ...) would conflict if sent back.
_METADATA_KEPT = ("name", "namespace", "generateName", "labels", "annotations")
Severity = Literal["Normal", "Warning", "Fatal"]
ConditionStatus = Literal["True", "False", "Unknown"]


def namespace_of(obj: Mapping[str, Any]) -> str:
    """A namespaced object's namespace: the API server's ``default`` when it names none."""
    return str(dig(obj, "metadata", "namespace") or "default")


def namespace_said(obj: Mapping[str, Any]) -> str:
    """``namespace_of`` as a message about a lookup in it names it: an object written without a
    namespace is read in the API server's default one, so a "not found" says it was assumed."""
    namespace = namespace_of(obj)
    if dig(obj, "metadata", "namespace"):
        return namespace
    return f"{namespace} (metadata.namespace is not set: {namespace} assumed)"


CLASSES = "inference-classes"
"""The name every composer that reads InferenceClasses gives its requirement for them."""


@dataclass(frozen=True)
class Requirement:
    """A resource the composer needs to see on its next call (Crossplane "required resources").

    Exactly one of ``match_name`` or ``match_labels`` selects; neither selects every object
    of the kind.
    """

    api_version: str
    kind: str
    match_name: str | None = None
    match_labels: Mapping[str, str] | None = None
    namespace: str | None = None

    def canonical(self) -> Requirement:
        """This requirement as it reads back from the wire: selecting by labels (none: every
        object of the kind) unless by name, and no empty namespace."""
        labels = None if self.match_name is not None else dict(self.match_labels or {})
        if labels == self.match_labels and (self.namespace or None) == self.namespace:
            return self
        namespace = self.namespace or None
        return Requirement(self.api_version, self.kind, self.match_name, labels, namespace)


@dataclass(frozen=True)
class Inputs:
    """Everything a composer may read, as plain data or read-only views of it, ints restored."""

    composite: Obj
    observed: Mapping[str, Obj] = field(default_factory=dict)
    """Observed composed resources by composition resource name.

    At the gRPC edge these are read-only ``StructView`` mappings: a composer reads a few status
    fields of each, and a running replica's observed state is larger than everything it composes.
    """
    required: Mapping[str, list[Obj]] = field(default_factory=dict)
    """Required resources by requirement name; a name absent here was not yet fetched.

    Names the composer was registered with as ``lazy`` arrive as read-only
    ``modelplane.structs.StructView`` mappings that convert only the fields read: for
    requirements that return the whole fleet. Use ``structs.plain`` for a plain dict.
    """
    context: Mapping[str, Any] = field(default_factory=dict)


class Desired(NamedTuple):
    """One composed resource and whether it is ready. A named tuple: composers make tens of
    thousands a fleet's render, and a frozen dataclass costs three times as much to make."""

    resource: Obj
    ready: Ready = "Unspecified"


class Condition(NamedTuple):
    type: str
    status: ConditionStatus
    reason: str
    message: str = ""


class Event(NamedTuple):
    """A result Crossplane records as an event on the composite."""

    severity: Severity
    message: str
    reason: str = ""


@dataclass
class Result:
    """What a composer returns.

    ``resources`` is the complete desired state of composed resources: anything observed
    but absent here is garbage-collected by Crossplane, so a composer that cannot decide
    must carry observed resources forward or set ``fatal``.

    A result is read, never changed: a composer may hand out the same objects on another call
    (a cluster's serving stack is built once per spec).
    """

    resources: dict[str, Desired] = field(default_factory=dict)
    status: Obj = field(default_factory=dict)
    """Fields merged into the composite's desired status."""
    conditions: list[Condition] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    requirements: dict[str, Requirement] = field(default_factory=dict)
    fatal: str | None = None
    """When set, Crossplane applies nothing from this call and reports the message."""
    ready: Ready = "Unspecified"
    """The composite's own readiness. ``False`` when it does not do its job whatever its composed
    resources say (nothing placed, no endpoint selected): Crossplane then writes ``Ready False``
    (reason ``Creating``) instead of deriving ``Available`` from the composed resources."""

    @classmethod
    def failed(cls, message: str) -> Result:
        return cls(fatal=message)

    @classmethod
    def held(
        cls,
        observed: Mapping[str, Obj],
        *,
        requirements: Mapping[str, Requirement] | None = None,
        status: Obj | None = None,
        conditions: Iterable[Condition] = (),
        events: Iterable[Event] = (),
        ready: Ready = "Unspecified",
    ) -> Result:
        """Nothing can be decided: every ``observed`` resource carried forward as it stands
        (``carry_forward``), so nothing is deleted, with what the composer says of why."""
        return cls(
            resources=carry_forward(observed),
            status=dict(status or {}),
            conditions=list(conditions),
            events=list(events),
            requirements=dict(requirements or {}),
            ready=ready,
        )


def observed_ready(obj: Mapping[str, Any] | None) -> bool:
    """Whether an observed composed resource reports Ready=True (its readiness policy held)."""
    c = condition(obj, "Ready")
    return c is not None and c.get("status") == "True"


def ready_as_observed(obj: Mapping[str, Any] | None) -> Ready:
    """A desired resource is ready exactly when its observed counterpart is, never sooner."""
    return "True" if observed_ready(obj) else "False"


def carried(observed: Obj) -> Obj:
    """The desired form of an observed resource: what was applied, without status or
    server-owned metadata."""
    out = {k: v for k, v in observed.items() if k not in ("metadata", "status")}
    metadata = observed.get("metadata") or {}
    out["metadata"] = {k: metadata[k] for k in _METADATA_KEPT if k in metadata}
    return out


def carry_forward(observed: Mapping[str, Obj]) -> dict[str, Desired]:
    """Every observed resource as desired, each ready exactly when it is observed ready."""
    return {
        name: Desired(carried(obj), ready_as_observed(obj))
        for name, obj in sorted(observed.items())
    }


Composer = Callable[[Inputs], Result]


class UnknownKindError(LookupError):
    pass


class Registry:
    """Composers by the composite's API group and kind (any served version)."""

    def __init__(self) -> None:
        self._composers: dict[tuple[str, str], Composer] = {}
        self._lazy: dict[tuple[str, str], frozenset[str]] = {}
        self._lazy_composite: dict[tuple[str, str], LazyPaths] = {}
        self._requires: dict[tuple[str, str], dict[str, tuple[str, str]]] = {}

    def register(
        self,
        api_version: str,
        kind: str,
        composer: Composer,
        *,
        lazy: Iterable[str] = (),
        lazy_composite: Iterable[str] = (),
        requires: Mapping[str, tuple[str, str]] | None = None,
    ) -> None:
        """Register ``composer``; requirements named in ``lazy`` are delivered as views, and so
        are the composite's sub-trees at the ``lazy_composite`` paths (``structs.lazy_paths``):
        parts the composer passes through or digests whole, never picks apart. ``requires``:
        the (apiVersion, kind) each requirement asks for, by its name or, for a name built as
        ``<prefix>/...`` (``compose.shared.evidence.requirement_name``), by its prefix."""
        key = (_group(api_version), kind)
        self._composers[key] = composer
        self._lazy[key] = frozenset(lazy)
        self._lazy_composite[key] = lazy_paths(*lazy_composite)
        self._requires[key] = dict(requires or {})

    def required_kind(self, api_version: str, kind: str, name: str) -> tuple[str, str] | None:
        """The (apiVersion, kind) requirement ``name`` of this composite's composer asks for;
        None when its registration does not say."""
        requires = self._requires.get((_group(api_version), kind), {})
        return requires.get(name) or requires.get(name.partition("/")[0])

    def lazy_requirements(self, api_version: str, kind: str) -> frozenset[str]:
        return self._lazy.get((_group(api_version), kind), frozenset())

    def lazy_composite(self, api_version: str, kind: str) -> LazyPaths:
        return self._lazy_composite.get((_group(api_version), kind), {})

    def lookup(self, api_version: str, kind: str) -> Composer:
        try:
            return self._composers[(_group(api_version), kind)]
        except KeyError:
            raise UnknownKindError(
                f"no composer for {kind} in API group {_group(api_version)!r}; "
                f"this function composes {', '.join(self.kinds()) or 'nothing'}"
            ) from None

    def handles(self, api_version: str, kind: str) -> bool:
        return (_group(api_version), kind) in self._composers

    def kinds(self) -> list[str]:
        return sorted(f"{kind}.{group}" for group, kind in self._composers)


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]
