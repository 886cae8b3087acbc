"""`modelplane routes`: each ModelService's routing table, as the data plane would carry it.

Renders the inputs as ``modelplane render`` does (by default as if every workload had one ready
copy), then, per ModelService in namespace/name order and per InferenceGateway that selects it,
sends a request for ``https://<hostname>/<namespace>/<service>/v1/chat/completions`` through the
composed objects (``dataplane.Fabric``: listener, attached routes, matching rule, filters,
weighted backends, the next cluster's listener) and prints where it ends: the endpoint, the
cluster it runs on (or the external host), its entry's declared weight, and the share of the
service's requests that reach it. Nothing of the composer's plan is read for the table; the plan
only explains the endpoints that are not routed.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from modelplane import exits, manifests
from modelplane.compose.frontdoor import by_name, external_backend_name
from modelplane.compose.modelservice.gateways import gateways_serving
from modelplane.compose.modelservice.plan import plan_service
from modelplane.composer import namespace_of
from modelplane.dataplane import Destination, Fabric, Request

COMMAND = "routes"
Obj = dict[str, Any]
HEADER = ("GATEWAY", "ENDPOINT", "CLUSTER", "WEIGHT", "SHARE")
PROBE_PATH = "v1/chat/completions"


def tables(docs: Sequence[Obj]) -> str:
    """The routing table of every ModelService among ``docs`` (rendered, so with status)."""
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
    out: list[str] = []
    for ms in services:
        out.extend(table(ms, endpoints, gateways, clusters, fabric))
        out.append("")
    return "\n".join(out)


def carried(ms: Obj, gateway: Obj, fabric: Fabric) -> list[Destination] | None:
    """Where the gateway's front listener sends the service's requests; None when the gateway
    has published no front Gateway the composed objects hold."""
    published = (gateway.get("status") or {}).get("gateway") or {}
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
    path = f"/{namespace_of(ms)}/{ms['metadata']['name']}/{PROBE_PATH}"
    return fabric.send(listener, Request(str(gateway["spec"]["hostname"]), path))


def table(
    ms: Obj,
    endpoints: Sequence[Obj],
    gateways: list[Obj],
    clusters: Mapping[str, Obj],
    fabric: Fabric,
) -> list[str]:
    namespace = namespace_of(ms)
    entries = (ms.get("spec") or {}).get("endpoints") or []
    selected = [[e for e in endpoints if _selects(entry, ms, e)] for entry in entries]
    plan = plan_service(ms, selected, clusters)
    serving, skipped = gateways_serving(ms, gateways, clusters)
    mine = _entries(selected)
    name = f"{namespace}/{ms['metadata']['name']}"
    lines = [f"ModelService/{name}: {plan.ready} of {plan.matched} endpoints ready"]
    rows: list[tuple[str, ...]] = []
    by_gateway = {str(g["metadata"]["name"]): g for g in gateways}
    for g in serving:
        destinations = carried(ms, by_gateway[g.name], fabric) or []
        rows.extend(_rows(g.name, destinations, mine, entries))
    if rows:
        lines.extend(_columns([HEADER, *rows]))
    elif not serving:
        lines.append("  no InferenceGateway serves it")
    lines.extend(f"  gateway {s}" for s in skipped)
    lines.extend(f"  not ready: {m.name}: {m.why_not_ready}" for m in plan.members if not m.ready)
    lines.extend(f"  left out (a route holds 16 backends): {lane.label}" for lane in plan.dropped)
    return lines


def _rows(
    gateway: str,
    destinations: Sequence[Destination],
    mine: Mapping[str, tuple[int, Obj]],
    entries: Sequence[Obj],
) -> list[tuple[str, ...]]:
    if not destinations:
        return [(gateway, "(no route on the front gateway)", "", "", "")]
    rows = []
    for d in destinations:
        if d.kind == "DirectResponse":
            rows.append((gateway, "(none ready: answers 503)", "", "", ""))
            continue
        found = _endpoint_of(d, mine)
        if found is None:
            what = "(unrouted: " + d.name + ")" if d.kind == "Unrouted" else f"{d.kind} {d.name}"
            rows.append((gateway, what, d.cluster, "", _percent(d)))
            continue
        index, endpoint = found
        where = f"external {d.name}" if d.kind == "External" else d.cluster
        weight = str(int(entries[index].get("weight") or 1))
        rows.append((gateway, endpoint["metadata"]["name"], where, weight, _percent(d)))
    return sorted(rows, key=lambda r: (r[0], r[1]))


def _percent(d: Destination) -> str:
    return f"{float(d.share) * 100:.2f}%"


def _endpoint_of(d: Destination, mine: Mapping[str, tuple[int, Obj]]) -> tuple[int, Obj] | None:
    """The service's endpoint a destination is: the replica whose pool it is on that cluster, or
    the external endpoint whose Backend dials it."""
    for index, endpoint in mine.values():
        spec = endpoint.get("spec") or {}
        ns = namespace_of(endpoint)
        if d.kind == "InferencePool":
            if (spec.get("clusterName"), f"{ns}/{spec.get('inferencePool')}") == (
                d.cluster,
                d.name,
            ):
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
    labels = (endpoint.get("metadata") or {}).get("labels") or {}
    wanted = ((entry.get("selector") or {}).get("matchLabels")) or {}
    return all(labels.get(k) == v for k, v in wanted.items())


def _columns(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]


def routes_command(paths: Sequence[str], ready_copies: int) -> int:
    from crossplane.function import logging

    from modelplane.compose.registry import default_registry
    from modelplane.render import (
        RenderError,
        api_server_admission,
        located,
        render_documents,
        unmatched_inputs,
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
    refused = unmatched_inputs(loaded)
    for line in refused:
        exits.error(COMMAND, line)
    if refused:
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
    sys.stdout.write(tables(docs))
    # Every workload is taken as serving here, so an entry selecting nothing is a selector that
    # matches no deployment's endpoints (a typo the table alone would hide: 1), unless its
    # deployment could place no replica (3); the same verdict, per kind, as render's.
    return verdict(docs, where, COMMAND)
