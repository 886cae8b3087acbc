"""The composer tests' kit. Composing through the real FunctionRunner, as Crossplane calls it:
observed and required resources go in as Structs, so composers read them as the lazy views
production hands them. And a ModelDeployment's requirements answered, for reconciles through the
runner (``reconcile_deployment``) or in process (``composed_deployment``, for tests that read the
composer's own ``Result``)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.compose.modeldeployment.composer import (
    CLASSES,
    CLUSTERS,
    REPLICAS,
    compose_deployment,
)
from modelplane.compose.modeldeployment.drain import HOLDS, ROUTES
from modelplane.compose.modeldeployment.footprint import CACHE
from modelplane.compose.registry import default_registry
from modelplane.composer import Inputs, Result
from modelplane.function import FunctionRunner
from modelplane.simulate import simulate_observed
from modelplane.structs import dict_to_struct, struct_to_dict
from tests.fleet.builders import H100

Obj = dict[str, Any]


@dataclass(frozen=True)
class Response:
    fatal: str | None
    resources: dict[str, Obj]
    ready: dict[str, str]
    conditions: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    """(status, reason, message) by condition type."""
    events: list[tuple[str, str]] = field(default_factory=list)
    """(severity, message) of every non-fatal result."""
    composite_ready: str = "READY_UNSPECIFIED"
    """The composite's own readiness, which Crossplane puts before its composed resources'."""
    status: Obj = field(default_factory=dict)
    """The composite's desired status fields (conditions aside)."""
    by_name: dict[str, tuple[str, str, str | None]] = field(default_factory=dict)
    """Requirements selecting one object by name: (kind, name, namespace) by requirement."""
    by_labels: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)
    """Requirements selecting by labels: (kind, labels) by requirement."""

    def condition(self, type_: str) -> tuple[str, str, str]:
        return self.conditions[type_]


def request(
    composite: Obj,
    observed: Mapping[str, Obj] | None = None,
    required: Mapping[str, list[Obj] | None] | None = None,
) -> fnv1.RunFunctionRequest:
    """``required`` maps a requirement name to its items; None (or left out): not fetched yet."""
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.CopyFrom(dict_to_struct(composite))
    for key, obj in (observed or {}).items():
        req.observed.resources[key].resource.CopyFrom(dict_to_struct(obj))
    for name, items in (required or {}).items():
        if items is None:
            continue
        resources = req.required_resources[name]  # present even when it matched nothing
        for obj in items:
            resources.items.add().resource.CopyFrom(dict_to_struct(obj))
    return req


def run(
    composite: Obj,
    observed: Mapping[str, Obj] | None = None,
    required: Mapping[str, list[Obj] | None] | None = None,
) -> Response:
    rsp = FunctionRunner(default_registry()).run(request(composite, observed, required))
    fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    return Response(
        fatal=fatal[0] if fatal else None,
        resources={k: struct_to_dict(r.resource) for k, r in rsp.desired.resources.items()},
        ready={k: fnv1.Ready.Name(r.ready) for k, r in rsp.desired.resources.items()},
        conditions={
            c.type: (
                fnv1.Status.Name(c.status).removeprefix("STATUS_CONDITION_").title(),
                c.reason,
                c.message,
            )
            for c in rsp.conditions
        },
        events=[
            (fnv1.Severity.Name(r.severity).removeprefix("SEVERITY_").title(), r.message)
            for r in rsp.results
            if r.severity != fnv1.SEVERITY_FATAL
        ],
        composite_ready=fnv1.Ready.Name(rsp.desired.composite.ready),
        by_name={
            name: (sel.kind, sel.match_name, sel.namespace or None)
            for name, sel in rsp.requirements.resources.items()
            if sel.WhichOneof("match") == "match_name"
        },
        by_labels={
            name: (sel.kind, dict(sel.match_labels.labels))
            for name, sel in rsp.requirements.resources.items()
            if sel.WhichOneof("match") == "match_labels"
        },
        status={
            k: v
            for k, v in struct_to_dict(rsp.desired.composite.resource).get("status", {}).items()
            if k != "conditions"
        },
    )


def reconcile(
    composite: Obj,
    observed: Mapping[str, Obj] | None = None,
    required: Mapping[str, list[Obj] | None] | None = None,
) -> Response:
    """``run`` for a reconcile the test expects to succeed: a fatal result fails the test."""
    rsp = run(composite, observed, required)
    assert rsp.fatal is None, rsp.fatal
    return rsp


def settled(
    composite: Obj, required: Mapping[str, list[Obj] | None], *, copies: int = 1
) -> dict[str, Obj]:
    """What a first reconcile composes, observed ready with ``copies`` ready of each workload."""
    return simulate_observed(copy.deepcopy(reconcile(composite, {}, required).resources), copies)


def deployment_required(
    clusters: list[Obj],
    observed: Mapping[str, Obj] | None = None,
    *,
    replicas: list[Obj] | None = None,
    classes: list[Obj] | None = None,
    gone: tuple[str, ...] = (),
    classes_gone: tuple[str, ...] = (),
    unrouted: bool = False,
    cache: list[Obj] | None = None,
    **more: list[Obj] | None,
) -> dict[str, list[Obj] | None]:
    """A ModelDeployment's requirements answered: ``clusters``, ``classes`` (H100 alone unless
    given), ``replicas`` (the ModelReplicas ``observed`` unless given). ``gone``,
    ``classes_gone``: clusters and classes asked for by name that are not there; ``unrouted``: no
    route names a pool and no hold stands; ``cache``: the ModelCache it mounts (None: not fetched
    yet); ``more``: further answers (None: not fetched yet)."""
    if replicas is None:
        replicas = [o for o in (observed or {}).values() if o.get("kind") == "ModelReplica"]
    required: dict[str, list[Obj] | None] = {
        CLUSTERS: clusters,
        CLASSES: [H100] if classes is None else classes,
        REPLICAS: replicas,
    }
    if unrouted:
        required |= {ROUTES: [], HOLDS: []}
    required |= {f"cluster/{name}": [] for name in gone}
    required |= {f"class/{name}": [] for name in classes_gone}
    if cache is not None:
        required[CACHE] = cache
    return required | more


def reconcile_deployment(
    md: Obj, clusters: list[Obj], observed: Mapping[str, Obj] | None = None, **answers: Any
) -> Response:
    """A ModelDeployment's reconcile through the runner that must succeed; ``answers`` as
    ``deployment_required`` takes them."""
    return reconcile(md, observed, deployment_required(clusters, observed, **answers))


def composed_deployment(
    md: Obj, clusters: list[Obj], observed: Mapping[str, Obj] | None = None, **answers: Any
) -> Result:
    """The deployment composer's own ``Result`` for the same inputs, composed in process."""
    required = deployment_required(clusters, observed, **answers)
    inputs = Inputs(composite=md, required=required, observed=dict(observed or {}))
    return compose_deployment(inputs)


def response_to_dict(rsp: fnv1.RunFunctionResponse) -> dict[str, Any]:
    """A response as plain data: the desired composite and resources, results and conditions."""
    return {
        "desired": {
            "composite": struct_to_dict(rsp.desired.composite.resource),
            "resources": {
                k: {"resource": struct_to_dict(r.resource), "ready": fnv1.Ready.Name(r.ready)}
                for k, r in rsp.desired.resources.items()
            },
        },
        "results": [
            {"severity": fnv1.Severity.Name(r.severity), "message": r.message, "reason": r.reason}
            for r in rsp.results
        ],
        "conditions": [
            {
                "type": c.type,
                "status": fnv1.Status.Name(c.status),
                "reason": c.reason,
                "message": c.message,
            }
            for c in rsp.conditions
        ],
    }
