"""The fleet scheduler: places every replica of a ModelDeployment that can be placed.

A pure, deterministic function of observed state (see ``placement`` for what it answers and
``docs/design/scheduling.md`` for the rules). In order:

1. Compile the deployment's device selectors; any that does not compile or yields a non-bool
   stops scheduling: existing replicas are kept exactly as they are and nothing new is placed.
2. Retain this deployment's replicas whose cluster still exists, still matches, is not drained
   and still hosts pools that satisfy the members' requests (``policy``).
3. Scale down deterministically (``policy.scale_down``; an autoscaled deployment gives back its
   dearest capacity first, ``scale_in``).
4. Charge the ledger with what each cluster publishes that other deployments hold, every other
   ModelReplica listed, and the retained ones (``policy.charge_fleet``).
5. Fill the lowest free indices in objective order (``fill``), each placement found by
   an exhaustive search over engines x members x pools x request-to-device assignments
   (``options``, ``search``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from modelplane.kube import objects
from modelplane.scheduling import placement as pl
from modelplane.scheduling import policy, selection
from modelplane.scheduling.allocation import Published, read_published
from modelplane.scheduling.capacity import Ledger, Pool, Unit
from modelplane.scheduling.demand import Engine, parse_engines, selector_errors
from modelplane.scheduling.devices import DeviceKind, class_price, device_kinds
from modelplane.scheduling.explain import Judged, judged, shortfall, trace
from modelplane.scheduling.fill import Fill
from modelplane.scheduling.fleet import Admits, Cluster, Clusters, FleetPools, parse_clusters
from modelplane.scheduling.options import Matcher, Replica
from modelplane.scheduling.recording import answered
from modelplane.scheduling.replicas import replica_identity, replica_index
from modelplane.scheduling.scale_in import Autoscaled
from modelplane.scheduling.spread import Spread, parse_constraints
from modelplane.shortlist import plural


def schedule(
    deployment: dict[str, Any],
    clusters: Clusters,
    classes: list[dict[str, Any]],
    replicas: list[dict[str, Any]],
    composed: Iterable[dict[str, Any]] = (),
    *,
    admits: Admits | None = None,
    hold: str = "",
    leaving: frozenset[str] = frozenset(),
    outdated: Callable[[pl.ReplicaPlacement], bool] | None = None,
) -> pl.Schedule:
    """Place ``deployment``'s replicas on ``clusters`` (InferenceClusters) whose pools'
    ``classes`` (InferenceClasses) fit, charging what each cluster's allocation publishes for
    other deployments and ``replicas`` (ModelReplicas listed: this deployment's, and any other
    its cluster's allocation does not hold). ``composed``: the ModelReplicas the deployment
    composed and observes, its own whatever ``replicas`` says (``policy.split_ours``).

    ``admits`` narrows the clusters a replica may stand on, as the clusterSelector does (new
    and kept replicas alike). ``hold``, when set, says why nothing new is placed: kept replicas
    stay, and every cluster is ineligible for a new one with that reason. ``outdated``: whether
    the replica kept at a placement is one a rollout has yet to update (a scale-in removes those
    first, ``scale_in``)."""
    request = _read(deployment, clusters, classes)
    composed = list(composed)
    ours = _ours(request, replicas, composed, leaving)
    errors = _selector_errors(request.engines, request.kinds, request.fleet)
    if errors:
        plan = _kept_as_stamped(request.desired, ours.ours, request.fleet, errors)
    else:
        charged = _charge(request, ours, composed, admits, outdated)
        fill = _filler(request, charged, admits, hold)
        placed = _fill(fill, charged.kept, charged.removed, request.desired)
        plan = _answer(request, fill, charged, placed, hold)
    answered(deployment, plan)
    return plan


@dataclass(frozen=True)
class _Request:
    """What the deployment asks for, and the fleet as the scheduler reads it."""

    namespace: str
    name: str
    desired: int
    template: dict[str, Any]
    selector: dict[str, Any]
    tolerations: list[dict[str, Any]]
    engines: tuple[Engine, ...]
    kinds: dict[str, tuple[DeviceKind, ...]]
    prices: dict[str, float | None]
    fleet: list[Cluster]
    autoscaled: bool = False
    """``spec.autoscaling`` is set: a scale-in gives back the dearest capacity (``scale_in``)."""


def _read(
    deployment: dict[str, Any], clusters: Clusters, classes: list[dict[str, Any]]
) -> _Request:
    spec = objects.spec(deployment)
    template = objects.dig(spec, "template", "spec") or {}
    kinds = {objects.name(c): device_kinds(c) for c in classes}
    prices = {objects.name(c): class_price(c) for c in classes}
    return _Request(
        namespace=objects.namespace(deployment),
        name=objects.name(deployment),
        desired=max(0, int(spec.get("replicas", 1))),
        template=template,
        selector=objects.dig(template, "clusterSelector", "matchLabels") or {},
        tolerations=list(template.get("tolerations") or []),
        engines=parse_engines(template),
        kinds=kinds,
        prices=prices,
        fleet=parse_clusters(clusters, kinds, prices),
        autoscaled=bool(spec.get("autoscaling")),
    )


@dataclass(frozen=True)
class _Ours:
    """The deployment's replicas (staying ones in index order), those leaving, and others'."""

    ours: list[dict[str, Any]]
    others: list[dict[str, Any]]
    gone: list[dict[str, Any]]


def _ours(
    request: _Request,
    replicas: list[dict[str, Any]],
    composed: list[dict[str, Any]],
    leaving: frozenset[str],
) -> _Ours:
    ours, others = policy.split_ours(replicas, request.namespace, request.name, composed)
    gone = [r for r in ours if replica_identity(r)[1] in leaving]
    ours = [r for r in ours if replica_identity(r)[1] not in leaving]
    ours.sort(key=lambda r: (replica_index(r) is None, replica_index(r) or 0, replica_identity(r)))
    return _Ours(ours, others, gone)


@dataclass(frozen=True)
class _Charged:
    """The replicas kept and removed, and the ledger charged with everything that stays."""

    matcher: Matcher
    kept: list[Replica]
    removed: list[pl.RemovedReplica]
    load: dict[str, int]
    ledger: Ledger
    published: Callable[[str], Published | None]


def _charge(
    request: _Request,
    ours: _Ours,
    composed: list[dict[str, Any]],
    admits: Admits | None,
    outdated: Callable[[pl.ReplicaPlacement], bool] | None = None,
) -> _Charged:
    """Retain, scale down, then charge the ledger (steps 2 to 4 of the module's order)."""
    matcher = Matcher(request.engines)
    stamped = {replica_identity(r)[1]: r for r in ours.ours}
    by_name = {c.name: c for c in request.fleet}
    kept, removed = policy.retain_all(
        matcher, ours.ours, by_name, request.selector, request.tolerations, admits
    )
    load = policy.cluster_load(kept)
    composed_names = frozenset(replica_identity(r)[1] for r in composed)
    # Without autoscaling the spread is read only to keep it (``scale_in.victim``); either is
    # read only when the deployment scales in.
    constraints = parse_constraints(request.template)
    order = (
        Autoscaled(request.engines, by_name, constraints, cost=request.autoscaled)
        if (request.autoscaled or constraints) and len(kept) > request.desired
        else None
    )
    old = _outdated(request, kept, outdated)
    removed += policy.scale_down(kept, load, request.desired, stamped, composed_names, order, old)
    published = _published(by_name)
    own = f"{request.namespace}/{request.name}"
    ledger = Ledger(FleetPools(request.fleet), _held_by_others(published, by_name, own))
    removed += policy.charge_fleet(ledger, kept, load, ours.others, stamped, published)
    for r in ours.gone:
        ledger.charge_observed(r)  # leaving: its devices stay held until it is deleted
    return _Charged(matcher, kept, removed, load, ledger, published)


def _outdated(
    request: _Request, kept: list[Replica], outdated: Callable[[pl.ReplicaPlacement], bool] | None
) -> frozenset[str]:
    """The kept replicas a rollout has yet to update, by name; asked only when scaling in."""
    if outdated is None or len(kept) <= request.desired:
        return frozenset()
    return frozenset(k.existing or "" for k in kept if outdated(placement_of(request.engines, k)))


def _filler(request: _Request, charged: _Charged, admits: Admits | None, hold: str) -> Fill:
    kinds, prices, fleet = request.kinds, request.prices, request.fleet
    # Before any cluster is read, every one ranks at least as well as the best any class gives.
    classes = [Pool("", "", c, kinds[c], 1, price=prices[c]) for c in sorted(kinds)]
    floor = charged.matcher.floor(classes)
    constraints = parse_constraints(request.template)
    load = charged.load
    spread = (lambda f: Spread(constraints, fleet, load, f.can_take)) if constraints else None
    return Fill(
        charged.matcher,
        fleet,
        charged.ledger,
        request.selector,
        request.tolerations,
        load,
        bool(request.template.get("modelCacheRef")),
        admits,
        hold,
        floor,
        spread,
    )


def _answer(
    request: _Request, fill: Fill, charged: _Charged, placed: list[Replica], hold: str
) -> pl.Schedule:
    all_replicas = sorted(charged.kept + placed, key=lambda r: r.index)
    judge = judged(fill)
    short = len(all_replicas) < request.desired
    lines = _shortfall(request, fill, judge, hold) if short else ()
    on = dict.fromkeys(r.cluster for r in all_replicas)
    return pl.Schedule(
        desired=request.desired,
        placements=tuple(placement_of(request.engines, r) for r in all_replicas),
        removed=tuple(sorted(charged.removed, key=lambda x: (x.index, x.name))),
        shortfall=lines,
        eligible=any(not fill.ineligible.why(c) for c in request.fleet),
        admitted={c: a.admitted for c in on if (a := charged.published(c)) is not None},
        explain=lambda: trace(fill, all_replicas, judge),
    )


def _shortfall(request: _Request, fill: Fill, judge: Judged, hold: str) -> tuple[str, ...]:
    """Why fewer replicas are placed than asked for: one line per cluster, or what holds all."""
    if not request.fleet and request.selector:
        return (selection.none_matches(request.selector, {}),)
    if not request.fleet:
        return ("no InferenceCluster exists",)
    if hold:
        return (hold,)
    lines = shortfall(request.fleet, judge)
    if fill.blocked and fill.spread:
        lines = (fill.spread.report(), *lines)
    return lines


def _published(fleet: dict[str, Cluster]) -> Callable[[str], Published | None]:
    """Each cluster's published allocation, read when first asked for (None when it publishes
    none, or is not in the fleet)."""
    read: dict[str, Published | None] = {}

    def published(name: str) -> Published | None:
        if name not in read:
            cluster = fleet.get(name)
            read[name] = read_published(cluster.allocation) if cluster is not None else None
        return read[name]

    return published


def _held_by_others(
    published: Callable[[str], Published | None], by_name: dict[str, Cluster], own: str
) -> Callable[[str], dict[str, tuple[Unit, ...]]]:
    """What each cluster publishes that deployments other than ``own`` hold, by pool: this
    deployment charges its own replicas as it stamps them, whatever the cluster saw of them."""

    def held(name: str) -> dict[str, tuple[Unit, ...]]:
        allocation = published(name)
        if allocation is None:
            return {}
        return allocation.units({p.name: p for p in by_name[name].pools}, own)

    return held


@dataclass(frozen=True)
class Fleet:
    """The clusters and their classes' devices, parsed once for every deployment asked about
    (``placeable_on``)."""

    clusters: list[Cluster]
    kinds: dict[str, tuple[DeviceKind, ...]]


def parse_fleet(clusters: Clusters, classes: Iterable[dict[str, Any]]) -> Fleet:
    kinds = {objects.name(c): device_kinds(c) for c in classes}
    return Fleet(parse_clusters(clusters, kinds), kinds)


def placeable_on(deployment: dict[str, Any], parsed: Fleet) -> tuple[str, ...]:
    """The clusters of ``parsed`` (``parse_fleet``) where a replica of ``deployment`` could be
    placed, capacity aside: labels match, taints tolerated, the cluster reachable and its stack
    ready, and some pool's class fits every engine. Where a cache of its weights is worth
    staging; none while any of its selectors is invalid."""
    template = objects.dig(deployment, "spec", "template", "spec") or {}
    selector = objects.dig(template, "clusterSelector", "matchLabels") or {}
    engines = parse_engines(template)
    kinds, fleet = parsed.kinds, parsed.clusters
    if _selector_errors(engines, kinds, fleet):
        return ()
    tolerations = list(template.get("tolerations") or [])
    fill = Fill(Matcher(engines), fleet, Ledger(FleetPools(fleet)), selector, tolerations, {})
    return tuple(c.name for c in fleet if fill.can_take(c))


def _selector_errors(
    engines: tuple[Engine, ...], kinds: dict[str, tuple[DeviceKind, ...]], fleet: list[Cluster]
) -> tuple[pl.SelectorError, ...]:
    # Judged against the devices of classes the fleet's pools use. Every class's devices first
    # (few, and no cluster read): when no device of any class trips a selector, none used does.
    errors = selector_errors(engines, [k for c in sorted(kinds) for k in kinds[c]])
    if errors:
        used = {name for cl in fleet for name in cl.class_names()}
        errors = selector_errors(engines, [k for c in sorted(used) for k in kinds.get(c, ())])
    return errors


def _fill(
    fill: Fill, kept: list[Replica], removed: list[pl.RemovedReplica], desired: int
) -> list[Replica]:
    """New replicas at the lowest free indices, up to ``desired`` in all.

    The work is bounded by what the fleet holds, not by ``desired``: the wanted indices are
    generated lazily and filling stops at the first replica that fits nowhere.
    """
    taken = {k.index for k in kept}
    wanted = max(0, desired - len(kept))

    def is_wanted(index: int) -> bool:  # among the first ``wanted`` free indices
        below = sum(1 for k in taken if k < index)
        return index >= 0 and index not in taken and index - below < wanted

    # A re-placed index first tries the cluster it was on (an in-place update, no churn). The
    # old replica may keep serving there until its replacement serves, uncharged: a replacement
    # swapped onto another cluster's old replica would wait on devices never freed.
    # All such homes are tried before any other placement, so no replica takes another's home.
    was_on = {r.index: r.cluster for r in removed if r.reason != "scale-down"}
    placed: list[Replica] = []
    for index in sorted(i for i in was_on if is_wanted(i)):
        if (home := fill.place_home(index, was_on[index])) is not None:
            placed.append(home)
    at_home = {r.index for r in placed}
    free = (i for i in itertools.count() if i not in taken)
    for index in itertools.islice(free, wanted):
        if index in at_home:
            continue
        got = fill.place(index)
        if got is None:
            break
        placed.append(got)
    return placed


def _kept_as_stamped(
    desired: int,
    ours: list[dict[str, Any]],
    fleet: list[Cluster],
    errors: tuple[pl.SelectorError, ...],
) -> pl.Schedule:
    """Broken selectors: every replica stays exactly as stamped and nothing new is placed."""
    kept = []
    seen: set[int] = set()
    for r in ours:
        index = replica_index(r)
        if index is not None and index not in seen:
            seen.add(index)
            kept.append(policy.as_observed(index, r))
    return pl.Schedule(
        desired=desired,
        placements=tuple(kept),
        selector_errors=errors,
        shortfall=tuple(f"selector {e}" for e in errors),
        explain=lambda: _kept_trace(fleet, kept),
    )


def _kept_trace(
    fleet: list[Cluster], kept: list[pl.ReplicaPlacement]
) -> tuple[pl.ClusterTrace, ...]:
    """Broken selectors: no cluster is considered for anything new, but the clusters hosting
    kept replicas still host them, and the trace says so."""
    invalid = "the deployment's selectors are invalid"
    out = []
    for c in fleet:
        mine = [p for p in kept if p.cluster == c.name]
        if not mine:
            out.append(pl.ClusterTrace(c.name, False, f"not considered: {invalid}"))
            continue
        uses: dict[str, list[str]] = {}
        for p in mine:
            for engine in p.engines:
                for pool in dict.fromkeys(m.pool for m in engine.members):
                    uses.setdefault(pool, []).append(f"replica {p.index} engine {engine.name}")
        pools = tuple(
            pl.PoolTrace(pool.name, True, "hosts " + ", ".join(uses[pool.name]))
            if pool.name in uses
            else pl.PoolTrace(pool.name, False, f"not considered: {invalid}")
            for pool in c.pools
        )
        indices = tuple(p.index for p in mine)
        reason = (
            f"hosts {plural('replica', len(mine))} {', '.join(map(str, indices))}, "
            f"kept as stamped: {invalid}"
        )
        out.append(pl.ClusterTrace(c.name, False, reason, pools, indices))
    return tuple(out)


def placement_of(engines: tuple[Engine, ...], r: Replica) -> pl.ReplicaPlacement:
    assert r.choice is not None
    placed = []
    for engine, option in zip(engines, r.choice, strict=True):
        on_pools = zip(engine.members, option.pools, option.members, strict=True)
        members = tuple(pl.MemberPlacement(m.role, pool, o.requests) for m, pool, o in on_pools)
        placed.append(pl.EnginePlacement(engine.name, members))
    return pl.ReplicaPlacement(r.index, r.cluster, tuple(placed), r.existing)
