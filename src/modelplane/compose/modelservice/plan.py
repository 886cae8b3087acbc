"""Which endpoints a ModelService routes to, and with what weights: a pure function of the
service, the endpoints its entries select and the fleet.

Every ready endpoint gets the exact share ``W_i / (sum of the weights of the entries with a ready
endpoint) / n_i`` (``W_i`` its entry's weight, ``n_i`` that entry's ready endpoints). Traffic is
carried in two hops:

- the front route (on every gateway) has one *lane* per ready replica and one per ready external
  endpoint, each weighted by its share; a replica's lane sets a header naming its InferencePool;
  an entry at weight 0 is parked: its lanes stay in the routes at weight 0 (the Gateway API's
  "no traffic"), so traffic can be shifted onto it in steps with every backend already resolved;
- a cluster's fleet route has one rule per pool, matching that header, naming that pool alone.

One pool per rule is Envoy AI Gateway's rule (v1.1.0 refuses a rule naming more than one
InferencePool, and Envoy Gateway then publishes nothing for the whole gateway;
docs/design/routing.md).
A backendRef list holds at most 16 entries: past 16 lanes the smallest are left out and named.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from modelplane.compose.modelservice.weights import integer_weights
from modelplane.compose.shared.egress import refusal
from modelplane.compose.shared.frontdoor import (
    BACKENDS_MAX,
    InvalidURLError,
    cluster_gateway,
    gateway_withdrawn,
    parse_url,
)
from modelplane.composer import namespace_of
from modelplane.kube import objects
from modelplane.reasons import ModelEndpoint


@dataclass(frozen=True)
class Member:
    """An endpoint an entry selected (the first entry that selects it)."""

    name: str
    entry: int
    cluster: str
    """The InferenceCluster of a replica endpoint; empty for an external one."""
    pool: str
    why_not_ready: str
    """Empty when the endpoint is ready."""
    endpoint: Mapping[str, Any]
    carried: str = ""
    """Why a routed endpoint stays in the routes on no evidence either way (its status, or its
    cluster's, not written yet; its cluster not listed); empty when its status says it is ready,
    or when it is not routed."""

    @property
    def ready(self) -> bool:
        return not self.why_not_ready

    @property
    def external(self) -> bool:
        return not self.cluster


@dataclass(frozen=True)
class Lane:
    """One backendRef of the front route: a replica's InferencePool on its cluster, or an
    external endpoint."""

    share: Fraction
    weight: int
    endpoint: str
    cluster: str = ""
    pool: str = ""
    """The replica's InferencePool; empty for an external endpoint."""

    @property
    def external(self) -> bool:
        return not self.cluster

    @property
    def label(self) -> str:
        if self.external:
            return f"endpoint {self.endpoint}"
        return f"cluster {self.cluster} pool {self.pool}"


@dataclass(frozen=True)
class Entry:
    index: int
    weight: int
    matched: tuple[str, ...]
    ready: tuple[str, ...]


@dataclass(frozen=True)
class Plan:
    entries: tuple[Entry, ...]
    members: tuple[Member, ...]
    lanes: tuple[Lane, ...]
    dropped: tuple[Lane, ...]
    """Lanes past the 16 a route can hold, smallest shares first out."""

    def clusters(self) -> dict[str, list[Lane]]:
        """The replica lanes by cluster, in pool order."""
        out: dict[str, list[Lane]] = {}
        for lane in self.lanes:
            if not lane.external:
                out.setdefault(lane.cluster, []).append(lane)
        return out

    def externals(self) -> list[Lane]:
        return [lane for lane in self.lanes if lane.external]

    def routed(self) -> list[str]:
        """The endpoints the lanes send traffic to, by name."""
        return sorted(lane.endpoint for lane in self.lanes)

    def carried(self) -> list[Member]:
        """The ready endpoints kept in the routes on no evidence either way, by name."""
        return [m for m in self.members if m.ready and m.carried]

    @property
    def parked(self) -> bool:
        """Every lane is at weight 0: the gateways route no request (the front routes answer
        503)."""
        return bool(self.lanes) and not any(lane.weight for lane in self.lanes)

    @property
    def matched(self) -> int:
        return len(self.members)

    @property
    def ready(self) -> int:
        return sum(1 for m in self.members if m.ready)


def plan_service(
    service: Mapping[str, Any],
    selected: Sequence[Sequence[Mapping[str, Any]]],
    clusters: Mapping[str, Mapping[str, Any]],
    routed: frozenset[str] = frozenset(),
    gone: frozenset[str] = frozenset(),
) -> Plan:
    """``selected[i]``: the ModelEndpoints entry ``i``'s selector returned; only those in the
    service's own namespace are taken, whatever the lookup returned. ``routed``: the endpoints
    the observed routes send traffic to; one of them stays routed until there is evidence it is
    not ready (its own RoutingReady False, its cluster's GatewayReady False, its cluster asked
    for by name and not found: in ``gone``, a spec that cannot be routed), never because a
    status is not written yet or a list does not hold its cluster."""
    members = _members(namespace_of(service), selected, clusters, routed, gone)
    weights = [_weight(e) for e in objects.spec(service).get("endpoints") or []]
    entries = tuple(
        Entry(
            index=i,
            weight=weights[i] if i < len(weights) else 1,
            matched=tuple(m.name for m in members if m.entry == i),
            ready=tuple(m.name for m in members if m.entry == i and m.ready),
        )
        for i in range(len(selected))
    )
    lanes, dropped = _lanes(members, _shares(entries))
    return Plan(entries, tuple(members), lanes, dropped)


def _members(
    namespace: str,
    selected: Sequence[Sequence[Mapping[str, Any]]],
    clusters: Mapping[str, Mapping[str, Any]],
    routed: frozenset[str],
    gone: frozenset[str],
) -> list[Member]:
    """The endpoints the entries select in ``namespace``, each once (by the first entry that
    selects it), in name order within each entry, with why each cannot take traffic."""
    taken: set[str] = set()
    members: list[Member] = []
    for index, found in enumerate(selected):
        mine = sorted(
            (e for e in found if namespace_of(e) == namespace),
            key=lambda e: str(e["metadata"]["name"]),
        )
        for endpoint in mine:
            name = str(endpoint["metadata"]["name"])
            if name in taken:
                continue
            taken.add(name)
            spec = objects.spec(endpoint)
            why = _why_not_ready(endpoint, clusters, name in routed, gone)
            members.append(
                Member(
                    name=name,
                    entry=index,
                    cluster=str(spec.get("clusterName") or ""),
                    pool=str(spec.get("inferencePool") or ""),
                    why_not_ready=why,
                    endpoint=endpoint,
                    carried="" if why else _why_not_ready(endpoint, clusters, False),
                )
            )
    return members


def _weight(entry: Mapping[str, Any]) -> int:
    """The entry's weight; 0 parks it (its lanes kept in the routes, given no traffic)."""
    weight = entry.get("weight")
    return 1 if weight is None else int(weight)


def _why_not_ready(
    endpoint: Mapping[str, Any],
    clusters: Mapping[str, Mapping[str, Any]],
    routed: bool,
    gone: frozenset[str] = frozenset(),
) -> str:
    """Why the endpoint cannot take traffic, or "". A routed endpoint whose own status, or whose
    cluster's, is not written (or lists only Crossplane's conditions) carries no evidence."""
    if objects.metadata(endpoint).get("deletionTimestamp"):
        # Deleting it is the evidence it is going: its lane leaves before its pool can.
        return "is being deleted"
    spec = objects.spec(endpoint)
    cluster_name = spec.get("clusterName")
    if cluster_name:
        if not spec.get("inferencePool"):
            return "names no inferencePool"
        why = _why_cluster_not_ready(str(cluster_name), clusters, routed, gone)
    else:
        why = _why_url_not_reachable(str(spec.get("url") or ""))
    return why or _why_no_backend(endpoint, routed)


def _why_url_not_reachable(url: str) -> str:
    """Why no gateway may reach an external endpoint's URL, or ""."""
    try:
        parsed = parse_url(url)
    except InvalidURLError as e:
        return f"spec.url {e}"
    if parsed.tls and parsed.is_ip:
        return "an https endpoint must be named by a DNS name"
    never = refusal(parsed.host)
    return f"spec.url: {never}" if never else ""


def _why_no_backend(endpoint: Mapping[str, Any], routed: bool) -> str:
    """Why an endpoint that publishes no backend name is not ready, or "" (it publishes one,
    or it is routed and says nothing against it)."""
    if objects.dig(endpoint, "status", "routing", "backendName"):
        return ""
    routing = objects.condition(endpoint, ModelEndpoint.ROUTING_READY)
    if routing is not None and routing.get("status") != "True":
        return f"{routing.get('reason')}: {routing.get('message') or ''}".rstrip(": ")
    return "" if routed else "publishes no status.routing.backendName yet"


def _why_cluster_not_ready(
    name: str, clusters: Mapping[str, Mapping[str, Any]], routed: bool, gone: frozenset[str]
) -> str:
    """Why a replica endpoint's cluster cannot carry its traffic, or "". A routed endpoint's
    cluster that a list does not hold is no evidence (lists lag); asked for by name and not
    found is: the cluster is deleted, and its lanes and the pools they hold must go."""
    cluster = clusters.get(name)
    if cluster is None:
        if name in gone:
            return f"its cluster {name} is deleted (asked for by name, not found)"
        return "" if routed else f"its cluster {name} is not listed"
    if routed and not gateway_withdrawn(cluster):
        return ""
    gateway = cluster_gateway(cluster)
    if not gateway.provider_config:
        return f"its cluster {name} publishes no providerConfigRef"
    if not gateway.address:
        return f"its cluster {name} publishes no gateway address"
    return ""


def _shares(entries: Sequence[Entry]) -> dict[str, Fraction]:
    """Each ready endpoint's share; a parked entry's (weight 0) are 0, and so are all of them
    when every entry with a ready endpoint is parked."""
    active = [e for e in entries if e.ready]
    total = sum(e.weight for e in active)
    return {
        name: Fraction(entry.weight, total * len(entry.ready)) if total else Fraction(0)
        for entry in active
        for name in entry.ready
    }


def _lanes(
    members: Sequence[Member], shares: Mapping[str, Fraction]
) -> tuple[tuple[Lane, ...], tuple[Lane, ...]]:
    ready = [m for m in members if m.ready]
    replicas = sorted(
        (m for m in ready if not m.external), key=lambda m: (m.cluster, m.pool, m.name)
    )
    externals = sorted((m for m in ready if m.external), key=lambda m: m.name)
    drafts = [*replicas, *externals]
    order = sorted(range(len(drafts)), key=lambda i: (-shares[drafts[i].name], i))
    # Every lane parked: the routes add the sentinel lane beside them, in the same list.
    room = BACKENDS_MAX if any(shares.values()) else BACKENDS_MAX - 1
    kept_ids = sorted(order[:room])
    dropped_ids = sorted(order[room:])
    weights = integer_weights([shares[drafts[i].name] for i in kept_ids], allow_zero=True)

    def lane(i: int, weight: int) -> Lane:
        m = drafts[i]
        return Lane(shares[m.name], weight, m.name, m.cluster, m.pool)

    kept = tuple(lane(i, w) for i, w in zip(kept_ids, weights, strict=True))
    dropped = tuple(lane(i, 0) for i in dropped_ids)
    return kept, dropped
