"""`modelplane render`: run composition trees in process, as Crossplane would.

Each composite is composed by the composer the function dispatches it to, with the function's
fault handling, and its result is what the function's response carries once read back (the
Session says how, and how the tests hold the two equal). Crossplane's required-resources
round trip is reproduced: a composer asks for objects by kind and name or labels, render answers
from the input manifests and calls again until the requirements stop changing. Composed
resources that are themselves composites (a ModelDeployment's ModelReplicas) are rendered in
turn. Output follows `crossplane render`: each composite with its status, its composed resources
annotated with their composition resource name, then its results.

A render is a series of passes, each one reconcile of every composite, until a pass changes
nothing. Within a pass composites go in an order where what is required comes before what
requires it (learned from the requirements composers return; kinds by name until then), then
by namespace and name, and each sees what those before it published, as successive reconciles
would. So the passes a render needs depend on how deep its composition trees are, not on how
many composites there are. Each pass indexes the environment by kind and name, and observed
resources by owner, once; a Session keeps across passes every composite already admitted and
every call already made, so a composite whose inputs did not change costs a lookup.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane import exits, manifests, owners
from modelplane import output as output_
from modelplane.compose.modelservice.status import ENTRY_MATCHES_NOTHING
from modelplane.composer import (
    Condition,
    Event,
    Inputs,
    Registry,
    Requirement,
    Result,
    namespace_of,
)
from modelplane.function import (
    FunctionRunner,
    invalid_result,
    no_cycle_collection,
    read_response,
    run_composer,
)
from modelplane.kube import objects
from modelplane.kube.names import dns_label
from modelplane.kube.objects import Obj
from modelplane.labels import DEPLOYMENT
from modelplane.output import COMPOSITE_LABEL, RESOURCE_NAME, RESULT_API_VERSION
from modelplane.owners import Identity, Owner, identity, owner_of
from modelplane.structs import fill_struct, plain

STEP = "modelplane"
# Crossplane stops asking a function again after this many requirement rounds.
MAX_REQUIREMENT_ROUNDS = 5
_CAPABILITIES = [
    fnv1.CAPABILITY_CAPABILITIES,
    fnv1.CAPABILITY_REQUIRED_RESOURCES,
    fnv1.CAPABILITY_CONDITIONS,
]
Admit = Callable[[Obj], tuple[Obj, list[str]]]
"""Admission: returns the defaulted object and API-server-style errors (empty when valid)."""


class RenderError(Exception):
    """A composite that cannot be rendered; the message names it and the reason."""


@dataclass
class Rendered:
    """One composite after its composition ran."""

    composite: Obj
    resources: dict[str, Obj] = field(default_factory=dict)
    ready: dict[str, bool] = field(default_factory=dict)
    results: list[Obj] = field(default_factory=list)
    children: list[Rendered] = field(default_factory=list)
    rounds: int = 0
    """How many times the function was called before its requirements were stable."""
    call: _Call | None = None
    """The last call: the one a steady-state reconcile repeats."""
    nested: tuple[str, ...] = ()
    """The keys of the composed resources that are composites, rendered as ``children``."""

    @functools.cached_property
    def request(self) -> fnv1.RunFunctionRequest | None:
        """The last call's RunFunctionRequest, as Crossplane would send it."""
        call = self.call
        return request_for(call.xr, call.observed, call.required) if call is not None else None

    def walk(self) -> Iterator[Rendered]:
        """This composite and every nested one, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()

    def documents(self) -> list[Obj]:
        """This composite, its composed resources, its results, then each child's, in order."""
        child_keys = {_resource_name(c.composite) for c in self.children}
        docs = [self.composite]
        docs += [r for k, r in self.resources.items() if k not in child_keys]
        docs += self.results
        for child in self.children:
            docs += child.documents()
        return docs


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class _Generations(Generic[K, V]):
    """A cache that forgets what neither this pass nor the one before used."""

    def __init__(self) -> None:
        self._now: dict[K, V] = {}
        self._before: dict[K, V] = {}

    def get(self, key: K) -> V | None:
        hit = self._now.get(key)
        if hit is None:
            hit = self._before.pop(key, None)
            if hit is not None:
                self._now[key] = hit
        return hit

    def put(self, key: K, value: V) -> V:
        self._now[key] = value
        return value

    def next_pass(self) -> None:
        self._before, self._now = self._now, {}


@dataclass(frozen=True)
class _Answer:
    """A result's desired state as the documents render prints."""

    resources: dict[str, Obj]
    ready: dict[str, bool]
    composite_ready: str
    """The composite's own readiness (``Result.ready``), which supersedes ``ready``."""
    status: Obj
    conditions: list[Obj]
    results: list[Obj]
    nested: tuple[str, ...]
    """The keys of the resources that are composites themselves, rendered in turn."""


_Composed = tuple[Obj, Obj, bool]
"""A composed resource as the composer returned it, as a document, and whether it is a
composite rendered in turn."""


@dataclass(frozen=True)
class _Call:
    """One call of a composer: what it read, what it returned, and that as documents."""

    xr: Obj
    observed: Mapping[str, Obj]
    required: Mapping[str, list[Obj]]
    fatal: str | None
    requirements: dict[str, Requirement]
    """As they read back from the wire (``Requirement.canonical``)."""
    answer: _Answer | None


class Session:
    """What one render keeps from pass to pass. Objects are never changed once built, and a
    composite, observed or composed object that did not change is the same object next pass
    (a composed resource equal to its previous version is that version), so a call is found
    again by the identities of what it reads: a composite whose inputs did not change costs a
    lookup. Each entry holds the objects its key names, so an identity is never reused while
    cached.

    Composers run in process on plain data, as ``modelplane.composer`` defines them, with the
    function's fault handling (``function.run_composer``) and its output as a Struct round trip
    gives it (``structs.plain``). ``through_function`` sends each call through the real
    FunctionRunner as a RunFunctionRequest instead: the same documents, proven by the tests,
    at the cost of protobuf both ways."""

    def __init__(self, registry: Registry, *, through_function: bool = False) -> None:
        self.registry = registry
        # The session remembers calls itself, so the runner keeps none.
        self._runner = FunctionRunner(registry, cache_size=0) if through_function else None
        self._admitted = _Generations[str, Obj]()
        self._admitted_objects = _Generations[int, tuple[Obj, Obj]]()
        self._admitted_parts = _Generations[tuple[tuple[str, int], ...], tuple[list[Any], Obj]]()
        self._calls = _Generations[tuple[Any, ...], _Call]()
        self._composed = _Generations[tuple[Owner, str], _Composed]()
        self._published = _Generations[Owner, Obj]()
        self._simulated = _Generations[tuple[int, ...], tuple[list[Obj], dict[str, Obj]]]()
        self._composes: dict[tuple[Any, Any], bool] = {}
        """Whether the registry composes an apiVersion and kind."""
        self.requirements: dict[Identity, dict[str, Requirement]] = {}
        """Each composite's settled requirements: the next pass asks with them answered."""
        self.requires: dict[tuple[str, str], set[tuple[str, str]]] = {}
        """Kinds each kind requires, as learned: what is required renders first."""
        self.kind_requirements: dict[tuple[str, str], dict[str, Requirement]] = {}
        """Per kind, settled requirements that name nothing of one composite: a first guess."""

    def next_pass(self) -> None:
        caches = (self._admitted, self._admitted_objects, self._admitted_parts, self._calls)
        for cache in (*caches, self._composed, self._published, self._simulated):
            cache.next_pass()

    def call(
        self, xr: Obj, observed: Mapping[str, Obj], required: Mapping[str, list[Obj]]
    ) -> _Call:
        """The composer's answer for this composite, observed state and required resources."""
        key = (
            id(xr),
            # In the mappings' own order: render builds them in one order for a composite, so
            # another order costs at most a call, never a wrong answer.
            tuple(zip(observed, map(id, observed.values()), strict=True)),
            tuple((n, tuple(map(id, objs))) for n, objs in required.items()),
        )
        hit = self._calls.get(key)
        if hit is not None:
            return hit
        result = self._compose(xr, observed, required)
        answer = None
        if result.fatal is None:
            try:
                answer = self._answer(xr, result)
            except (TypeError, ValueError) as e:
                kind = f"{xr.get('kind')}.{xr.get('apiVersion')}"
                result = Result.failed(invalid_result(kind, e))
        requirements = {n: r.canonical() for n, r in result.requirements.items()}
        call = _Call(xr, observed, required, result.fatal, requirements, answer)
        return self._calls.put(key, call)

    def _compose(
        self, xr: Obj, observed: Mapping[str, Obj], required: Mapping[str, list[Obj]]
    ) -> Result:
        if self._runner is not None:
            return read_response(self._runner.run(request_for(xr, observed, required)))
        api_version, kind = str(xr.get("apiVersion", "")), str(xr.get("kind", ""))
        composer = self.registry.lookup(api_version, kind)
        inputs = Inputs(composite=xr, observed=observed, required=required)
        return run_composer(composer, inputs, f"{kind}.{api_version}")

    def _answer(self, xr: Obj, result: Result) -> _Answer:
        resources: dict[str, Obj] = {}
        ready: dict[str, bool] = {}
        nested: list[str] = []
        owner = owner_of(xr)
        composed = self._composed
        for key in sorted(result.resources):
            desired = result.resources[key]
            last = composed.get((owner, key))
            if last is None or last[0] is not desired.resource:  # else the very same object
                last = self._document(owner, key, desired.resource, xr, last)
            resources[key] = last[1]
            if last[2]:
                nested.append(key)
            ready[key] = desired.ready == "True"
        return _Answer(
            resources=resources,
            ready=ready,
            composite_ready=result.ready,
            status=plain(result.status),
            conditions=[_condition(c) for c in result.conditions],
            results=[_result(e) for e in result.events],
            nested=tuple(nested),
        )

    def _document(
        self, owner: Owner, key: str, resource: Obj, xr: Obj, last: _Composed | None
    ) -> _Composed:
        """A composed resource of ``xr`` (``owner``) as a document, labelled for its owner: the
        same object as last time (``last``) when it is composed unchanged (a status change
        elsewhere recomposes a composite without changing most of what it composes), so
        nothing derived from it is redone."""
        # Composers build afresh on every call but never change what they returned, so the
        # previous output is there to compare with: equal (a comparison in C), the document is
        # the one made from it. Equality is Python's, which holds True equal to 1 where a Struct
        # would not; a schema gives each field one type, so no composer changes one so.
        if last is not None and last[0] == resource:
            return last
        obj = _labelled(key, plain(resource), xr)
        if last is not None and last[1] == obj:
            obj = last[1]
        return self._composed.put((owner, key), (resource, obj, self.composes(obj)))

    def composes(self, obj: Obj) -> bool:
        """Whether ``obj`` is a composite this registry composes (asked of every composed
        resource: answered once per apiVersion and kind)."""
        key = (obj.get("apiVersion"), obj.get("kind"))
        known = self._composes.get(key)
        if known is None:
            known = self._composes[key] = self.registry.handles(
                str(key[0] or ""), str(key[1] or "")
            )
        return known

    def unchanged(self, owner: Owner, composite: Obj) -> Obj:
        """``composite`` as last published when it is equal to it: whoever requires it (a
        deployment its replicas) then sees the same object, and its call is found again."""
        last = self._published.get(owner)
        if last is not None and last == composite:
            return last
        return self._published.put(owner, composite)

    def admitted(self, obj: Obj, admit: Admit | None) -> Obj:
        """``obj`` as admission defaults it, or RenderError with its errors. Admission ignores
        status (a subresource), so a composite seen again with only its status changed, or
        composed again unchanged, is admitted once."""
        if admit is None:
            return obj
        seen = self._admitted_objects.get(id(obj))
        if seen is not None and seen[0] is obj:
            return seen[1]
        out = self._admit(obj, admit)
        self._admitted_objects.put(id(obj), (obj, out))
        return out

    def _admit(self, obj: Obj, admit: Admit) -> Obj:
        spec = {k: v for k, v in obj.items() if k != "status"}
        hit = self._admitted_spec(obj, spec, admit)
        if "status" not in obj:
            return hit
        if len(hit) == len(spec) and all(hit.get(k) is v for k, v in spec.items()):
            return obj  # already the admitted object with a status: nothing to rebuild
        return {**hit, "status": obj["status"]}

    def _admitted_spec(self, obj: Obj, spec: Obj, admit: Admit) -> Obj:
        """``spec`` (``obj`` without its status) as admission defaults it: found by the
        identities of its fields when they are those of one admitted before."""
        # A composite published with status shares its other fields with its admitted self.
        same = tuple(sorted((k, id(v)) for k, v in spec.items()))
        found = self._admitted_parts.get(same)
        if found is not None and all(
            a is spec[k] for a, (k, _) in zip(found[0], same, strict=True)
        ):
            return found[1]
        hit = self._admitted_content(obj, spec, admit)
        parts = tuple(sorted((k, id(v)) for k, v in hit.items()))
        self._admitted_parts.put(parts, ([hit[k] for k, _ in parts], hit))
        self._admitted_parts.put(same, ([spec[k] for k, _ in same], hit))
        return hit

    def _admitted_content(self, obj: Obj, spec: Obj, admit: Admit) -> Obj:
        """``spec`` as admission defaults it, admitted once per content; RenderError naming
        ``obj`` with its errors."""
        key = json.dumps(spec, sort_keys=True, separators=(",", ":"), default=str)
        hit = self._admitted.get(key)
        if hit is None:
            out, errors = admit(spec)
            if errors:
                raise RenderError(
                    f"{manifests.identity(obj)} is invalid:\n" + "\n".join(f"  {e}" for e in errors)
                )
            hit = self._admitted.put(key, plain(out))
        return hit

    def learn(self, kind: tuple[str, str], requirements: Mapping[str, Requirement]) -> None:
        self.requires.setdefault(kind, set()).update(
            (r.api_version, r.kind) for r in requirements.values()
        )
        # Requirements that name nothing of one composite (every object of a kind, by labels)
        # are a good first guess for the next composite of the kind: when the guess is what it
        # asks for, one call answers it. A wrong guess costs the call an empty one would.
        if all(r.match_name is None and r.namespace is None for r in requirements.values()):
            self.kind_requirements[kind] = dict(requirements)

    def observed(self, rendered: Rendered, simulate: Simulate | None) -> dict[str, Obj]:
        """What the next reconcile of ``rendered`` observes: its composed resources (nested
        composites as rendered), as ``simulate`` reports them when given."""
        children = {_resource_name(c.composite): c.composite for c in rendered.children}
        resources = {k: children.get(k, r) for k, r in rendered.resources.items()}
        key = tuple(id(o) for o in resources.values())
        hit = self._simulated.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], resources.values(), strict=True)):
            return hit[1]
        composite = rendered.composite
        # Crossplane's controller reference names the owner's kind: a composite and another of
        # another kind sharing its namespace and name (a ModelReplica and the ModelEndpoint its
        # deployment composes for it) each observe their own. Observed state only: composers
        # carry forward no owner references, so none reaches the output.
        reference = {**_reference(composite), "controller": True}
        observed = resources if simulate is None else simulate(resources)
        out = {k: _composed_by(composite, k, obj, reference) for k, obj in observed.items()}
        return self._simulated.put(key, (list(resources.values()), out))[1]


class _Environment:
    """The objects required resources are answered from, indexed by kind and by name, and by
    label once a requirement selects by it; a composite rendered in this pass replaces its
    previous version at once."""

    def __init__(self, objects: Iterable[Obj]) -> None:
        self._inputs: dict[Identity, Obj] = {}
        self._by_kind: dict[tuple[str, str], dict[Identity, Obj]] = {}
        self._by_name: dict[tuple[str, str, str], dict[Identity, Obj]] = {}
        self._versions: dict[tuple[str, str], int] = {}
        """Changes to each kind: what was derived from its objects at another version is stale."""
        self._ordered: dict[tuple[str, str], tuple[int, list[Identity]]] = {}
        self._by_label: dict[tuple[str, str, str], tuple[int, dict[str, list[Identity]]]] = {}
        for obj in objects:
            ident = identity(obj)
            if ident not in self._inputs:  # an object given twice: the first stands
                self._inputs[ident] = obj
                self.put(obj)

    def objects(self) -> list[Obj]:
        return [o for bucket in self._by_kind.values() for o in bucket.values()]

    def put(self, obj: Obj) -> None:
        ident = identity(obj)
        self._by_kind.setdefault(ident[:2], {})[ident] = obj
        self._by_name.setdefault((*ident[:2], ident[3]), {})[ident] = obj
        self._versions[ident[:2]] = self._versions.get(ident[:2], 0) + 1

    def restore(self, ident: Identity) -> None:
        """Back to the input object of that identity, or gone when there is none."""
        if ident in self._inputs:
            self.put(self._inputs[ident])
            return
        self._by_kind.get(ident[:2], {}).pop(ident, None)
        self._by_name.get((*ident[:2], ident[3]), {}).pop(ident, None)
        self._versions[ident[:2]] = self._versions.get(ident[:2], 0) + 1

    def select(self, r: Requirement) -> list[Obj]:
        """What a requirement selects, in namespace and name order (the API server's)."""
        kind = (r.api_version, r.kind)
        if r.match_name is not None:
            bucket = self._by_name.get((*kind, r.match_name), {})
            candidates: Iterable[Identity] = sorted(bucket)
        else:
            bucket = self._by_kind.get(kind, {})
            if r.match_labels:
                key, value = min(r.match_labels.items())
                candidates = self._labelled(kind, key).get(value, ())
                whole = len(r.match_labels) == 1
            else:
                candidates, whole = self._order(kind), True
            if whole and not r.namespace:
                return [bucket[i] for i in candidates]  # the index selected all it asks
        return [bucket[i] for i in candidates if _matches(bucket[i], r)]

    def _order(self, kind: tuple[str, str]) -> list[Identity]:
        version = self._versions.get(kind, 0)
        cached = self._ordered.get(kind)
        if cached is None or cached[0] != version:
            cached = self._ordered[kind] = (version, sorted(self._by_kind.get(kind, {})))
        return cached[1]

    def _labelled(self, kind: tuple[str, str], key: str) -> dict[str, list[Identity]]:
        """The objects of a kind by their value of label ``key``, each list in order."""
        version = self._versions.get(kind, 0)
        cached = self._by_label.get((*kind, key))
        if cached is None or cached[0] != version:
            index: dict[str, list[Identity]] = {}
            bucket = self._by_kind.get(kind, {})
            for ident in self._order(kind):
                value = objects.labels(bucket[ident]).get(key)
                if value is not None:
                    index.setdefault(value, []).append(ident)
            cached = self._by_label[(*kind, key)] = (version, index)
        return cached[1]


class Renderer:
    """One pass: every composite of ``environment`` that no other composite there owns is
    rendered once, with the composites it composes, in dependency order."""

    def __init__(
        self,
        registry: Registry,
        environment: Sequence[Obj],
        observed: Sequence[Obj] = (),
        admit: Admit | None = None,
        on_render: Callable[[], None] | None = None,
        *,
        session: Session | None = None,
        produced: Mapping[Owner, Mapping[str, Obj]] | None = None,
    ) -> None:
        """``observed``: composed resources as supplied, each belonging to whichever composite
        it names (``owners``); ``produced``: those the previous pass composed, by the owner that
        composed them (``owner_of``). Supplied ones win."""
        self.on_render = on_render
        self._produced = produced or {}
        self.session = session or Session(registry)
        self.admit = admit
        self._env = _Environment(environment)
        present = self._env.objects()
        composables = [o for o in present if self.session.composes(o)]
        self._owners = owners.Owners(composables)
        self._owned: dict[Identity, list[Identity]] = {}
        self._roots = self._ordered(self._unowned(composables))
        # An input that names its owner and its composition resource name is what Crossplane
        # would observe as that owner's composed resource (a replica placed before a drain).
        owned = [o for o in present if owners.owner_name(o) and _resource_name(o)]
        self._supplied = owners.Composed(observed, self._owners)
        self._owned_inputs = owners.Composed(owned, self._owners)

    def _unowned(self, composables: list[Obj]) -> list[Obj]:
        """The composites no other one owns, each owned one noted under its owner in ``_owned``.
        Which composite owns which (a deployment its replicas, from the previous pass) matters:
        a composite rendered again takes the place of everything it composed before."""
        named: dict[str, list[Obj]] = {}
        for c in composables:
            named.setdefault(objects.name(c), []).append(c)
        roots = []
        for c in composables:
            name = owners.owner_name(c)
            candidates = [o for o in named.get(name or "", ()) if o is not c]
            owner = self._owners.owner_of(c, candidates) if candidates else None
            if owner is None:
                roots.append(c)
            else:
                self._owned.setdefault(identity(owner), []).append(identity(c))
        return roots

    def composites(self) -> list[Obj]:
        """Input objects this project composes and that no other input composite owns, in the
        order they render."""
        return list(self._roots)

    def render_all(self) -> list[Rendered]:
        out = []
        for xr in self._roots:
            rendered = self.render(xr)
            self._publish(identity(xr), rendered)
            out.append(rendered)
        return out

    def render(self, xr: Obj, depth: int = 0) -> Rendered:
        if depth > 8:
            raise RenderError(f"{manifests.identity(xr)}: composites nest deeper than 8 levels")
        xr = self.session.admitted(xr, self.admit)
        lone = depth == 0 and len(self._roots) == 1
        rendered = self._run(xr, self._observed(xr, lone))
        if self.on_render is not None:
            self.on_render()
        for key in rendered.nested:
            res = rendered.resources[key]
            rendered.children.append(self._render_child(rendered.composite, key, res, depth))
        return rendered

    def _observed(self, xr: Obj, lone: bool) -> Mapping[str, Any]:
        """What the next reconcile of ``xr`` observes: supplied over produced over inputs."""
        produced = self._produced.get(owner_of(xr), {})
        owned, supplied = self._owned_inputs.of(xr), self._supplied.of(xr, unowned=lone)
        if not owned and not supplied:
            return produced
        return {**owned, **produced, **supplied}

    def _render_child(self, parent: Obj, key: str, child: Obj, depth: int) -> Rendered:
        meta = objects.metadata(child)
        if "name" not in meta:
            meta = {**meta, "name": dns_label(objects.name(parent), key)}
            child = {**child, "metadata": meta}
        result = self.render(child, depth + 1)
        merged = dict(objects.metadata(result.composite))
        for k in ("annotations", "labels"):
            merged[k] = {**(merged.get(k) or {}), **(meta.get(k) or {})}
        composite = {**result.composite, "metadata": merged}
        result.composite = self.session.unchanged(owner_of(composite), composite)
        return result

    def _publish(self, root: Identity, rendered: Rendered) -> None:
        """Later composites of this pass see ``rendered`` and its tree, as a reconcile after it
        would; what it composed in the previous pass and no longer does is gone."""
        tree = {identity(r.composite): r.composite for r in rendered.walk()}
        stale, todo = [], list(self._owned.get(root, ()))
        while todo:
            ident = todo.pop()
            stale.append(ident)
            todo.extend(self._owned.get(ident, ()))
        for ident in stale:
            if ident not in tree:
                self._env.restore(ident)
        for obj in tree.values():
            self._env.put(obj)

    def _run(self, xr: Obj, observed: Mapping[str, Any]) -> Rendered:
        ident = identity(xr)
        session = self.session
        asked = session.requirements.get(ident) or session.kind_requirements.get(ident[:2])
        required = {n: self._env.select(r) for n, r in asked.items()} if asked else {}
        for rounds in range(1, MAX_REQUIREMENT_ROUNDS + 1):
            call = session.call(xr, observed, required)
            if call.fatal is not None:
                raise RenderError(f"{manifests.identity(xr)}: {call.fatal}")
            if call.requirements == asked:
                session.requirements[ident] = call.requirements
                session.learn(ident[:2], call.requirements)
                return _rendered(call, rounds)
            asked = call.requirements
            required = {name: self._env.select(r) for name, r in asked.items()}
        raise RenderError(
            f"{manifests.identity(xr)}: requirements did not settle after "
            f"{MAX_REQUIREMENT_ROUNDS} calls"
        )

    def _ordered(self, roots: list[Obj]) -> list[Obj]:
        rank = _kind_order({identity(r)[:2] for r in roots}, self.session.requires)
        return sorted(roots, key=lambda r: (rank[identity(r)[:2]], identity(r)))


def _kind_order(
    kinds: set[tuple[str, str]], requires: Mapping[tuple[str, str], set[tuple[str, str]]]
) -> dict[tuple[str, str], int]:
    """Kinds ranked so that a kind comes after every kind it requires (by name among equals;
    a cycle is broken at its first kind by name)."""
    remaining = sorted(kinds)
    order: list[tuple[str, str]] = []
    while remaining:
        waiting = set(remaining)
        ready = [k for k in remaining if not (requires.get(k, set()) & waiting) - {k}]
        pick = (ready or remaining)[0]
        order.append(pick)
        remaining.remove(pick)
    return {k: i for i, k in enumerate(order)}


def _matches(obj: Obj, r: Requirement) -> bool:
    meta = objects.metadata(obj)
    if obj.get("apiVersion") != r.api_version or obj.get("kind") != r.kind:
        return False
    if r.namespace and meta.get("namespace") != r.namespace:
        return False
    if r.match_name is not None:
        return bool(meta.get("name") == r.match_name)
    labels = meta.get("labels") or {}
    return all(labels.get(k) == v for k, v in (r.match_labels or {}).items())


def request_for(
    xr: Obj, observed: Mapping[str, Obj], required: Mapping[str, list[Obj]]
) -> fnv1.RunFunctionRequest:
    """The RunFunctionRequest Crossplane would send with this composite, observed state and
    required resources, tagged with a hash of its content as Crossplane tags requests."""
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(capabilities=_CAPABILITIES))
    fill_struct(req.observed.composite.resource, xr)
    for key in sorted(observed):
        fill_struct(req.observed.resources[key].resource, observed[key])
    for name in sorted(required):
        answer = req.required_resources[name]
        answer.SetInParent()  # answered, if with nothing
        for obj in required[name]:
            fill_struct(answer.items.add().resource, obj)
    req.meta.tag = hashlib.sha256(req.SerializeToString(deterministic=True)).hexdigest()
    return req


def _labelled(key: str, obj: Obj, xr: Obj) -> Obj:
    """One composed resource annotated with its composition resource name, labelled with its
    owner and given a controller reference to it, as Crossplane does (v2.3.0 internal/controller/
    apiextensions/composite/composition_render.go): the reference's kind tells a deployment's
    replicas from those of a ModelService of the same name. Its uid is the owner's, when it has
    one."""
    controller = {**_reference(xr), "controller": True, "blockOwnerDeletion": True}
    labelled = _composed_by(xr, key, obj, controller)
    if "name" not in labelled["metadata"]:
        labelled["metadata"]["generateName"] = f"{objects.name(xr)}-"
    return labelled


def _reference(xr: Obj) -> Obj:
    """An owner reference to ``xr``, without its flags: with its uid when it has one."""
    meta = objects.metadata(xr)
    name = meta.get("name", "")
    reference = {"apiVersion": xr.get("apiVersion"), "kind": xr.get("kind"), "name": name}
    if meta.get("uid"):
        reference["uid"] = meta["uid"]
    return reference


def _composed_by(xr: Obj, key: str, obj: Obj, reference: Obj) -> Obj:
    """``obj`` as composed resource ``key`` of ``xr``: annotated with that name, labelled with
    its owner's, and in its owner's namespace and controlled by ``reference`` unless it says
    otherwise."""
    obj_meta = dict(objects.metadata(obj))
    obj_meta["annotations"] = {**objects.annotations(obj), RESOURCE_NAME: key}
    obj_meta["labels"] = {**objects.labels(obj), COMPOSITE_LABEL: objects.name(xr)}
    if namespace := objects.namespace(xr):
        obj_meta.setdefault("namespace", namespace)
    obj_meta.setdefault("ownerReferences", [reference])
    return {**obj, "metadata": obj_meta}


def _rendered(call: _Call, rounds: int) -> Rendered:
    xr, answer = call.xr, call.answer
    assert answer is not None
    status = {**objects.status(xr), **answer.status}
    status["conditions"] = [
        _ready_condition(answer.ready, answer.composite_ready),
        *answer.conditions,
    ]
    # A composite that publishes the status it already has stays the same object, so what was
    # derived from it (its calls, its admission) is found again.
    composite = xr if status == xr.get("status") else {**xr, "status": status}
    return Rendered(
        composite=composite,
        resources=dict(answer.resources),
        ready=dict(answer.ready),
        results=list(answer.results),
        rounds=rounds,
        call=call,
        nested=answer.nested,
    )


def _ready_condition(ready: Mapping[str, bool], composite: str) -> Obj:
    """The Ready condition Crossplane writes (v2.3.0 internal/controller/apiextensions/composite/
    reconciler.go): the composite's own readiness, when the function gives it, supersedes its
    composed resources', and a composite marked not ready reads ``Creating`` (its own conditions
    say why). Crossplane then writes no message; render still names the unready resources, which
    is how the tree tells which they are."""
    unready = sorted(k for k, ok in ready.items() if not ok)
    if composite == "False" and not unready:
        return {"type": "Ready", "status": "False", "reason": "Creating"}
    if not unready or composite == "True":
        return {"type": "Ready", "status": "True", "reason": "Available"}
    return {
        "type": "Ready",
        "status": "False",
        "reason": "Creating",
        "message": f"Unready resources: {', '.join(unready)}",
    }


def _condition(c: Condition) -> Obj:
    out = {"type": c.type, "status": c.status, "reason": c.reason}
    if c.message:
        out["message"] = c.message
    return out


def _result(e: Event) -> Obj:
    out = {
        "apiVersion": RESULT_API_VERSION,
        "kind": "Result",
        "step": STEP,
        "severity": f"SEVERITY_{e.severity.upper()}",
        "message": e.message,
    }
    if e.reason:
        out["reason"] = e.reason
    return out


def _resource_name(obj: Obj) -> str | None:
    return objects.annotations(obj).get(RESOURCE_NAME)


MAX_PASSES = 10
"""Passes a render may take: one per level of the tree that waits on observed state, whatever
the fleet's size (deployment -> replicas observed Ready -> their endpoints -> services that
select them -> routes observed programmed, plus what clusters wait on). The loop stops at the
fixed point, so the bound only caps a tree that never settles."""

Simulate = Callable[[Mapping[str, Obj]], dict[str, Obj]]
"""Given a composite's desired composed resources by key, what a cluster would report for them."""


def render_documents(
    registry: Registry,
    inputs: Iterable[Obj],
    observed: Iterable[Obj] = (),
    admit: Admit | None = None,
    simulate: Simulate | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Obj]:
    """Render every composite until a further pass changes nothing, as reconciles would.

    Each pass sees what the previous one produced, as Crossplane's next reconcile would:
    composites carry the status their composition published (an InferenceCluster's
    providerConfigRef, a ModelReplica's ModelServing) for whoever requires them, and composed
    resources exist, so they are observed (as ``simulate`` reports them, when given). Observed
    resources supplied by the user always win over those a pass produced. ``progress`` hears
    (pass, composites rendered so far) after each composite.
    """
    return render_passes(registry, inputs, observed, admit, simulate, progress)[0]


def render_passes(
    registry: Registry,
    inputs: Iterable[Obj],
    observed: Iterable[Obj] = (),
    admit: Admit | None = None,
    simulate: Simulate | None = None,
    progress: Callable[[int, int], None] | None = None,
    *,
    through_function: bool = False,
) -> tuple[list[Obj], int]:
    """``render_documents``, and how many passes it took (the last one changed nothing).
    ``through_function``: every call goes through the FunctionRunner (``Session``)."""
    # A render allocates millions of dicts and lists and keeps most until it ends, and none
    # form cycles (reference counting frees what it drops). The cyclic collector, at any
    # threshold, walks every young survivor for nothing (a fleet's render spent a third of its
    # time there at the defaults, and 70 ms in one collection at a raised threshold). What
    # survives joins the oldest generation untraversed, where it would end up anyway.
    with no_cycle_collection(untraversed=True):
        # As the function reads them off the wire: integral numbers are ints.
        inputs, supplied = [plain(o) for o in inputs], [plain(o) for o in observed]
        session = Session(registry, through_function=through_function)
        environment: list[Obj] = inputs
        produced: dict[Owner, Mapping[str, Obj]] = {}
        docs: list[Obj] = []
        tally = _Tally(progress)
        for passes in range(1, MAX_PASSES + 1):
            tally.passes = passes
            renderer = Renderer(
                registry, environment, supplied, admit, tally, session=session, produced=produced
            )
            composites = renderer.render_all()
            if not composites:
                raise RenderError(
                    "no composite resource in the input: this project composes "
                    + ", ".join(registry.kinds())
                )
            rendered = [doc for r in composites for doc in r.documents()]
            if rendered == docs:
                break
            docs = rendered
            tree = [r for c in composites for r in c.walk()]
            environment = _with_status(inputs, [r.composite for r in tree])
            produced = {owner_of(r.composite): session.observed(r, simulate) for r in tree}
            session.next_pass()
        return docs, passes


@dataclass
class _Tally:
    """Counts composites rendered across passes for a progress report."""

    progress: Callable[[int, int], None] | None
    passes: int = 0
    composites: int = 0

    def __call__(self) -> None:
        self.composites += 1
        if self.progress is not None:
            self.progress(self.passes, self.composites)


def _with_status(inputs: list[Obj], composites: list[Obj]) -> list[Obj]:
    """The inputs with each rendered composite in place of its input, plus nested composites."""
    by_id = {identity(c): c for c in composites}
    return [by_id.pop(identity(o), o) for o in inputs] + list(by_id.values())


def report_unmatched(loaded: Sequence[manifests.Manifest], command: str) -> bool:
    """Name on stderr each input that claims our group with a kind it does not define or a
    version it does not serve, as validate words it; whether any does. Only composites are
    admitted while rendering, so such an object (an InferenceClass in v1beta1, a misspelled
    ModelDeployment) would otherwise be dropped or read as it is, silently."""
    from modelplane.compose.admission import Admission

    admission = Admission.default()
    unmatched = False
    for m in loaded:
        problem = admission.unmatched(str(m.obj.get("apiVersion")), str(m.obj.get("kind")))
        if problem is not None:
            unmatched = True
            where = f"{m.where_is(problem.path)}: {manifests.identity(m.obj)}"
            exits.error(command, f"{where}: {problem}")
    return unmatched


def api_server_admission() -> Admit:
    """The one admission every command and the function apply (``compose.admission``): the
    API server's for the kinds under ``apis/``, then the composers' own checks; others pass."""
    from modelplane.compose.admission import Admission

    admission = Admission.default()

    def admit(obj: Obj) -> tuple[Obj, list[str]]:
        admitted = admission.admit_input(obj)
        return admitted.object, [str(e) for e in admitted.errors]

    return admit


@dataclass(frozen=True)
class Shown:
    """What ``render`` prints beyond the objects: the function's Result documents (yaml, json;
    ``crossplane render`` leaves them out too unless asked), Usages in the tree."""

    results: bool = False
    usages: bool = False


def render_command(
    paths: Sequence[str],
    observed_paths: Sequence[str],
    output: str,
    ready_copies: int | None = None,
    shown: Shown = Shown(),
) -> int:
    """``modelplane render``: exit codes as every command's (``modelplane.exits``)."""
    from modelplane.compose.registry import default_registry

    # The function's request logs belong to `serve`; here stdout is the rendered stream.
    logging.configure(logging.Level.DISABLED)
    try:
        loaded = manifests.load(paths)
        observed = [m.obj for m in manifests.load(observed_paths)] if observed_paths else []
    except manifests.ManifestError as e:
        exits.error(COMMAND, str(e))
        return exits.UNREADABLE
    registry = default_registry()
    if _refused(loaded):
        return exits.INVALID
    where = {manifests.identity(m.obj): m for m in loaded}
    simulate = _simulation(ready_copies)
    progress = output_.Progress()
    try:
        docs = render_documents(
            registry, [m.obj for m in loaded], observed, api_server_admission(), simulate, progress
        )
    except RenderError as e:
        for line in located(str(e), where):
            exits.error(COMMAND, line)
        return exits.INVALID
    finally:
        progress.close()
    _print_rendered(docs, output, shown, registry)
    return verdict(docs, where, COMMAND)


def _refused(loaded: Sequence[manifests.Manifest]) -> bool:
    """Whether an input lacks its type or name, or claims our group with a kind or version it
    does not have (each named on stderr)."""
    try:
        for m in loaded:
            manifests.require_type(m)
            manifests.require_name(m)
    except manifests.ManifestError as e:
        exits.error(COMMAND, str(e))
        return True
    return report_unmatched(loaded, COMMAND)


def _simulation(ready_copies: int | None) -> Simulate:
    from modelplane.simulate import simulate_observed, simulate_stack

    # Without a simulation the fleet's clusters are taken as prepared (their serving stacks
    # installed), so the scheduler places on them; workloads are created, not yet observed.
    if ready_copies is None:
        return simulate_stack
    return functools.partial(simulate_observed, ready_copies=ready_copies)


def _print_rendered(docs: list[Obj], output: str, shown: Shown, registry: Registry) -> None:
    printed = docs if shown.results else output_.without_results(docs)
    if output == "json":
        sys.stdout.write(output_.json_list(printed))
    elif output == "name":
        sys.stdout.write(output_.names(docs))
    elif output == "tree":
        output_.print_tree(output_.tree(docs, _composable(registry)), show_usages=shown.usages)
    else:
        sys.stdout.write(manifests.dump(printed))


COMMAND = "render"
_SCHEDULED = "ReplicasScheduled"


def _composable(registry: Registry) -> Callable[[Obj], bool]:
    return lambda o: registry.handles(str(o.get("apiVersion", "")), str(o.get("kind", "")))


_INVALID = " is invalid:"


def located(message: str, where: Mapping[str, manifests.Manifest]) -> list[str]:
    """The message after the file and line of the input it is about (when it names one); an
    invalid composite's errors one line each, at the line of the field at fault."""
    subject = next((k for k in where if message.startswith((f"{k}:", f"{k} "))), None)
    if subject is None:
        return message.splitlines()
    found = where[subject]
    head, *errors = message.splitlines()
    if head == subject + _INVALID and errors:
        return [
            f"{found.where_is(e.strip().partition(': ')[0])}: {subject}: {e.strip()}"
            for e in errors
        ]
    return [f"{found.where}: {line}" for line in message.splitlines()]


# Exit codes follow what the user must do (README, "Exit codes"). A False condition with one of
# these reasons names something that does not exist, or selects nothing: fix the input (1).
FIX_INPUT = frozenset(
    {
        "InvalidSelector",
        "ClassNotFound",
        "ClusterNotFound",
        "ModelCacheNotFound",
        ENTRY_MATCHES_NOTHING,
    }
)


def _failed(doc: Obj) -> list[Obj]:
    return [c for c in objects.status(doc).get("conditions") or [] if c.get("status") == "False"]


def _short(doc: Obj) -> bool:
    """A ModelDeployment that could not place every replica for want of capacity."""
    return any(
        c.get("type") == _SCHEDULED and c.get("reason") not in FIX_INPUT for c in _failed(doc)
    )


def _replica_labels(deployment: Obj) -> dict[str, str]:
    template = objects.mapping(deployment, "spec", "template")
    return {**objects.labels(template), DEPLOYMENT: str(deployment["metadata"]["name"])}


def _selects(entry: Obj, namespace: str, labels: Sequence[tuple[str, Mapping[str, Any]]]) -> bool:
    wanted = objects.mapping(entry, "selector", "matchLabels")
    return any(
        ns == namespace and all(have.get(k) == v for k, v in wanted.items()) for ns, have in labels
    )


def _starved(service: Obj, short: Sequence[Obj], replicas: Sequence[Obj]) -> bool:
    """Whether every entry that selects no ModelReplica would select one of a deployment short
    of capacity: its replicas are missing because they do not fit, not because of a typo."""
    ns = namespace_of(service)
    entries = [e for e in objects.spec(service).get("endpoints") or [] if isinstance(e, dict)]
    present = [(namespace_of(r), objects.labels(r)) for r in replicas]
    wanted = [(namespace_of(d), _replica_labels(d)) for d in short]
    empty = [e for e in entries if not _selects(e, ns, present)]
    return bool(empty) and all(_selects(e, ns, wanted) for e in empty)


@dataclass(frozen=True)
class _Shortfall:
    """The deployments that could not place every replica for want of capacity, and the
    replicas there are: what tells a service entry that selects nothing because its replicas
    do not fit from one that names nothing (a typo)."""

    short: list[Obj]
    short_ids: set[int]
    replicas: list[Obj]

    @classmethod
    def of(cls, docs: Sequence[Obj]) -> _Shortfall:
        short = [d for d in docs if d.get("kind") == "ModelDeployment" and _short(d)]
        replicas = [d for d in docs if d.get("kind") == "ModelReplica"]
        return cls(short, {id(d) for d in short}, replicas)

    def fix_input(self, doc: Obj, condition: Obj) -> bool | None:
        """Whether a failed condition of ``doc`` asks to fix the input (True) or to add
        capacity (False); None when it is neither, and goes unreported."""
        reason = condition.get("reason")
        if reason == ENTRY_MATCHES_NOTHING and _starved(doc, self.short, self.replicas):
            return False
        fix = reason in FIX_INPUT
        if not fix and not (condition.get("type") == _SCHEDULED and id(doc) in self.short_ids):
            return None
        return fix


def verdict(docs: Sequence[Obj], where: Mapping[str, manifests.Manifest], command: str) -> int:
    """1 when an input names something that does not exist or selects nothing (a class, a
    cluster, a cache, an invalid selector, a ModelService entry), 3 when a ModelDeployment could
    not place every replica (and a service entry selects nothing only because of that), else 0.
    Each problem is named on stderr at its input's line."""
    shortfall = _Shortfall.of(docs)
    invalid = False
    for doc in docs:
        identity = manifests.identity(doc)
        if identity not in where:
            continue  # a composed composite: its input's own condition names the cause
        for c in _failed(doc):
            fix = shortfall.fix_input(doc, c)
            if fix is None:
                continue
            invalid = invalid or fix
            for line in located(f"{identity}: {c.get('message', '')}", where):
                exits.error(command, line)
    return exits.INVALID if invalid else exits.SHORT if shortfall.short else exits.OK
