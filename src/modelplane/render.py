"""`modelplane render`: run composition trees in process, as Crossplane would.

Each composite is sent through the real FunctionRunner as a RunFunctionRequest, so what renders
here is exactly what the function returns under Crossplane. Crossplane's required-resources
round trip is reproduced: a composer asks for objects by kind and name or labels, render answers
from the input manifests and calls again until the requirements stop changing. Composed
resources that are themselves composites (a ModelDeployment's ModelReplicas) are rendered in
turn. Output follows `crossplane render`: each composite with its status, its composed resources
annotated with their composition resource name, then its results.
"""

from __future__ import annotations

import copy
import functools
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane import exits, manifests
from modelplane import output as output_
from modelplane.composer import Registry, Requirement
from modelplane.function import FunctionRunner
from modelplane.kube.names import dns_label
from modelplane.structs import dict_to_struct, struct_to_dict

Obj = dict[str, Any]

RESOURCE_NAME = "crossplane.io/composition-resource-name"
COMPOSITE_LABEL = "crossplane.io/composite"
RESULT_API_VERSION = "render.crossplane.io/v1beta1"
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
    request: fnv1.RunFunctionRequest | None = None
    """The last request sent: the one a steady-state reconcile repeats."""

    def walk(self) -> Iterator[Rendered]:
        """This composite and every nested one, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()

    def documents(self) -> list[Obj]:
        """This composite, its composed resources, its results, then each child's, in order."""
        child_keys = {_annotation(c.composite, RESOURCE_NAME) for c in self.children}
        docs = [self.composite]
        docs += [r for k, r in self.resources.items() if k not in child_keys]
        docs += self.results
        for child in self.children:
            docs += child.documents()
        return docs


class Renderer:
    def __init__(
        self,
        registry: Registry,
        environment: Sequence[Obj],
        observed: Sequence[Obj] = (),
        admit: Admit | None = None,
        on_render: Callable[[], None] | None = None,
    ) -> None:
        self.runner = FunctionRunner(registry)
        self.on_render = on_render
        self.registry = registry
        self.environment = list(environment)
        # An input that names its owner and its composition resource name is what Crossplane
        # would observe as that owner's composed resource (a replica placed before a drain).
        owned = [
            o
            for o in self.environment
            if _label(o, COMPOSITE_LABEL) and _annotation(o, RESOURCE_NAME)
        ]
        self.observed = [*observed, *owned]
        self.admit = admit

    def composites(self) -> list[Obj]:
        """Input objects this project composes and that no other input composite owns."""
        xrs = [o for o in self.environment if self._composable(o)]
        owners = {_meta(o).get("name") for o in xrs}
        return [o for o in xrs if _label(o, COMPOSITE_LABEL) not in owners]

    def render_all(self) -> list[Rendered]:
        return [self.render(xr) for xr in self.composites()]

    def render(self, xr: Obj, depth: int = 0) -> Rendered:
        if depth > 8:
            raise RenderError(f"{manifests.identity(xr)}: composites nest deeper than 8 levels")
        xr = self._admitted(xr)
        observed = self._observed_for(xr)
        rendered = self._run(xr, observed)
        if self.on_render is not None:
            self.on_render()
        for key, res in list(rendered.resources.items()):
            if self._composable(res):
                rendered.children.append(self._render_child(rendered.composite, key, res, depth))
        return rendered

    def _render_child(self, parent: Obj, key: str, child: Obj, depth: int) -> Rendered:
        child = copy.deepcopy(child)
        meta = child.setdefault("metadata", {})
        meta.setdefault("name", dns_label(_meta(parent).get("name", ""), key))
        result = self.render(child, depth + 1)
        for k in ("annotations", "labels"):
            result.composite["metadata"].setdefault(k, {}).update(meta.get(k) or {})
        return result

    def _run(self, xr: Obj, observed: Mapping[str, Obj]) -> Rendered:
        required: dict[str, list[Obj]] = {}
        asked: dict[str, Requirement] | None = None
        for rounds in range(1, MAX_REQUIREMENT_ROUNDS + 1):
            req = _request(xr, observed, required)
            rsp = self.runner.run(req)
            fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
            if fatal:
                raise RenderError(f"{manifests.identity(xr)}: {'; '.join(fatal)}")
            wanted = _requirements(rsp)
            if wanted == asked:
                rendered = _rendered(xr, rsp, rounds)
                rendered.request = req
                return rendered
            asked = wanted
            required = {name: self._resolve(r) for name, r in wanted.items()}
        raise RenderError(
            f"{manifests.identity(xr)}: requirements did not settle after "
            f"{MAX_REQUIREMENT_ROUNDS} calls"
        )

    def _resolve(self, r: Requirement) -> list[Obj]:
        return [o for o in self.environment if _matches(o, r)]

    def _observed_for(self, xr: Obj) -> dict[str, Obj]:
        name = _meta(xr).get("name")
        sole = len(self.composites()) == 1
        out: dict[str, Obj] = {}
        for o in self.observed:
            key = _annotation(o, RESOURCE_NAME)
            owner = _label(o, COMPOSITE_LABEL)
            if key and (owner == name or (owner is None and sole)):
                out.setdefault(key, o)  # the first supplier wins: user-supplied come first
        return out

    def _admitted(self, xr: Obj) -> Obj:
        if self.admit is None:
            return copy.deepcopy(xr)
        obj, errors = self.admit(xr)
        if errors:
            raise RenderError(
                f"{manifests.identity(xr)} is invalid:\n" + "\n".join(f"  {e}" for e in errors)
            )
        return obj

    def _composable(self, obj: Obj) -> bool:
        return self.registry.handles(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))


def _request(
    xr: Obj, observed: Mapping[str, Obj], required: Mapping[str, list[Obj]]
) -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest(
        meta=fnv1.RequestMeta(capabilities=_CAPABILITIES),
        observed=fnv1.State(composite=fnv1.Resource(resource=dict_to_struct(xr))),
    )
    for key, obj in observed.items():
        req.observed.resources[key].resource.CopyFrom(dict_to_struct(obj))
    for name, objs in required.items():
        req.required_resources[name].items.extend(
            fnv1.Resource(resource=dict_to_struct(o)) for o in objs
        )
    return req


def _requirements(rsp: fnv1.RunFunctionResponse) -> dict[str, Requirement]:
    out = {}
    for name, s in rsp.requirements.resources.items():
        selector = s.WhichOneof("match")
        out[name] = Requirement(
            api_version=s.api_version,
            kind=s.kind,
            match_name=s.match_name if selector == "match_name" else None,
            match_labels=dict(s.match_labels.labels) if selector == "match_labels" else None,
            namespace=s.namespace or None,
        )
    return out


def _matches(obj: Obj, r: Requirement) -> bool:
    meta = _meta(obj)
    if obj.get("apiVersion") != r.api_version or obj.get("kind") != r.kind:
        return False
    if r.namespace and meta.get("namespace") != r.namespace:
        return False
    if r.match_name is not None:
        return bool(meta.get("name") == r.match_name)
    labels = meta.get("labels") or {}
    return all(labels.get(k) == v for k, v in (r.match_labels or {}).items())


def _rendered(xr: Obj, rsp: fnv1.RunFunctionResponse, rounds: int) -> Rendered:
    name = _meta(xr).get("name", "")
    namespace = _meta(xr).get("namespace")
    out = Rendered(composite=xr, rounds=rounds)
    for key in sorted(rsp.desired.resources):
        res = rsp.desired.resources[key]
        obj = struct_to_dict(res.resource)
        meta = obj.setdefault("metadata", {})
        meta.setdefault("annotations", {})[RESOURCE_NAME] = key
        meta.setdefault("labels", {})[COMPOSITE_LABEL] = name
        if "name" not in meta:
            meta["generateName"] = f"{name}-"
        if namespace and "namespace" not in meta:
            meta["namespace"] = namespace
        out.resources[key] = obj
        out.ready[key] = res.ready == fnv1.READY_TRUE
    status = struct_to_dict(rsp.desired.composite.resource).get("status") or {}
    xr_status = {**(xr.get("status") or {}), **status}
    xr_status["conditions"] = [_ready_condition(out.ready)] + [
        _condition(c) for c in rsp.conditions
    ]
    xr["status"] = xr_status
    out.results = [_result(r) for r in rsp.results]
    return out


def _ready_condition(ready: Mapping[str, bool]) -> Obj:
    unready = sorted(k for k, ok in ready.items() if not ok)
    if not unready:
        return {"type": "Ready", "status": "True", "reason": "Available"}
    return {
        "type": "Ready",
        "status": "False",
        "reason": "Creating",
        "message": f"Unready resources: {', '.join(unready)}",
    }


def _condition(c: fnv1.Condition) -> Obj:
    out = {
        "type": c.type,
        "status": fnv1.Status.Name(c.status).removeprefix("STATUS_CONDITION_").title(),
        "reason": c.reason,
    }
    if c.message:
        out["message"] = c.message
    return out


def _result(r: fnv1.Result) -> Obj:
    out = {
        "apiVersion": RESULT_API_VERSION,
        "kind": "Result",
        "step": STEP,
        "severity": fnv1.Severity.Name(r.severity),
        "message": r.message,
    }
    if r.reason:
        out["reason"] = r.reason
    return out


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _label(obj: Obj, key: str) -> str | None:
    return (_meta(obj).get("labels") or {}).get(key)


def _annotation(obj: Obj, key: str) -> str | None:
    return (_meta(obj).get("annotations") or {}).get(key)


# A pass per level of the tree that waits on observed state: deployment -> replicas observed
# Ready -> their endpoints -> services that select them -> routes observed programmed, plus what
# clusters wait on; the loop stops at the fixed point, so the bound only caps a tree that never
# settles.
MAX_PASSES = 10

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
    inputs, supplied = list(inputs), list(observed)
    environment, produced = inputs, list[Obj]()
    docs: list[Obj] = []
    tally = _Tally(progress)
    for _ in range(MAX_PASSES):
        tally.passes += 1
        observed_now = [*supplied, *produced]
        composites = Renderer(registry, environment, observed_now, admit, tally).render_all()
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
        produced = _unsupplied([o for r in tree for o in _observed(r, simulate)], supplied)
    return docs


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
    by_id = {_identity(c): c for c in composites}
    replaced = [by_id.pop(_identity(o), o) for o in inputs]
    return replaced + list(by_id.values())


def _observed(rendered: Rendered, simulate: Simulate | None) -> list[Obj]:
    children = {_annotation(c.composite, RESOURCE_NAME): c.composite for c in rendered.children}
    resources = {k: children.get(k, r) for k, r in rendered.resources.items()}
    if simulate is None:
        return list(resources.values())
    owner = _meta(rendered.composite).get("name")
    out = []
    for key, obj in simulate(resources).items():
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        meta.setdefault("annotations", {})[RESOURCE_NAME] = key
        meta.setdefault("labels", {})[COMPOSITE_LABEL] = owner
        out.append(obj)
    return out


def _unsupplied(produced: list[Obj], supplied: list[Obj]) -> list[Obj]:
    def key(o: Obj) -> tuple[str | None, str | None]:
        return _label(o, COMPOSITE_LABEL), _annotation(o, RESOURCE_NAME)

    taken = {key(o) for o in supplied}
    return [o for o in produced if key(o) not in taken]


def _identity(obj: Obj) -> tuple[str, str, str, str]:
    meta = _meta(obj)
    return (
        str(obj.get("apiVersion")),
        str(obj.get("kind")),
        str(meta.get("namespace") or ""),
        str(meta.get("name") or ""),
    )


def api_server_admission() -> Admit:
    """The one admission every command and the function apply (``compose.admission``): the
    API server's for the kinds under ``apis/``, then the composers' own checks; others pass."""
    from modelplane.compose.admission import Admission

    admission = Admission.default()

    def admit(obj: Obj) -> tuple[Obj, list[str]]:
        admitted = admission.admit_input(obj)
        return admitted.object, [str(e) for e in admitted.errors]

    return admit


def render_command(
    paths: Sequence[str],
    observed_paths: Sequence[str],
    output: str,
    ready_copies: int | None = None,
) -> int:
    """``modelplane render``: exit codes as every command's (``modelplane.exits``)."""
    from modelplane.compose.registry import default_registry
    from modelplane.simulate import simulate_observed, simulate_stack

    # The function's request logs belong to `serve`; here stdout is the rendered stream.
    logging.configure(logging.Level.DISABLED)
    try:
        loaded = manifests.load(paths)
        observed = [m.obj for m in manifests.load(observed_paths)] if observed_paths else []
    except manifests.ManifestError as e:
        exits.error(COMMAND, str(e))
        return exits.UNREADABLE
    registry = default_registry()
    try:
        for m in loaded:
            manifests.require_type(m)
            manifests.require_name(m)
    except manifests.ManifestError as e:
        exits.error(COMMAND, str(e))
        return exits.INVALID
    where = {manifests.identity(m.obj): m for m in loaded}
    # Without a simulation the fleet's clusters are taken as prepared (their serving stacks
    # installed), so the scheduler places on them; workloads are created, not yet observed.
    simulate = (
        simulate_stack
        if ready_copies is None
        else functools.partial(simulate_observed, ready_copies=ready_copies)
    )
    progress = output_.Progress()
    try:
        docs = render_documents(
            registry, [m.obj for m in loaded], observed, api_server_admission(), simulate, progress
        )
    except RenderError as e:
        for line in _located(str(e), where):
            exits.error(COMMAND, line)
        return exits.INVALID
    finally:
        progress.close()
    if output == "json":
        sys.stdout.write(output_.json_list(docs))
    elif output == "name":
        sys.stdout.write(output_.names(docs))
    elif output == "tree":
        output_.print_tree(output_.tree(docs, _composable(registry)))
    else:
        sys.stdout.write(output_.yaml_stream(docs))
    return _verdict(docs, where)


COMMAND = "render"
_SCHEDULED = "ReplicasScheduled"


def _composable(registry: Registry) -> Callable[[Obj], bool]:
    return lambda o: registry.handles(str(o.get("apiVersion", "")), str(o.get("kind", "")))


_INVALID = " is invalid:"


def _located(message: str, where: Mapping[str, manifests.Manifest]) -> list[str]:
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


def _verdict(docs: Sequence[Obj], where: Mapping[str, manifests.Manifest]) -> int:
    """1 when a deployment's selectors are invalid, 3 when one could not place every replica
    it asks for (each named on stderr), else 0."""
    invalid = short = False
    for doc in docs:
        if doc.get("kind") != "ModelDeployment":
            continue
        scheduled = next(
            (
                c
                for c in (doc.get("status") or {}).get("conditions") or []
                if c.get("type") == _SCHEDULED
            ),
            None,
        )
        if scheduled is None or scheduled.get("status") != "False":
            continue
        identity = manifests.identity(doc)
        for line in _located(f"{identity}: {scheduled.get('message', '')}", where):
            exits.error(COMMAND, line)
        if scheduled.get("reason") == "InvalidSelector":
            invalid = True
        else:
            short = True
    return exits.INVALID if invalid else exits.SHORT if short else exits.OK
