"""The policy over existing replicas: which of this deployment's replicas stay, and why not.

- Identity: a replica is this deployment's when the deployment composed it (whatever its labels
  or the fleet's list say), or when it carries the deployment label and lives in the
  deployment's namespace; its index is its ``replica-index`` label.
- Retain: a replica stays where it is while its cluster exists, matches, is not drained
  (NoExecute) and still hosts pools that satisfy its members' requests, re-resolved against the
  current spec.
- Scale down: the replica on the most-loaded cluster goes first, then one a rollout has yet to
  update, then one that is not serving, then the later cluster name, then the higher index; an
  autoscaled deployment gives back its most expensive capacity first (one a rollout has yet to
  update before that), never breaking its spread while another replica can go (``scale_in``).
- Charge: what each cluster admitted for other deployments (its published allocation) and every
  other replica listed is charged first; a kept replica its cluster refused, or that no longer
  fits beside replicas admitted or created before it (two deployments took the same devices at
  once), or whose edit grew it past its pools, is re-placed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from modelplane import labels
from modelplane.kube import objects
from modelplane.scheduling import placement as pl
from modelplane.scheduling.allocation import Published, admission_order
from modelplane.scheduling.capacity import Ledger, Unit, fits_alone, observed_units, observed_vector
from modelplane.scheduling.fleet import Admits, Cluster, untolerated
from modelplane.scheduling.options import (
    EngineOption,
    Matcher,
    MemberOption,
    Replica,
    engine_units,
    replica_units,
)
from modelplane.scheduling.replicas import replica_identity, replica_index, replica_namespace
from modelplane.scheduling.scale_in import Autoscaled, victim

__all__ = ["replica_identity", "replica_index", "replica_namespace"]


def as_observed(index: int, replica: dict[str, Any]) -> pl.ReplicaPlacement:
    """A replica kept exactly as stamped (used when selectors are broken)."""
    spec = replica.get("spec") or {}
    recorded = pl.read_device_assignment(replica)
    engines = []
    for engine in spec.get("engines") or []:
        name = str(engine.get("name", ""))
        members = []
        for m, member in enumerate(engine.get("members") or []):
            role, pool = str(member.get("role", "Standalone")), str(member.get("nodePoolName", ""))
            devices = recorded.get((name, m), {})
            requests = tuple(_as_stamped(r, devices) for r in member.get("deviceRequests") or [])
            members.append(pl.MemberPlacement(role, pool, requests))
        engines.append(pl.EnginePlacement(name, tuple(members)))
    cluster, existing = str(spec.get("clusterName", "")), objects.name(replica)
    return pl.ReplicaPlacement(index, cluster, tuple(engines), existing)


def _as_stamped(request: Mapping[str, Any], devices: Mapping[str, str]) -> pl.DeviceRequest:
    """One stamped device request, with the device ``devices`` records for it."""
    name, count = str(request.get("name", "")), int(request.get("count", 1))
    device_class = str(request.get("deviceClassName", ""))
    selectors = tuple(str(s.get("cel")) for s in request.get("selectors") or [])
    return pl.DeviceRequest(name, count, device_class, selectors, devices.get(name, ""))


def retain(
    matcher: Matcher, cluster: Cluster, replica: dict[str, Any]
) -> tuple[tuple[EngineOption, ...] | None, str]:
    """Re-resolve an existing replica on its pinned pools, or say why it must move."""
    observed = {str(e.get("name", "")): e for e in objects.spec(replica).get("engines") or []}
    engines = matcher.engines
    recorded = pl.read_device_assignment(replica)
    if set(observed) != {e.name for e in engines}:
        return None, "its engines no longer match the deployment's"
    choice = []
    for e, engine in enumerate(engines):
        members = observed[engine.name].get("members") or []
        got = _retain_engine(matcher, cluster, e, members, recorded)
        if isinstance(got, str):
            return None, got
        choice.append(got)
    for pool_name, alone in replica_units(tuple(choice)).items():
        pool = cluster.pool(pool_name)
        assert pool is not None
        if not fits_alone(pool, alone):
            return None, f"pool {pool_name} no longer fits: too small for the replica alone"
    return tuple(choice), ""


def _retain_engine(
    matcher: Matcher,
    cluster: Cluster,
    e: int,
    members: list[dict[str, Any]],
    recorded: Mapping[tuple[str, int], Mapping[str, str]],
) -> EngineOption | str:
    """Engine ``e`` of a kept replica re-resolved on its members' pinned pools, or why not."""
    engine = matcher.engines[e]
    roles = [str(m.get("role", "Standalone")) for m in members]
    if roles != [m.role for m in engine.members]:
        return f"engine {engine.name}'s members changed"
    pools: list[str] = []
    picked: list[MemberOption] = []
    for m, member in enumerate(members):
        pool = cluster.pool(str(member.get("nodePoolName", "")))
        if pool is None:
            return f"pool {member.get('nodePoolName')} is gone"
        options, reason = matcher.member(e, m, pool)
        if not options:
            return f"pool {pool.name} no longer fits: {reason}"
        # The option charged as stamped, so an edit elsewhere does not move its devices.
        requests = member.get("deviceRequests") or []
        stamped = observed_vector(pool, requests, recorded.get((engine.name, m)))
        picked.append(next((o for o in options if o.demand == stamped), options[0]))
        pools.append(pool.name)
    if not any(o.requests for o in picked):
        return f"engine {engine.name} would claim no device on its pools"
    pools_t = tuple(pools)
    units = engine_units(engine, pools_t, tuple(picked))
    return EngineOption(pools_t, tuple(picked), len(set(pools_t)) - 1, units)


def is_serving(replica: dict[str, Any] | None) -> bool:
    c = objects.condition(replica, "ModelServing")
    return c is not None and c.get("status") == "True"


def displaced(
    ledger: Ledger,
    cluster: str,
    mine: list[dict[str, Any]],
    theirs: list[dict[str, Any]],
    allocation: Published | None = None,
) -> list[tuple[str, str]]:
    """Names of this deployment's replicas on ``cluster`` that must move, each with why.

    Where the cluster publishes its allocation, it is the arbiter: a replica it refused moves,
    and one it has not admitted yet moves when the replicas it admitted (others', then ours)
    leave no room for it, as the cluster will find. Where it publishes none (a hand-written
    fleet), every deployment judges the cluster's replicas first come, first served (creation
    time, then namespace and name), so they agree on which replica moves and none stays
    overcommitted. The others are read one by one only when a pool of ours is overcommitted:
    the ledger, already charged with every other replica, answers the common case."""
    losers: list[tuple[str, str]] = []
    if allocation is not None:
        losers = [
            (replica_identity(r)[1], f"cluster {cluster} refused it: {why}")
            for r in mine
            if (why := allocation.refused.get(replica_identity(r))) is not None
        ]
        mine = [r for r in mine if replica_identity(r) not in allocation.refused]
    if _all_fit(ledger, cluster, mine):
        return losers
    return losers + _first_come(ledger, cluster, mine, theirs, allocation)


def _all_fit(ledger: Ledger, cluster: str, mine: list[dict[str, Any]]) -> bool:
    """Whether everything charged to our pools on ``cluster`` fits together with ours: then
    no replica of ours fails beside those created before it (removing units never makes a
    pool's packing fail)."""
    own = [observed_units(ledger.pools, cluster, r) for r in mine]
    pools = {pool for us in own for pool in us}
    return all(
        ledger.load((cluster, pool)).fits(tuple(u for us in own for u in us.get(pool, ())))
        for pool in pools
    )


def _first_come(
    ledger: Ledger,
    cluster: str,
    mine: list[dict[str, Any]],
    theirs: list[dict[str, Any]],
    allocation: Published | None,
) -> list[tuple[str, str]]:
    """Ours that do not fit beside the replicas admitted (or, unpublished, created) before."""
    by_key = {replica_identity(r): r for r in [*mine, *theirs]}
    units = {key: observed_units(ledger.pools, cluster, r) for key, r in by_key.items()}
    # What the cluster admitted for other deployments holds its devices before anything else.
    accepted: dict[str, tuple[Unit, ...]] = dict(ledger.published(cluster))
    admitted = allocation.admitted if allocation is not None else frozenset()
    before = "admitted" if allocation is not None else "created"
    ours = {replica_identity(r) for r in mine}
    losers = []
    for r in sorted([*mine, *theirs], key=lambda r: admission_order(r, admitted)):
        key = replica_identity(r)
        beside = {pool: accepted.get(pool, ()) + us for pool, us in units[key].items()}
        if all(fits_alone(ledger.pools[(cluster, pool)], us) for pool, us in beside.items()):
            accepted.update(beside)
        elif key in ours:
            held = f"replicas {before} before it hold its pool's devices"
            losers.append((key[1], f"cluster {cluster} is overcommitted: {held}"))
    return losers


def overgrown(ledger: Ledger, kept: Replica, replica: dict[str, Any]) -> str:
    """Why an edit (copies, worker.nodes, device counts) grew the kept replica past what its
    pools hold beside everything charged so far, or "". Only the edit is judged: a replica
    whose stamped size already did not fit (another deployment grew, a pool shrank) stays."""
    assert kept.choice is not None
    new = replica_units(kept.choice)
    old = observed_units(ledger.pools, kept.cluster, replica)
    for pool, units in sorted(new.items()):
        if sorted(units) == sorted(old.get(pool, ())):
            continue
        load = ledger.load((kept.cluster, pool))
        if not load.fits(units) and load.fits(old.get(pool, ())):
            return (
                f"pool {pool} cannot hold its new size beside the replicas already there "
                "(copies, worker.nodes or device counts grew)"
            )
    return ""


def split_ours(
    replicas: list[dict[str, Any]],
    namespace: str,
    name: str,
    composed: Iterable[dict[str, Any]] = (),
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """This deployment's replicas and everyone else's.

    ``composed`` (the replicas the deployment composed and observes) are its own whatever their
    labels say and whether or not ``replicas`` lists them yet: a list lags the composed
    resources, and a label can be edited away. Where both hold a replica, the composed copy
    stands. Any other replica is ours when it carries the deployment label in our namespace.
    A namespaced composite composes only into its own namespace, so a composed replica said to
    be elsewhere is not taken for ours.
    """
    ours = [r for r in composed if replica_namespace(r) in (namespace, "")]
    own = {replica_identity(r)[1] for r in ours}
    others: list[dict[str, Any]] = []
    for r in replicas:
        if own and objects.dig(r, "metadata", "name") in own and replica_namespace(r) == namespace:
            continue
        mine = (
            objects.labels(r).get(labels.DEPLOYMENT) == name and replica_namespace(r) == namespace
        )
        (ours if mine else others).append(r)
    return ours, others


def retain_all(
    matcher: Matcher,
    ours: list[dict[str, Any]],
    fleet: dict[str, Cluster],
    selector: dict[str, str],
    tolerations: list[dict[str, Any]],
    admits: Admits | None = None,
) -> tuple[list[Replica], list[pl.RemovedReplica]]:
    """This deployment's replicas that stay where they are, and the others with the reason."""
    removed: list[pl.RemovedReplica] = []
    kept: list[Replica] = []
    taken: set[int] = set()
    for r in ours:
        index = replica_index(r)
        cluster_name = str(objects.dig(r, "spec", "clusterName", default=""))
        r_name = replica_identity(r)[1]
        cluster = fleet.get(cluster_name)
        if index is None:
            reason = f"label {labels.REPLICA_INDEX} is missing or not an index"
        elif index in taken:
            reason = f"another replica already holds index {index}"
        elif cluster is None:
            reason = f"cluster {cluster_name} no longer exists"
        elif any(cluster.labels.get(k) != v for k, v in selector.items()):
            reason = f"cluster {cluster_name} no longer matches the clusterSelector"
        elif admits is not None and (why := admits(cluster)):
            reason = f"cluster {cluster_name}: {why}"
        elif cluster.deleting:
            reason = f"cluster {cluster_name}: {cluster.deleting}"
        elif taint := untolerated(cluster, tolerations, {"NoExecute"}):
            reason = f"cluster {cluster_name} is drained ({taint})"
        else:
            choice, reason = retain(matcher, cluster, r)
            if choice is not None:
                taken.add(index)
                kept.append(Replica(index, cluster_name, choice, r_name))
                continue
        removed.append(
            pl.RemovedReplica(r_name, -1 if index is None else index, cluster_name, reason)
        )
    return kept, removed


def cluster_load(kept: list[Replica]) -> dict[str, int]:
    """Replicas of this deployment per cluster."""
    load: dict[str, int] = {}
    for k in kept:
        load[k.cluster] = load.get(k.cluster, 0) + 1
    return load


def scale_down(
    kept: list[Replica],
    load: dict[str, int],
    desired: int,
    stamped: dict[str, dict[str, Any]],
    composed: frozenset[str] = frozenset(),
    autoscaled: Autoscaled | None = None,
    outdated: frozenset[str] = frozenset(),
) -> list[pl.RemovedReplica]:
    """Remove kept replicas (from ``kept`` and ``load``) past ``desired``, one at a time in
    ``scale_in.victim``'s order: the balance order, or the cost order when the deployment is
    ``autoscaled``. ``composed``: the replicas the deployment composes (one only listed goes
    first); ``outdated``: those a rollout has yet to update, by name."""
    removed = []
    idle = {k.existing for k in kept if not is_serving(stamped.get(k.existing or ""))}
    listed_only = {k.existing for k in kept if composed and k.existing not in composed}
    order = autoscaled.start(kept) if autoscaled is not None else None
    while len(kept) > desired:
        leaving = victim(kept, load, listed_only, idle, order, outdated)
        removed.append(_drop(kept, load, leaving, "scale-down"))
    return removed


def charge_fleet(
    ledger: Ledger,
    kept: list[Replica],
    load: dict[str, int],
    others: list[dict[str, Any]],
    stamped: dict[str, dict[str, Any]],
    published: Callable[[str], Published | None] = lambda _: None,
) -> list[pl.RemovedReplica]:
    """Charge the ledger with every other replica listed that its cluster's allocation does not
    already hold (``published``; the ledger reads what it holds), then with the kept replicas
    that still fit; remove (from ``kept`` and ``load``) and return the ones that do not."""
    neighbours = _charge_others(ledger, {k.cluster for k in kept}, others, published)
    removed = []
    for c in sorted(neighbours):
        mine = [stamped[k.existing or ""] for k in kept if k.cluster == c]
        for loser, reason in displaced(ledger, c, mine, neighbours[c], published(c)):
            k = next(k for k in kept if k.existing == loser)
            removed.append(_drop(kept, load, k, reason))
    for k in list(kept):
        assert k.choice is not None
        grown = overgrown(ledger, k, stamped[k.existing or ""])
        if grown:
            removed.append(_drop(kept, load, k, grown))
            continue
        ledger.charge(k.cluster, replica_units(k.choice))
    return removed


def _charge_others(
    ledger: Ledger,
    hosting: set[str],
    others: list[dict[str, Any]],
    published: Callable[[str], Published | None],
) -> dict[str, list[dict[str, Any]]]:
    """Charge every other replica listed that its cluster's allocation does not already hold;
    those on a cluster in ``hosting`` (where we keep replicas), by cluster."""
    # Charging order cannot change an answer: every fit packs a pool's units in canonical order.
    neighbours: dict[str, list[dict[str, Any]]] = {c: [] for c in hosting}
    for r in others:
        on = str(objects.dig(r, "spec", "clusterName") or "")
        allocation = published(on)
        if allocation is not None and replica_identity(r) in allocation.admitted:
            continue
        ledger.charge_observed(r)
        if on in neighbours:
            neighbours[on].append(r)
    return neighbours


def _drop(kept: list[Replica], load: dict[str, int], k: Replica, reason: str) -> pl.RemovedReplica:
    """Remove a kept replica from ``kept`` and its cluster's ``load``."""
    kept.remove(k)
    load[k.cluster] -= 1
    return pl.RemovedReplica(k.existing or "", k.index, k.cluster, reason)
