"""`modelplane routes`: each ModelService's routing table, as the data plane would carry it.

Renders the inputs as ``modelplane render`` does (by default as if every workload had one ready
copy), then, per ModelService in namespace/name order and per InferenceGateway that selects it,
sends a request for ``https://<hostname>/<namespace>/<service>/v1/chat/completions`` through the
composed objects (``dataplane.Fabric``: listener, attached routes, matching rule, filters,
weighted backends, the next cluster's listener) and prints where it ends: the endpoint, the
cluster it runs on (or the external host), its entry's declared weight, and the share of the
service's requests that reach it. Nothing of the composer's plan is read for the table; the plan
only explains the endpoints that are not routed. ``-o json`` and ``-o yaml`` print the same facts
structured (``ServiceRoutes.as_dict``), the share as a fraction of 1.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import yaml

from modelplane import exits, manifests
from modelplane.compose.modelservice.gateways import Skipped, gateways_serving
from modelplane.compose.modelservice.plan import plan_service
from modelplane.compose.shared.frontdoor import by_name, external_backend_name
from modelplane.composer import namespace_of
from modelplane.dataplane import Destination, Fabric, Request
from modelplane.kube import objects
from modelplane.kube.objects import Obj

COMMAND = "routes"
HEADER = ("GATEWAY", "ENDPOINT", "CLUSTER", "WEIGHT", "SHARE")


@dataclass(frozen=True)
class Route:
    """One row of a service's table: where a share of its requests ends on one gateway."""

    gateway: str
    endpoint: str | None = None
    """The service's endpoint the requests reach; None when they reach none of its endpoints
    (``note`` says what they reach instead)."""
    cluster: str = ""
    external: str = ""
    """The host outside the fleet an external endpoint is dialled at."""
    weight: int | None = None
    """The declared weight of the entry that selects the endpoint."""
    share: Fraction | None = None
    """The share of the service's requests that reach it."""
    note: str = ""

    def as_dict(self) -> Obj:
        share = None if self.share is None else round(float(self.share), 6)
        return {
            "gateway": self.gateway,
            "endpoint": self.endpoint,
            "cluster": self.cluster or None,
            "external": self.external or None,
            "weight": self.weight,
            "share": share,
            "note": self.note or None,
        }

    def cells(self) -> tuple[str, ...]:
        return (
            self.gateway,
            self.endpoint or f"({self.note})",
            f"external {self.external}" if self.external else self.cluster,
            "" if self.weight is None else str(self.weight),
            "" if self.share is None else f"{float(self.share) * 100:.2f}%",
        )


@dataclass(frozen=True)
class ServiceRoutes:
    """A ModelService's routing table and what keeps endpoints out of it."""

    namespace: str
    name: str
    matched: int
    ready: int
    routes: tuple[Route, ...]
    served: bool
    """Whether any InferenceGateway serves it."""
    skipped: tuple[Skipped, ...] = ()
    """Gateways that select it but do not serve it, and why."""
    not_ready: tuple[tuple[str, str], ...] = ()
    """Each matched endpoint that is not ready, with why."""
    left_out: tuple[str, ...] = ()
    """Lanes left out because a route holds 16 backends."""

    def as_dict(self) -> Obj:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "endpoints": {"matched": self.matched, "ready": self.ready},
            "served": self.served,
            "routes": [r.as_dict() for r in self.routes],
            "skippedGateways": [
                {"gateway": g.name, "cluster": g.cluster or None, "reason": g.why}
                for g in self.skipped
            ],
            "notReady": [{"endpoint": n, "reason": why} for n, why in self.not_ready],
            "leftOut": list(self.left_out),
        }

    def lines(self) -> list[str]:
        head = f"ModelService/{self.namespace}/{self.name}: "
        lines = [head + f"{self.ready} of {self.matched} endpoints ready"]
        if self.routes:
            lines.extend(_columns([HEADER, *(r.cells() for r in self.routes)]))
        elif not self.served:
            lines.append("  no InferenceGateway serves it")
        lines.extend(f"  gateway {s}" for s in self.skipped)
        lines.extend(f"  not ready: {n}: {why}" for n, why in self.not_ready)
        lines.extend(f"  left out (a route holds 16 backends): {lane}" for lane in self.left_out)
        return lines


def routing(docs: Sequence[Obj]) -> list[ServiceRoutes]:
    """The routing table of every ModelService among ``docs`` (rendered, so with status), in
    namespace and name order."""
    kinds: dict[str, list[Obj]] = {}
    for doc in docs:
        kinds.setdefault(str(doc.get("kind")), []).append(doc)
    services = sorted(
        kinds.get("ModelService", []), key=lambda s: (namespace_of(s), s["metadata"]["name"])
    )
    fabric = Fabric(docs)
    clusters = by_name(kinds.get("InferenceCluster", []))
    endpoints = kinds.get("ModelEndpoint", [])
    gateways = kinds.get("InferenceGateway", [])
    return [service_routes(ms, endpoints, gateways, clusters, fabric) for ms in services]


def as_text(services: Sequence[ServiceRoutes]) -> str:
    return "\n".join(line for s in services for line in [*s.lines(), ""])


def as_json(services: Sequence[ServiceRoutes]) -> str:
    return json.dumps({"services": [s.as_dict() for s in services]}, indent=4) + "\n"


def as_yaml(services: Sequence[ServiceRoutes]) -> str:
    return yaml.safe_dump({"services": [s.as_dict() for s in services]}, sort_keys=False)


def carried(ms: Obj, gateway: Obj, fabric: Fabric) -> list[Destination] | None:
    """Where the gateway's front listener sends the service's requests; None when the gateway
    has published no front Gateway the composed objects hold."""
    published = objects.mapping(gateway, "status", "gateway")
    listener = next(
        (
            li
            for li in fabric.listeners(str(published.get("clusterName") or ""))
            if li.gateway["metadata"]["name"] == published.get("name")
            and li.gateway["metadata"].get("namespace") == published.get("namespace")
            and li.spec.get("protocol") == "HTTPS"
        ),
        None,
    )
    if listener is None:
        return None
    path = f"/{namespace_of(ms)}/{ms['metadata']['name']}/v1/chat/completions"
    return fabric.send(listener, Request(str(gateway["spec"]["hostname"]), path))


def service_routes(
    ms: Obj,
    endpoints: Sequence[Obj],
    gateways: list[Obj],
    clusters: Mapping[str, Obj],
    fabric: Fabric,
) -> ServiceRoutes:
    entries = objects.spec(ms).get("endpoints") or []
    selected = [[e for e in endpoints if _selects(entry, ms, e)] for entry in entries]
    plan = plan_service(ms, selected, clusters)
    serving, skipped = gateways_serving(ms, gateways, clusters)
    mine = _entries(selected)
    rows: list[Route] = []
    by_gateway = {str(g["metadata"]["name"]): g for g in gateways}
    for g in serving:
        destinations = carried(ms, by_gateway[g.name], fabric) or []
        rows.extend(_rows(g.name, destinations, mine, entries))
    return ServiceRoutes(
        namespace=namespace_of(ms),
        name=str(ms["metadata"]["name"]),
        matched=plan.matched,
        ready=plan.ready,
        routes=tuple(rows),
        served=bool(serving),
        skipped=tuple(skipped),
        not_ready=tuple((m.name, m.why_not_ready) for m in plan.members if not m.ready),
        left_out=tuple(lane.label for lane in plan.dropped),
    )


def _rows(
    gateway: str,
    destinations: Sequence[Destination],
    mine: Mapping[str, tuple[int, Obj]],
    entries: Sequence[Obj],
) -> list[Route]:
    if not destinations:
        return [Route(gateway, note="no route on the front gateway")]
    rows = []
    for d in destinations:
        if d.kind == "DirectResponse":
            rows.append(Route(gateway, note="none ready: answers 503"))
            continue
        found = _endpoint_of(d, mine)
        if found is None:
            what = f"unrouted: {d.name}" if d.kind == "Unrouted" else f"{d.kind} {d.name}"
            rows.append(Route(gateway, cluster=d.cluster, share=d.share, note=what))
            continue
        index, endpoint = found
        external = d.name if d.kind == "External" else ""
        rows.append(
            Route(
                gateway,
                endpoint=str(endpoint["metadata"]["name"]),
                cluster="" if external else d.cluster,
                external=external,
                weight=int(entries[index].get("weight") or 1),
                share=d.share,
            )
        )
    return sorted(rows, key=lambda r: (r.gateway, r.cells()[1]))


def _endpoint_of(d: Destination, mine: Mapping[str, tuple[int, Obj]]) -> tuple[int, Obj] | None:
    """The service's endpoint a destination is: the replica whose pool it is on that cluster, or
    the external endpoint whose Backend dials it."""
    for index, endpoint in mine.values():
        spec = endpoint.get("spec") or {}
        ns = namespace_of(endpoint)
        if d.kind == "InferencePool":
            pool = f"{ns}/{spec.get('inferencePool')}"
            if spec.get("clusterName") == d.cluster and pool == d.name:
                return index, endpoint
        elif d.kind == "External" and not spec.get("clusterName"):
            backend = external_backend_name(str(endpoint["metadata"]["name"]))
            if d.backend == f"{ns}/{backend}":
                return index, endpoint
    return None


def _entries(selected: Sequence[Sequence[Obj]]) -> dict[str, tuple[int, Obj]]:
    """Each selected endpoint with the first entry that selects it."""
    out: dict[str, tuple[int, Obj]] = {}
    for index, found in enumerate(selected):
        for endpoint in found:
            out.setdefault(str(endpoint["metadata"]["name"]), (index, endpoint))
    return out


def _selects(entry: Obj, ms: Obj, endpoint: Obj) -> bool:
    """What Crossplane returns for the entry's requirement: its labels, the service's namespace."""
    if namespace_of(endpoint) != namespace_of(ms):
        return False
    labels = objects.labels(endpoint)
    wanted = objects.mapping(entry, "selector", "matchLabels")
    return all(labels.get(k) == v for k, v in wanted.items())


def _columns(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]


def routes_command(paths: Sequence[str], ready_copies: int, output: str = "text") -> int:
    from crossplane.function import logging

    from modelplane.compose.registry import default_registry
    from modelplane.render import (
        RenderError,
        api_server_admission,
        located,
        render_documents,
        report_unmatched,
        verdict,
    )
    from modelplane.simulate import simulate_observed

    logging.configure(logging.Level.DISABLED)
    try:
        loaded = manifests.load(paths)
        for m in loaded:
            manifests.require_type(m)
    except manifests.ManifestError as e:
        exits.error(COMMAND, str(e))
        return exits.UNREADABLE
    where = {manifests.identity(m.obj): m for m in loaded}
    if report_unmatched(loaded, COMMAND):
        return exits.INVALID
    try:
        docs = render_documents(
            default_registry(),
            [m.obj for m in loaded],
            admit=api_server_admission(),
            simulate=functools.partial(simulate_observed, ready_copies=ready_copies),
        )
    except RenderError as e:
        for line in located(str(e), where):
            exits.error(COMMAND, line)
        return exits.INVALID
    if not any(d.get("kind") == "ModelService" for d in docs):
        exits.error(COMMAND, "no ModelService in the input: nothing to route")
        return exits.INVALID
    services = routing(docs)
    if output == "json":
        sys.stdout.write(as_json(services))
    elif output == "yaml":
        sys.stdout.write(as_yaml(services))
    else:
        sys.stdout.write(as_text(services))
    # Every workload is taken as serving here, so an entry selecting nothing is a selector that
    # matches no deployment's endpoints (a typo the table alone would hide: 1), unless its
    # deployment could place no replica (3); the same verdict, per kind, as render's.
    return verdict(docs, where, COMMAND)
