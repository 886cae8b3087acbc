"""What a ModelService reports: EndpointsResolved (matched and ready endpoints), RoutingReady
(its routes programmed on every gateway that serves it, read from the observed route status),
and its address on each gateway. With nothing ready because what its entries select is asleep
(``scaletozero.py``), both say Asleep, True: the service works, its first request wakes the
model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from modelplane.compose.modelservice.gateways import Serving, Skipped
from modelplane.compose.modelservice.plan import Entry, Plan
from modelplane.compose.modelservice.routes import UNAVAILABLE_RETRY_AFTER
from modelplane.composer import Condition, Event, Result, namespace_of, namespace_said
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.reasons import ModelService
from modelplane.shortlist import plural

ENDPOINTS = ModelService.ENDPOINTS_RESOLVED
ROUTING = ModelService.ROUTING_READY
ENTRY_MATCHES_NOTHING = ModelService.ENTRY_MATCHES_NOTHING
LISTED = 10
"""Endpoints a message names before counting the rest."""


def waiting(missing: Sequence[str]) -> list[Condition]:
    message = f"reading {', '.join(missing)}; what is composed is kept as it is"
    return [
        Condition(ENDPOINTS, "Unknown", ModelService.WAITING_FOR_ENDPOINTS, message),
        Condition(ROUTING, "Unknown", ModelService.WAITING_FOR_ENDPOINTS, message),
    ]


def report(
    result: Result,
    service: Mapping[str, Any],
    plan: Plan,
    serving: Sequence[Serving],
    skipped: Sequence[Skipped],
    programmed: Mapping[str, bool],
    unselected: Sequence[int],
    waiting: Sequence[str],
    sleeping: Mapping[int, Sequence[str]],
) -> None:
    """The service's status, conditions and events, into ``result``. ``programmed``: each
    composed route's key, and whether its gateway accepted it and resolved every backend;
    ``unselected``: the entries known to select no ModelReplica; ``waiting``: what routes wait
    for their caller policy, said first; ``sleeping``: per entry, the deployments asleep it
    selects."""
    namespace = namespace_of(service)
    name = str(service["metadata"]["name"])
    waking = _waking(plan, sleeping)
    result.conditions.append(_endpoints(service, plan, result.events, unselected, sleeping))

    fleet_keys = [k for k in programmed if k.startswith("fleet/")]
    gateways: list[Obj] = []
    address = ""
    for g in serving:
        mine = [f"front/{g.name}", *fleet_keys]
        mine += [k for k in programmed if k.startswith(f"egress/{g.host.cluster}/")]
        entry: Obj = {
            "name": g.name,
            "routingReady": bool(plan.lanes or waking) and all(programmed.get(k) for k in mine),
        }
        if g.address and programmed.get(f"front/{g.name}"):
            entry["address"] = g.url(namespace, name)
            address = address or entry["address"]
        gateways.append(entry)
    result.status = {
        "endpoints": {"matched": plan.matched, "ready": plan.ready},
        "entries": _entries(plan),
        "gateways": gateways,
        **({"address": address} if address else {}),
    }
    result.conditions.append(_routing(plan, serving, skipped, programmed, waiting, waking))


def _waking(plan: Plan, sleeping: Mapping[int, Sequence[str]]) -> str:
    """With no lane ready, the deployments asleep that the first request wakes, said once
    each (``ns/name``, ...), or "" when nothing is asleep or something serves."""
    if plan.lanes:
        return ""
    return ", ".join(sorted({n for names in sleeping.values() for n in names}))


def _entries(plan: Plan) -> list[Obj]:
    """Each entry's weight as composed and the share of traffic its lanes carry: what a
    controller shifting traffic in steps reads back before its next step."""
    entry_of = {m.name: m.entry for m in plan.members}
    percent = [0.0] * len(plan.entries)
    for lane in plan.lanes:
        percent[entry_of[lane.endpoint]] += float(lane.share) * 100
    return [
        {
            "index": e.index,
            "weight": e.weight,
            "matched": len(e.matched),
            "ready": len(e.ready),
            "percent": round(percent[e.index], 2),
        }
        for e in plan.entries
    ]


def _endpoints(
    service: Mapping[str, Any],
    plan: Plan,
    events: list[Event],
    unselected: Sequence[int],
    sleeping: Mapping[int, Sequence[str]],
) -> Condition:
    namespace = namespace_of(service)
    entries = objects.spec(service).get("endpoints") or []
    carried = _carried(plan)
    counts = f"{plan.matched} matched in namespace {namespace}, {plan.ready} ready"
    detail = f"{counts}: {_detail(plan, carried, sleeping)}"
    empty = [e for e in plan.entries if not e.matched and e.index in unselected]
    if empty:
        return _selects_nothing(namespace_said(service), entries, plan, empty, detail, events)
    waking = _waking(plan, sleeping)
    if waking:
        # Not a fault: the deployment's autoscaler put it to sleep, and the first request
        # wakes it.
        message = (
            f"{plural('deployment', waking.count(', ') + 1)} {waking} asleep (scaled to zero "
            f"while idle): the first request wakes it, answered 503 with Retry-After "
            f"{UNAVAILABLE_RETRY_AFTER} until a replica is ready; {detail}"
        )
        return Condition(ENDPOINTS, "True", ModelService.ASLEEP, message)
    if not plan.matched:
        selectors = "; ".join(
            f"entry {i}: {_selector(e)}" for i, e in enumerate(entries) if isinstance(e, dict)
        )
        message = (
            f"no ModelEndpoint in namespace {namespace_said(service)} matches any entry "
            f"({selectors})"
        )
        events.append(Event("Warning", message, ModelService.NO_ENDPOINTS))
        return Condition(ENDPOINTS, "False", ModelService.NO_ENDPOINTS, message)
    if not plan.ready:
        return Condition(ENDPOINTS, "False", ModelService.NO_READY_ENDPOINTS, detail)
    if carried:
        # Serving as routed, so not False; but what keeps those lanes is no evidence either way.
        return Condition(ENDPOINTS, "True", ModelService.CARRIED_FORWARD, detail)
    return Condition(ENDPOINTS, "True", ModelService.RESOLVED, detail)


def _detail(plan: Plan, carried: str, sleeping: Mapping[int, Sequence[str]]) -> str:
    """Each entry's counts, the endpoints not ready and why, and what is carried forward."""
    active = any(e.ready for e in plan.entries)
    lines = [_entry_line(e, active, sleeping.get(e.index, ())) for e in plan.entries]
    unready = [f"{m.name}: {m.why_not_ready}" for m in plan.members if not m.ready]
    if len(unready) > LISTED:
        unready = [*unready[:LISTED], f"and {len(unready) - LISTED} more not ready"]
    return "; ".join(lines + unready + ([carried] if carried else []))


def _entry_line(e: Entry, active: bool, sleeping: Sequence[str]) -> str:
    """One entry's counts, and why it carries no traffic when it does not."""
    line = f"entry {e.index} (weight {e.weight}): {len(e.matched)} matched, {len(e.ready)} ready"
    if not e.ready and sleeping:
        return f"{line} (asleep: {', '.join(sleeping)}; a request wakes it)"
    if e.matched and not e.ready and active:
        return f"{line} (its share goes to the other entries)"
    if e.ready and not e.weight:
        return f"{line} (parked: kept in the routes with no traffic)"
    return line


def _selects_nothing(
    namespace: str,
    entries: Sequence[Any],
    plan: Plan,
    empty: Sequence[Entry],
    detail: str,
    events: list[Event],
) -> Condition:
    # A misspelled label would silently send an entry's share to the others, or leave the
    # only entry answering 503: say which entry selects nothing, with a reason a caller
    # (render's exit code) can tell from a deployment that is not serving yet.
    named = "; ".join(
        f"entry {e.index} (weight {e.weight}, {_selector(entries[e.index])})" for e in empty
    )
    goes = (
        "its share goes to the other entries"
        if len(empty) < len(plan.entries)
        else "nothing serves the service"
    )
    message = (
        f"no ModelEndpoint or ModelReplica in namespace {namespace} matches {named}: "
        f"{goes}; check the selector's labels ({detail})"
    )
    events.append(Event("Warning", message, ENTRY_MATCHES_NOTHING))
    return Condition(ENDPOINTS, "False", ENTRY_MATCHES_NOTHING, message)


def _carried(plan: Plan) -> str:
    """What the routes keep on no evidence either way, or "": a routed endpoint whose status, or
    whose cluster's, is not written yet, or whose cluster is not listed."""
    kept = [f"{m.name} ({m.carried})" for m in plan.carried()]
    if not kept:
        return ""
    if len(kept) > LISTED:
        kept = [*kept[:LISTED], f"and {len(kept) - LISTED} more"]
    return (
        f"kept in the routes as last routed, on no evidence either way (a status that says it "
        f"is not ready takes it out): {', '.join(kept)}"
    )


def _selector(entry: Mapping[str, Any]) -> str:
    labels = objects.mapping(entry, "selector", "matchLabels")
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "(every endpoint)"


def _routing(
    plan: Plan,
    serving: Sequence[Serving],
    skipped: Sequence[Skipped],
    programmed: Mapping[str, bool],
    waiting: Sequence[str],
    waking: str,
) -> Condition:
    gateways = f"{plural('gateway', len(serving))} {', '.join(g.name for g in serving)}"
    if not serving:
        return _no_gateway(skipped)
    if waiting:
        # Until the guard is applied the routes are not what the spec asks for.
        return Condition(ROUTING, "False", ModelService.CONFIGURING, "; ".join(waiting))
    pending = _pending(programmed, skipped)
    if not plan.lanes and not waking:
        message = f"the routes on {gateways} answer 503 until an endpoint is ready"
        return Condition(ROUTING, "False", ModelService.NO_READY_ENDPOINTS, message)
    if pending:
        message = f"not accepted yet: {'; '.join(pending)}"
        return Condition(ROUTING, "False", ModelService.CONFIGURING, message)
    if waking:
        return _asleep(gateways, waking)
    if plan.parked:
        message = (
            f"every entry with a ready endpoint has weight 0: the routes on {gateways} keep "
            "every lane resolved at weight 0 and answer 503; give an entry a weight to serve"
        )
        return Condition(ROUTING, "False", ModelService.PARKED, message)
    if plan.dropped:
        left = ", ".join(lane.label for lane in plan.dropped)
        message = (
            f"a route holds 16 backends: left out, with the smallest shares, {left}; "
            "select fewer clusters or endpoints"
        )
        return Condition(ROUTING, "False", ModelService.TOO_MANY_BACKENDS, message)
    through = sorted(
        {lane.label if lane.external else f"cluster {lane.cluster}" for lane in plan.lanes}
    )
    # Envoy Gateway writes Accepted and ResolvedRefs when it translates a route, and reports
    # nothing about the proxies' configuration after that (a failed xDS translation leaves them
    # on their last good one: internal/xds/runner/runner.go, v1.8.1): accepted is all we can know.
    message = (
        f"accepted, every backend resolved, on {gateways}, to {', '.join(through)} (the "
        "gateways do not report their proxies' configuration)"
    )
    return Condition(ROUTING, "True", ModelService.ACCEPTED, message)


def _asleep(gateways: str, waking: str) -> Condition:
    """Routing while what the service selects is asleep, its routes accepted on ``gateways``:
    ready, since the request that meets the 503 is the one that wakes the model."""
    message = (
        f"accepted on {gateways}; the first request wakes {waking} and is answered 503 with "
        f"Retry-After {UNAVAILABLE_RETRY_AFTER}, as is every request until a replica is ready"
    )
    return Condition(ROUTING, "True", ModelService.ASLEEP, message)


def _pending(programmed: Mapping[str, bool], skipped: Sequence[Skipped]) -> list[str]:
    """The routes not accepted yet, and the gateways that cannot serve now."""
    return [_describe(k) for k, ok in programmed.items() if not ok] + [
        f"gateway {s}" for s in skipped
    ]


def _no_gateway(skipped: Sequence[Skipped]) -> Condition:
    message = (
        f"no InferenceGateway can serve this service now: {'; '.join(map(str, skipped))}"
        if skipped
        else "no InferenceGateway serves this service (none exists, or no serviceSelector "
        "matches its labels)"
    )
    return Condition(ROUTING, "False", ModelService.NO_GATEWAY, message)


def _describe(key: str) -> str:
    kind, _, rest = key.partition("/")
    if kind == "front":
        return f"route on gateway {rest}"
    if kind == "fleet":
        return f"fleet route on cluster {rest}"
    cluster, _, endpoint = rest.partition("/")
    return f"egress route on cluster {cluster} to endpoint {endpoint}"
