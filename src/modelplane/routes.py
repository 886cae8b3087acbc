"""`modelplane routes`: each ModelService's routing table.

Renders the inputs as ``modelplane render`` does (by default as if every workload had one ready
copy), then prints, per ModelService in namespace/name order, one row per gateway that serves it
and endpoint it routes to: the gateway, the endpoint, the cluster it runs on (or the external
host), its entry's declared weight, and the share of the service's requests it receives, computed
from the integer weights the routes actually carry (front route, then fleet route).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from modelplane import exits, manifests
from modelplane.compose.frontdoor import by_name, parse_url
from modelplane.compose.modelservice.gateways import gateways_serving
from modelplane.compose.modelservice.plan import Lane, Plan, plan_service
from modelplane.composer import namespace_of

COMMAND = "routes"
Obj = dict[str, Any]
HEADER = ("GATEWAY", "ENDPOINT", "CLUSTER", "WEIGHT", "SHARE")


def tables(docs: Sequence[Obj]) -> str:
    """The routing table of every ModelService among ``docs`` (rendered, so with status)."""
    kinds: dict[str, list[Obj]] = {}
    for doc in docs:
        kinds.setdefault(str(doc.get("kind")), []).append(doc)
    services = sorted(
        kinds.get("ModelService", []), key=lambda s: (namespace_of(s), s["metadata"]["name"])
    )
    if not services:
        return ""
    clusters = by_name(kinds.get("InferenceCluster", []))
    endpoints = kinds.get("ModelEndpoint", [])
    gateways = kinds.get("InferenceGateway", [])
    out: list[str] = []
    for ms in services:
        out.extend(table(ms, endpoints, gateways, clusters))
        out.append("")
    return "\n".join(out)


def table(
    ms: Obj, endpoints: Sequence[Obj], gateways: list[Obj], clusters: Mapping[str, Obj]
) -> list[str]:
    namespace = namespace_of(ms)
    entries = (ms.get("spec") or {}).get("endpoints") or []
    selected = [[e for e in endpoints if _selects(entry, ms, e)] for entry in entries]
    plan = plan_service(ms, selected, clusters)
    serving, skipped = gateways_serving(ms, gateways, clusters)
    name = f"{namespace}/{ms['metadata']['name']}"
    lines = [f"ModelService/{name}: {plan.ready} of {plan.matched} endpoints ready"]
    rows: list[tuple[str, ...]] = []
    for g in serving:
        if not plan.lanes:
            rows.append((g.name, "(none ready: answers 503)", "", "", ""))
        for endpoint, where, share in _shares(plan):
            weight = plan.entries[_entry(plan, endpoint)].weight
            rows.append((g.name, endpoint, where, str(weight), f"{float(share) * 100:.2f}%"))
    if rows:
        lines.extend(_columns([HEADER, *rows]))
    elif not serving:
        lines.append("  no InferenceGateway serves it")
    lines.extend(f"  gateway {s}" for s in skipped)
    lines.extend(f"  not ready: {m.name}: {m.why_not_ready}" for m in plan.members if not m.ready)
    lines.extend(f"  left out (a route holds 16 backends): {lane.label}" for lane in plan.dropped)
    return lines


def _shares(plan: Plan) -> list[tuple[str, str, Fraction]]:
    """Each routed endpoint, where it runs, and its share from the routes' integer weights."""
    total = sum(lane.weight for lane in plan.lanes)
    out = []
    for lane in plan.lanes:
        lane_share = Fraction(lane.weight, total)
        if lane.external:
            out.append((lane.endpoint, _external_host(plan, lane), lane_share))
            continue
        pools = sum(p.weight for p in lane.pools)
        for pool in lane.pools:
            out.append((pool.endpoint, lane.cluster, lane_share * Fraction(pool.weight, pools)))
    return sorted(out)


def _external_host(plan: Plan, lane: Lane) -> str:
    member = next(m for m in plan.members if m.name == lane.endpoint)
    return f"external {parse_url(str(member.endpoint['spec']['url'])).host}"


def _entry(plan: Plan, endpoint: str) -> int:
    return next(m.entry for m in plan.members if m.name == endpoint)


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
        empty_entries,
        located,
        render_documents,
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
    # Every workload is taken as serving here, so an entry selecting nothing is a selector
    # that matches no deployment's endpoints: a typo the table alone would hide.
    status = exits.OK
    for doc in docs:
        problem = empty_entries(doc) if doc.get("kind") == "ModelService" else ""
        if problem:
            for line in located(f"{manifests.identity(doc)}: {problem}", where):
                exits.error(COMMAND, line)
            status = exits.INVALID
    return status
