"""The fleet scheduler: places every replica of a ModelDeployment that can be placed.

A pure, deterministic function of observed state (see ``placement`` for what it answers and
``docs/scheduling.md`` for the rules). In order:

1. Compile the deployment's device selectors; any that does not compile or yields a non-bool
   stops scheduling: existing replicas are kept exactly as they are and nothing new is placed.
2. Retain this deployment's replicas (same namespace, same deployment label) whose cluster still
   exists, still matches, is not drained (NoExecute), and still hosts pools that satisfy the
   members' requests; re-resolve their device requests against the current spec.
3. Scale down deterministically: the replica on the most-loaded cluster (then the later cluster
   name, then the higher index) goes first.
4. Charge the ledger with every other ModelReplica of the fleet and the retained ones.
5. Fill the lowest free indices: each new replica goes to the eligible cluster with the fewest
   replicas of this deployment (then by name) where it fits; the search over engines x members x
   pools x request-to-device assignments is exhaustive, preferring fewer engines split across
   pools. When a cluster cannot take one more, the replicas this fill put there are searched
   again jointly, so no greedy packing leaves one out.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass
from typing import Any

from modelplane.fleet import placement as pl
from modelplane.fleet.capacity import (
    Ledger,
    Load,
    Pool,
    PoolState,
    Unit,
    Vector,
    fit,
    nodes_needed,
    observed_units,
    observed_vector,
    pod_count,
)
from modelplane.fleet.devices import DeviceKind, SelectorProblem, compile_selector, device_kinds
from modelplane.fleet.devices import matches as selector_matches
from modelplane.observed import condition

SEARCH_BUDGET = 50_000
"""Search nodes one placement attempt may visit; beyond it the cluster is reported as searched
out rather than stalling a reconcile."""

MAX_OPTIONS = 64
"""Distinct request-to-device assignments kept per member and pool (and 8x that many options
per engine and cluster): far beyond real classes, a bound against pathological input."""


# --- the deployment, parsed -----------------------------------------------------------------


@dataclass(frozen=True)
class _Request:
    name: str
    count: int
    selectors: tuple[str, ...]
    path: str


@dataclass(frozen=True)
class _Member:
    role: str
    pods: int
    requests: tuple[_Request, ...]


@dataclass(frozen=True)
class _Engine:
    name: str
    copies: int
    members: tuple[_Member, ...]


@dataclass(frozen=True)
class _MemberOption:
    demand: Vector
    requests: tuple[pl.DeviceRequest, ...]


@dataclass(frozen=True)
class _EngineOption:
    pools: tuple[str, ...]
    """Per member, the pool it runs on."""
    members: tuple[_MemberOption, ...]
    splits: int
    units: tuple[tuple[str, tuple[Unit, ...]], ...]
    """Per pool, the gangs the engine's copies put there."""


def _engines(spec: dict[str, Any]) -> tuple[_Engine, ...]:
    engines = []
    for e, engine in enumerate(spec.get("engines") or []):
        members = []
        for m, member in enumerate(engine.get("members") or []):
            requests = []
            devices = (member.get("nodeSelector") or {}).get("devices") or []
            for d, device in enumerate(devices):
                base = f"spec.template.spec.engines[{e}].members[{m}].nodeSelector.devices[{d}]"
                selectors = tuple(
                    str(s["cel"]) for s in device.get("selectors") or [] if s.get("cel") is not None
                )
                requests.append(
                    _Request(
                        str(device.get("name", "")), int(device.get("count", 1)), selectors, base
                    )
                )
            members.append(
                _Member(str(member.get("role", "Standalone")), pod_count(member), tuple(requests))
            )
        engines.append(
            _Engine(str(engine.get("name", "")), int(engine.get("copies", 1)), tuple(members))
        )
    return tuple(engines)


def _selector_errors(
    engines: tuple[_Engine, ...], kinds: list[DeviceKind]
) -> tuple[pl.SelectorError, ...]:
    errors = []
    for engine in engines:
        for member in engine.members:
            for request in member.requests:
                for s, text in enumerate(request.selectors):
                    compiled = compile_selector(text)
                    problem: SelectorProblem | None = None
                    if isinstance(compiled, SelectorProblem):
                        problem = compiled
                    else:
                        problem = next(
                            (
                                r
                                for k in kinds
                                if isinstance(r := selector_matches((text,), k), SelectorProblem)
                            ),
                            None,
                        )
                    if problem is not None:
                        path = f"{request.path}.selectors[{s}].cel"
                        errors.append(pl.SelectorError(request.name, path, problem.message))
    return tuple(errors)


# --- the fleet, parsed ----------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Cluster:
    name: str
    labels: dict[str, str]
    taints: tuple[tuple[str, str, str], ...]
    pools: tuple[Pool, ...]
    source: str = "Existing"

    def pool(self, name: str) -> Pool | None:
        return next((p for p in self.pools if p.name == name), None)


def _clusters(
    clusters: list[dict[str, Any]], kinds: dict[str, tuple[DeviceKind, ...]]
) -> list[_Cluster]:
    parsed = []
    for cluster in clusters:
        name = str(cluster.get("metadata", {}).get("name", ""))
        spec = cluster.get("spec") or {}
        pools = tuple(
            Pool(
                name,
                str(p.get("name", "")),
                str(p.get("className", "")),
                kinds.get(str(p.get("className", "")), ()),
                max(0, int(p.get("nodeCount", 1))),
            )
            for p in spec.get("nodePools") or ()
        )
        taints = (
            tuple(
                (str(t.get("key", "")), str(t.get("value", "")), str(t.get("effect", "")))
                for t in spec["taints"]
            )
            if spec.get("taints")
            else ()
        )
        labels = dict(cluster.get("metadata", {}).get("labels") or {})
        source = str((spec.get("cluster") or {}).get("source") or "")
        parsed.append(_Cluster(name, labels, taints, pools, source))
    # Names are unique in the API; a duplicated input keeps its first entry.
    unique = {c.name: c for c in reversed(parsed)}
    return sorted(unique.values(), key=lambda c: c.name)


def _tolerated(taint: tuple[str, str, str], tolerations: list[dict[str, Any]]) -> bool:
    key, value, effect = taint
    for t in tolerations:
        if t.get("effect") and t["effect"] != effect:
            continue
        if t.get("operator", "Equal") == "Exists":
            if not t.get("key") or t["key"] == key:
                return True
        elif t.get("key", "") == key and str(t.get("value", "")) == value:
            return True
    return False


def _untolerated(cluster: _Cluster, tolerations: list[dict[str, Any]], effects: set[str]) -> str:
    for taint in cluster.taints:
        if taint[2] in effects and not _tolerated(taint, tolerations):
            key, value, effect = taint
            return f"{effect} taint {key}={value}" if value else f"{effect} taint {key}"
    return ""


# --- matching members to pools --------------------------------------------------------------


class _Matcher:
    """Member options per (engine, member, class), computed once per schedule."""

    def __init__(self, engines: tuple[_Engine, ...]) -> None:
        self.engines = engines
        self._options: dict[tuple[int, int, str], tuple[tuple[_MemberOption, ...], str]] = {}

    def member(self, e: int, m: int, pool: Pool) -> tuple[tuple[_MemberOption, ...], str]:
        key = (e, m, pool.class_name)
        found = self._options.get(key)
        if found is None:
            found = _member_options(self.engines[e].members[m], pool)
            self._options[key] = found
        return found


def _member_options(member: _Member, pool: Pool) -> tuple[tuple[_MemberOption, ...], str]:
    """Every distinct way the member's requests land on the pool's device kinds (each request
    on one kind; requests sharing a kind share its per-node count), or why there is none."""
    kinds = pool.kinds
    if not member.requests:
        return (_MemberOption(tuple(0 for _ in pool.claimable), ()),), ""
    if not kinds:
        return (), f"class {pool.class_name} not found or has no devices"
    candidates = []
    for request in member.requests:
        # A DRA device without a DeviceClass cannot be claimed (the ModelReplica would be
        # rejected), so it never satisfies a request.
        matching = [
            i
            for i, k in enumerate(kinds)
            if (k.device_class_name or not k.claimable)
            and selector_matches(request.selectors, k) is True
        ]
        if not matching:
            return (), f"no device of class {pool.class_name} matches request {request.name}"
        sized = [i for i in matching if kinds[i].count >= request.count]
        if not sized:
            best = max(kinds[i].count for i in matching)
            return (), (
                f"request {request.name} needs {request.count} devices per node, "
                f"class {pool.class_name} has {best}"
            )
        candidates.append(sized)
    position = {i: j for j, i in enumerate(pool.claimable)}
    options: dict[_MemberOption, None] = {}
    for assignment in itertools.product(*candidates):
        used = [0] * len(kinds)
        for request, i in zip(member.requests, assignment, strict=True):
            used[i] += request.count
        if any(used[i] > kinds[i].count for i in range(len(kinds))):
            continue
        demand = tuple(used[i] for i in pool.claimable)
        resolved = tuple(
            pl.DeviceRequest(r.name, r.count, kinds[i].device_class_name, r.selectors)
            for r, i in zip(member.requests, assignment, strict=True)
            if i in position
        )
        options[_MemberOption(demand, resolved)] = None
        if len(options) >= MAX_OPTIONS:
            break
    if not options:
        return (), f"requests do not fit the devices of one node of class {pool.class_name}"
    return tuple(options), ""


def _engine_units(
    engine: _Engine, pools: tuple[str, ...], members: tuple[_MemberOption, ...]
) -> tuple[tuple[str, tuple[Unit, ...]], ...]:
    gang: dict[str, list[Vector]] = {}
    for member, pool, option in zip(engine.members, pools, members, strict=True):
        gang.setdefault(pool, []).extend([option.demand] * member.pods)
    return tuple((pool, (tuple(pods),) * engine.copies) for pool, pods in sorted(gang.items()))


def _engine_options(
    matcher: _Matcher, e: int, cluster: _Cluster
) -> tuple[list[_EngineOption], dict[str, str]]:
    """The engine's options on the cluster, unsplit ones (by pool order) first; and per pool why
    no unsplit option exists there."""
    engine = matcher.engines[e]
    per_pool: dict[str, tuple[tuple[_MemberOption, ...], ...]] = {}
    reasons: dict[str, str] = {}
    for pool in cluster.pools:
        lists = []
        for m in range(len(engine.members)):
            options, reason = matcher.member(e, m, pool)
            if not options and pool.name not in reasons:
                reasons[pool.name] = f"engine {engine.name} member {m}: {reason}"
            lists.append(options)
        per_pool[pool.name] = tuple(lists)
    result: list[_EngineOption] = []
    layouts: list[tuple[str, ...]] = [(p.name,) * len(engine.members) for p in cluster.pools]
    layouts += [
        pools
        for pools in itertools.product([p.name for p in cluster.pools], repeat=len(engine.members))
        if len(set(pools)) > 1
    ]
    for pools in layouts:
        choices = [per_pool[pool][m] for m, pool in enumerate(pools)]
        for members in itertools.product(*choices):
            if not any(option.requests for option in members):
                if len(set(pools)) == 1 and pools[0] not in reasons:
                    reasons[pools[0]] = f"engine {engine.name} would claim no device there"
                continue
            splits = len(set(pools)) - 1
            units = _engine_units(engine, pools, members)
            result.append(_EngineOption(pools, members, splits, units))
            if len(result) >= MAX_OPTIONS * 8:
                return result, reasons
    return result, reasons


# --- the search -----------------------------------------------------------------------------


class _SearchedOutError(Exception):
    pass


def _search(
    options: list[list[_EngineOption]], states: dict[str, Load], replicas: int
) -> tuple[list[tuple[_EngineOption, ...]], dict[str, Load]] | None:
    """Place ``replicas`` replicas (each one option per engine) on one cluster's pools, fewest
    split engines first. Raises _SearchedOutError past the budget."""
    n = len(options)
    if n == 0 or any(not o for o in options):
        return None
    steps = [SEARCH_BUDGET]
    for max_splits in range(replicas * n + 1):
        if max_splits and all(o.splits == 0 for opts in options for o in opts):
            return None
        found = _dfs(options, states, replicas, max_splits, steps)
        if found is not None:
            return found
    return None


def _dfs(
    options: list[list[_EngineOption]],
    states: dict[str, Load],
    replicas: int,
    max_splits: int,
    steps: list[int],
) -> tuple[list[tuple[_EngineOption, ...]], dict[str, Load]] | None:
    n = len(options)
    slots = replicas * n
    chosen: list[int] = []
    units: dict[str, list[Unit]] = {}

    def go(slot: int, splits: int) -> dict[str, Load] | None:
        if slot == slots:
            after = dict(states)
            for pool, pending in units.items():
                if pending:
                    after[pool] = states[pool].plus(tuple(pending))
            return after
        steps[0] -= 1
        if steps[0] < 0:
            raise _SearchedOutError
        e = slot % n
        lowest = 0
        if slot >= n and chosen[slot - n - e : slot - n] == chosen[slot - e : slot]:
            # Replicas are interchangeable: each one's choices are no smaller than the previous.
            lowest = chosen[slot - n]
        for i in range(lowest, len(options[e])):
            option = options[e][i]
            if splits + option.splits > max_splits:
                continue
            for pool, us in option.units:
                units.setdefault(pool, []).extend(us)
            if all(states[pool].fits(tuple(units[pool])) for pool, _ in option.units):
                chosen.append(i)
                result = go(slot + 1, splits + option.splits)
                if result is not None:
                    return result
                chosen.pop()
            for pool, us in option.units:
                del units[pool][len(units[pool]) - len(us) :]
        return None

    after = go(0, 0)
    if after is None:
        return None
    picks = [tuple(options[e][chosen[r * n + e]] for e in range(n)) for r in range(replicas)]
    return picks, after


# --- the schedule ---------------------------------------------------------------------------


@dataclass
class _Replica:
    """A replica of this deployment being decided."""

    index: int
    cluster: str
    choice: tuple[_EngineOption, ...] | None
    existing: str | None = None


def _index(replica: dict[str, Any]) -> int | None:
    raw = (replica.get("metadata", {}).get("labels") or {}).get(pl.REPLICA_INDEX)
    try:
        index = int(str(raw))
    except ValueError:
        return None
    return index if index >= 0 and str(index) == str(raw) else None


def _namespace(replica: dict[str, Any]) -> str:
    meta = replica.get("metadata") or {}
    return str(meta.get("namespace") or (meta.get("labels") or {}).get(pl.DEPLOYMENT_NAMESPACE, ""))


def _placement(engines: tuple[_Engine, ...], r: _Replica) -> pl.ReplicaPlacement:
    assert r.choice is not None
    return pl.ReplicaPlacement(
        index=r.index,
        cluster=r.cluster,
        engines=tuple(
            pl.EnginePlacement(
                engine.name,
                tuple(
                    pl.MemberPlacement(member.role, pool, opt.requests)
                    for member, pool, opt in zip(
                        engine.members, option.pools, option.members, strict=True
                    )
                ),
            )
            for engine, option in zip(engines, r.choice, strict=True)
        ),
        existing=r.existing,
    )


def _as_observed(index: int, replica: dict[str, Any]) -> pl.ReplicaPlacement:
    """A replica kept exactly as stamped (used when selectors are broken)."""
    spec = replica.get("spec") or {}
    return pl.ReplicaPlacement(
        index=index,
        cluster=str(spec.get("clusterName", "")),
        engines=tuple(
            pl.EnginePlacement(
                str(engine.get("name", "")),
                tuple(
                    pl.MemberPlacement(
                        str(member.get("role", "Standalone")),
                        str(member.get("nodePoolName", "")),
                        tuple(
                            pl.DeviceRequest(
                                str(r.get("name", "")),
                                int(r.get("count", 1)),
                                str(r.get("deviceClassName", "")),
                                tuple(str(s.get("cel")) for s in r.get("selectors") or []),
                            )
                            for r in member.get("deviceRequests") or []
                        ),
                    )
                    for member in engine.get("members") or []
                ),
            )
            for engine in spec.get("engines") or []
        ),
        existing=str(replica.get("metadata", {}).get("name", "")),
    )


def _replica_units(choice: tuple[_EngineOption, ...]) -> dict[str, tuple[Unit, ...]]:
    units: dict[str, list[Unit]] = {}
    for option in choice:
        for pool, us in option.units:
            units.setdefault(pool, []).extend(us)
    return {pool: tuple(us) for pool, us in units.items()}


def _retain(
    matcher: _Matcher, cluster: _Cluster, replica: dict[str, Any]
) -> tuple[tuple[_EngineOption, ...] | None, str]:
    """Re-resolve an existing replica on its pinned pools, or say why it must move."""
    observed = {str(e.get("name", "")): e for e in (replica.get("spec") or {}).get("engines") or []}
    engines = matcher.engines
    if set(observed) != {e.name for e in engines}:
        return None, "its engines no longer match the deployment's"
    choice = []
    for e, engine in enumerate(engines):
        members = observed[engine.name].get("members") or []
        roles = [str(m.get("role", "Standalone")) for m in members]
        if roles != [m.role for m in engine.members]:
            return None, f"engine {engine.name}'s members changed"
        pools: list[str] = []
        picked: list[_MemberOption] = []
        for m, member in enumerate(members):
            pool = cluster.pool(str(member.get("nodePoolName", "")))
            if pool is None:
                return None, f"pool {member.get('nodePoolName')} is gone"
            options, reason = matcher.member(e, m, pool)
            if not options:
                return None, f"pool {pool.name} no longer fits: {reason}"
            stamped = observed_vector(pool, member.get("deviceRequests") or [])
            picked.append(next((o for o in options if o.demand == stamped), options[0]))
            pools.append(pool.name)
        if not any(o.requests for o in picked):
            return None, f"engine {engine.name} would claim no device on its pools"
        pools_t = tuple(pools)
        units = _engine_units(engine, pools_t, tuple(picked))
        choice.append(_EngineOption(pools_t, tuple(picked), len(set(pools_t)) - 1, units))
    for pool_name, alone in _replica_units(tuple(choice)).items():
        pool = cluster.pool(pool_name)
        assert pool is not None
        if fit(PoolState.empty(pool.per_node, pool.node_count), alone) is None:
            return None, f"pool {pool_name} no longer fits: too small for the replica alone"
    return tuple(choice), ""


def _is_serving(replica: dict[str, Any] | None) -> bool:
    c = condition(replica, "ModelServing")
    return c is not None and c.get("status") == "True"


def _created(replica: dict[str, Any]) -> tuple[str, str, str]:
    meta = replica.get("metadata") or {}
    return (str(meta.get("creationTimestamp") or ""), *_key(replica))


def _displaced(
    ledger: Ledger, cluster: str, mine: list[dict[str, Any]], theirs: list[dict[str, Any]]
) -> list[str]:
    """Names of this deployment's replicas on ``cluster`` that do not fit beside the replicas
    created before them. Two deployments reconciled at once can both take the same free
    devices; every deployment judges the cluster's replicas first come, first served (creation
    time, then namespace and name), so they agree on which replica moves and none stays
    overcommitted. Nothing is read unless some pool of the cluster is overcommitted."""
    specs = {_key(r): r.get("spec") or {} for r in [*mine, *theirs]}
    units = {key: observed_units(ledger.pools, cluster, spec) for key, spec in specs.items()}
    pools = {pool for us in units.values() for pool in us}
    total = {pool: tuple(u for us in units.values() for u in us.get(pool, ())) for pool in pools}
    if all(_empty_load(ledger, cluster, pool).fits(total[pool]) for pool in pools):
        return []
    accepted: dict[str, tuple[Unit, ...]] = {}
    ours = {_key(r) for r in mine}
    losers = []
    for r in sorted([*mine, *theirs], key=_created):
        key = _key(r)
        wanted = units[key]
        if all(
            _empty_load(ledger, cluster, pool).fits(accepted.get(pool, ()) + us)
            for pool, us in wanted.items()
        ):
            for pool, us in wanted.items():
                accepted[pool] = accepted.get(pool, ()) + us
        elif key in ours:
            losers.append(key[1])
    return losers


def _empty_load(ledger: Ledger, cluster: str, pool: str) -> Load:
    p = ledger.pools[(cluster, pool)]
    return Load(PoolState.empty(p.per_node, p.node_count))


def _overgrown(ledger: Ledger, kept: _Replica, replica: dict[str, Any]) -> str:
    """Why an edit (copies, worker.nodes, device counts) grew the kept replica past what its
    pools hold beside everything charged so far, or "". Only the edit is judged: a replica
    whose stamped size already did not fit (another deployment grew, a pool shrank) stays."""
    assert kept.choice is not None
    new = _replica_units(kept.choice)
    old = observed_units(ledger.pools, kept.cluster, replica.get("spec") or {})
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


def _ours(
    replicas: list[dict[str, Any]], namespace: str, name: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    ours: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    for r in replicas:
        labels = r.get("metadata", {}).get("labels") or {}
        mine = labels.get(pl.DEPLOYMENT) == name and _namespace(r) == namespace
        (ours if mine else others).append(r)
    return ours, others


def _key(replica: dict[str, Any]) -> tuple[str, str]:
    meta = replica.get("metadata") or {}
    return (_namespace(replica), str(meta.get("name", "")))


def schedule(
    deployment: dict[str, Any],
    clusters: list[dict[str, Any]],
    classes: list[dict[str, Any]],
    replicas: list[dict[str, Any]],
) -> pl.Schedule:
    """Place ``deployment``'s replicas on ``clusters`` (InferenceClusters) whose pools'
    ``classes`` (InferenceClasses) fit, charging ``replicas`` (every ModelReplica of every
    namespace, this deployment's included)."""
    meta = deployment.get("metadata") or {}
    namespace, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
    spec = deployment.get("spec") or {}
    desired = max(0, int(spec.get("replicas", 1)))
    template = spec.get("template", {}).get("spec") or {}
    selector = (template.get("clusterSelector") or {}).get("matchLabels") or {}
    tolerations = list(template.get("tolerations") or [])
    engines = _engines(template)

    kinds = {str(c.get("metadata", {}).get("name", "")): device_kinds(c) for c in classes}
    fleet = _clusters(clusters, kinds)
    by_name = {c.name: c for c in fleet}
    ours, others = _ours(replicas, namespace, name)
    ours.sort(key=lambda r: (_index(r) is None, _index(r) or 0, _key(r)))

    used_kinds = {c.class_name for cl in fleet for c in cl.pools}
    errors = _selector_errors(engines, [k for c in sorted(used_kinds) for k in kinds.get(c, ())])
    if errors:
        kept = []
        seen: set[int] = set()
        for r in ours:
            index = _index(r)
            if index is not None and index not in seen:
                seen.add(index)
                kept.append(_as_observed(index, r))
        return pl.Schedule(
            desired=desired,
            placements=tuple(kept),
            selector_errors=errors,
            shortfall=tuple(f"selector {e}" for e in errors),
            explain=lambda: tuple(
                pl.ClusterTrace(
                    c.name, False, "not considered: the deployment's selectors are invalid"
                )
                for c in fleet
            ),
        )

    matcher = _Matcher(engines)
    stamped_by_name = {_key(r)[1]: r for r in ours}
    removed: list[pl.RemovedReplica] = []
    kept_replicas: list[_Replica] = []
    taken: set[int] = set()
    for r in ours:
        index = _index(r)
        cluster_name = str((r.get("spec") or {}).get("clusterName", ""))
        r_name = _key(r)[1]

        def drop(
            reason: str, index: int | None = index, cluster: str = cluster_name, name: str = r_name
        ) -> None:
            removed.append(pl.RemovedReplica(name, -1 if index is None else index, cluster, reason))

        if index is None:
            drop(f"label {pl.REPLICA_INDEX} is missing or not an index")
            continue
        if index in taken:
            drop(f"another replica already holds index {index}")
            continue
        cluster = by_name.get(cluster_name)
        if cluster is None:
            drop(f"cluster {cluster_name} no longer exists")
            continue
        if any(cluster.labels.get(k) != v for k, v in selector.items()):
            drop(f"cluster {cluster_name} no longer matches the clusterSelector")
            continue
        if taint := _untolerated(cluster, tolerations, {"NoExecute"}):
            drop(f"cluster {cluster_name} is drained ({taint})")
            continue
        choice, reason = _retain(matcher, cluster, r)
        if choice is None:
            drop(reason)
            continue
        taken.add(index)
        kept_replicas.append(_Replica(index, cluster_name, choice, r_name))

    # Scale down: most-loaded cluster first, then one that is not serving (keeping it would
    # keep capacity that serves nothing), then the later name, then the higher index.
    load: dict[str, int] = {}
    for k in kept_replicas:
        load[k.cluster] = load.get(k.cluster, 0) + 1
    idle = {
        k.existing for k in kept_replicas if not _is_serving(stamped_by_name.get(k.existing or ""))
    }
    while len(kept_replicas) > desired:
        victim = max(
            kept_replicas,
            key=lambda k: (load[k.cluster], k.existing in idle, k.cluster, k.index),
        )
        kept_replicas.remove(victim)
        load[victim.cluster] -= 1
        removed.append(
            pl.RemovedReplica(victim.existing or "", victim.index, victim.cluster, "scale-down")
        )

    ledger = Ledger([p for c in fleet for p in c.pools])
    # Charging order cannot change an answer: every fit packs a pool's units in canonical order.
    stamped = stamped_by_name
    hosting = {k.cluster for k in kept_replicas}
    neighbours: dict[str, list[dict[str, Any]]] = {c: [] for c in hosting}
    for r in others:
        ledger.charge_observed(r)
        on = str((r.get("spec") or {}).get("clusterName") or "")
        if on in neighbours:
            neighbours[on].append(r)
    for c in sorted(hosting):
        mine = [stamped[k.existing or ""] for k in kept_replicas if k.cluster == c]
        for loser in _displaced(ledger, c, mine, neighbours[c]):
            k = next(k for k in kept_replicas if k.existing == loser)
            kept_replicas.remove(k)
            load[k.cluster] -= 1
            reason = (
                f"cluster {c} is overcommitted: replicas created before it hold its pool's devices"
            )
            removed.append(pl.RemovedReplica(loser, k.index, c, reason))
    for k in list(kept_replicas):
        assert k.choice is not None
        grown = _overgrown(ledger, k, stamped[k.existing or ""])
        if grown:
            kept_replicas.remove(k)
            load[k.cluster] -= 1
            removed.append(pl.RemovedReplica(k.existing or "", k.index, k.cluster, grown))
            continue
        ledger.charge(k.cluster, _replica_units(k.choice))

    fill = _Fill(matcher, fleet, ledger, selector, tolerations, load)
    free = (i for i in itertools.count() if i not in {k.index for k in kept_replicas})
    # A re-placed index first tries the cluster it was on (an in-place update, no churn). The
    # old replica may keep serving there until its replacement serves, uncharged: a replacement
    # swapped onto another cluster's old replica would wait on devices never freed.
    # All such homes are tried before any other placement, so no replica takes another's home.
    was_on = {r.index: r.cluster for r in removed if r.reason != "scale-down"}
    wanted = [next(free) for _ in range(desired - len(kept_replicas))]
    placed: list[_Replica] = []
    for index in wanted:
        if index in was_on and (home := fill.place_home(index, was_on[index])) is not None:
            placed.append(home)
    for index in wanted:
        if any(r.index == index for r in placed):
            continue
        got = fill.place(index)
        if got is None:
            break
        placed.append(got)

    all_replicas = sorted(kept_replicas + placed, key=lambda r: r.index)
    short = len(all_replicas) < desired
    shortfall = fill.trace(all_replicas)[1] if short else ()
    if short and not fleet:
        shortfall = ("no InferenceCluster exists",)
    return pl.Schedule(
        desired=desired,
        placements=tuple(_placement(engines, r) for r in all_replicas),
        removed=tuple(sorted(removed, key=lambda x: (x.index, x.name))),
        shortfall=shortfall,
        explain=lambda: fill.trace(all_replicas)[0],
    )


def _partly_free(state: PoolState) -> str:
    """The devices left on nodes already partly used, when any: a shortfall that counts only
    whole free nodes would hide them."""
    partly = [(v, n) for v, n in state.nodes if v != state.per_node and sum(v) > 0]
    if not partly:
        return ""
    devices = sum(sum(v) * n for v, n in partly)
    nodes = sum(n for _, n in partly)
    return (
        f" ({devices} device{'s' if devices != 1 else ''} free on {nodes} partly used "
        f"node{'s' if nodes != 1 else ''})"
    )


class _Fill:
    """Places new replicas one at a time, spreading before packing."""

    def __init__(
        self,
        matcher: _Matcher,
        fleet: list[_Cluster],
        ledger: Ledger,
        selector: dict[str, str],
        tolerations: list[dict[str, Any]],
        load: dict[str, int],
    ) -> None:
        self.matcher = matcher
        self.fleet = fleet
        self.ledger = ledger
        self.load = dict(load)
        self.ineligible: dict[str, str] = {}
        self.full: dict[str, str] = {}
        self.before: dict[str, dict[str, Load]] = {}
        self.new: dict[str, list[_Replica]] = {}
        self._options: dict[Any, tuple[list[list[_EngineOption]], dict[str, str]]] = {}
        self._memo: dict[Any, Any] = {}
        self._trace: tuple[tuple[pl.ClusterTrace, ...], tuple[str, ...]] | None = None
        for c in fleet:
            if any(c.labels.get(k) != v for k, v in selector.items()):
                wanted = ", ".join(f"{k}={v}" for k, v in sorted(selector.items()))
                self.ineligible[c.name] = f"labels do not match clusterSelector {wanted}"
            elif taint := _untolerated(c, tolerations, {"NoSchedule", "NoExecute"}):
                self.ineligible[c.name] = f"{taint} not tolerated"
            elif not c.pools:
                self.ineligible[c.name] = "has no node pools"
            elif c.source != "Existing":
                # The cluster composition builds nothing for a cloud source (see cluster.py):
                # a replica placed there would never be reached. Kept replicas stay (nothing
                # running is moved because the spec was edited).
                self.ineligible[c.name] = (
                    f"cluster.source {c.source or '(unset)'} is not supported: "
                    "only Existing clusters are reachable"
                )
        self.heap = [
            (self.load.get(c.name, 0), c.name, c) for c in fleet if c.name not in self.ineligible
        ]
        heapq.heapify(self.heap)

    def options(self, cluster: _Cluster) -> tuple[list[list[_EngineOption]], dict[str, str]]:
        # Options depend on pool names and classes only: clusters of one shape share them.
        shape = tuple((p.name, p.class_name) for p in cluster.pools)
        found = self._options.get(shape)
        if found is None:
            lists: list[list[_EngineOption]] = []
            reasons: dict[str, str] = {}
            for e in range(len(self.matcher.engines)):
                opts, why = _engine_options(self.matcher, e, cluster)
                lists.append(opts)
                for pool, reason in why.items():
                    reasons.setdefault(pool, reason)
            found = (lists, reasons)
            self._options[shape] = found
        return found

    def states(self, cluster: _Cluster) -> dict[str, Load]:
        return {p.name: self.ledger.load((cluster.name, p.name)) for p in cluster.pools}

    def _try(self, cluster: _Cluster, states: dict[str, Load], count: int) -> Any:
        key = (
            tuple((p.name, p.class_name, p.node_count) for p in cluster.pools),
            tuple(sorted(states.items(), key=lambda kv: kv[0])),
            count,
        )
        if key not in self._memo:
            options, _ = self.options(cluster)
            try:
                self._memo[key] = _search(options, states, count)
            except _SearchedOutError:
                self._memo[key] = "searched out"
        return self._memo[key]

    def place_home(self, index: int, name: str) -> _Replica | None:
        """The replica on cluster ``name`` if one more fits there, else None."""
        home = next((c for c in self.fleet if c.name == name), None)
        if home is None or home.name in self.ineligible or home.name in self.full:
            return None
        states = self.states(home)
        found = self._try(home, states, 1)
        if found is None or found == "searched out":
            return None
        picks, after = found
        self.before.setdefault(home.name, states)
        return self._commit(home, index, picks[0], after)

    def place(self, index: int) -> _Replica | None:
        # The heap holds every eligible cluster not yet full, keyed (load, name); a cluster's
        # entry is refreshed when its load changes, so stale entries are skipped.
        while self.heap:
            load, _, cluster = heapq.heappop(self.heap)
            if cluster.name in self.full or load != self.load.get(cluster.name, 0):
                continue
            states = self.states(cluster)
            found = self._try(cluster, states, 1)
            if found is not None and found != "searched out":
                picks, after = found
                self.before.setdefault(cluster.name, states)
                return self._commit(cluster, index, picks[0], after)
            earlier = self.new.get(cluster.name, [])
            if earlier and found != "searched out":
                # Repack this fill's replicas on the cluster together with one more.
                start = self.before[cluster.name]
                joint = self._try(cluster, start, len(earlier) + 1)
                if joint is not None and joint != "searched out":
                    picks, after = joint
                    for r, pick in zip(earlier, picks, strict=False):
                        r.choice = pick
                    return self._commit(cluster, index, picks[-1], after)
            self.full[cluster.name] = "searched out" if found == "searched out" else ""
        return None

    def _commit(
        self,
        cluster: _Cluster,
        index: int,
        choice: tuple[_EngineOption, ...],
        after: dict[str, Load],
    ) -> _Replica:
        for pool, load in after.items():
            self.ledger.loads[(cluster.name, pool)] = load
        self.load[cluster.name] = self.load.get(cluster.name, 0) + 1
        heapq.heappush(self.heap, (self.load[cluster.name], cluster.name, cluster))
        replica = _Replica(index, cluster.name, choice)
        self.new.setdefault(cluster.name, []).append(replica)
        return replica

    # --- explanations -------------------------------------------------------------------

    def _why_not(self, cluster: _Cluster) -> tuple[str, dict[str, str]]:
        """Why the cluster cannot take one more replica: a summary and a reason per pool."""
        if cluster.name in self.ineligible:
            why = self.ineligible[cluster.name]
            return why, {p.name: f"cluster not eligible: {why}" for p in cluster.pools}
        if self.full.get(cluster.name) == "searched out":
            return "search budget exhausted before a placement was found", {}
        options, reasons = self.options(cluster)
        states = self.states(cluster)
        more = self._try(cluster, states, 1)
        if more == "searched out":
            return "search budget exhausted before a placement was found", {}
        if more is not None:
            return pl.ROOM, {p.name: pl.POOL_ROOM for p in cluster.pools}
        pool_reasons = dict(reasons)
        engines = self.matcher.engines
        lines = []
        for e, engine in enumerate(engines):
            if not options[e]:
                lines.append(
                    "; ".join(
                        f"pool {p.name}: {reasons.get(p.name, 'no fit')}" for p in cluster.pools
                    )
                    or "no pools"
                )
                continue
            alone = [o for o in options[e] if all(states[p].fits(us) for p, us in o.units)]
            if alone:
                continue
            # Every pool's reason goes to the trace; the shortfall names the pool that came
            # closest (most nodes available to the engine), not merely the first one.
            closest: tuple[int, int, str] | None = None
            for order, option in enumerate(options[e]):
                if option.splits:
                    continue
                pool_name = option.pools[0]
                pool = cluster.pool(pool_name)
                assert pool is not None
                state = states[pool_name].state()
                units = tuple(u for _, us in option.units for u in us)
                needed = nodes_needed(pool.per_node, units, max(pool.node_count, 1) + 64)
                need = f"{needed}" if needed is not None else "more"
                free = state.free_nodes
                if needed is not None and needed > pool.node_count:
                    available = pool.node_count
                    why = (
                        f"pool {pool_name} has {pool.node_count} node"
                        f"{'s' if pool.node_count != 1 else ''}, engine {engine.name} needs {need}"
                    )
                else:
                    available = free
                    why = (
                        f"pool {pool_name} has {free} free node{'s' if free != 1 else ''}"
                        f"{_partly_free(state)}, engine {engine.name} needs {need}"
                    )
                    if _partly_free(state):
                        biggest = max((sum(pod) for u in units for pod in u), default=0)
                        why += f" with up to {biggest} devices per pod"
                pool_reasons.setdefault(pool_name, why)
                if closest is None or (available, -order) > closest[:2]:
                    closest = (available, -order, why)
            if closest is None:
                lines.append(f"engine {engine.name} does not fit its pools' free devices")
            elif closest[2] not in lines:
                lines.append(closest[2])
        if not lines:
            lines.append("its pools cannot hold every engine of one more replica together")
        for p in cluster.pools:
            pool_reasons.setdefault(p.name, "fits no engine of one more replica")
        return "; ".join(lines), pool_reasons

    def trace(
        self, replicas: list[_Replica]
    ) -> tuple[tuple[pl.ClusterTrace, ...], tuple[str, ...]]:
        """Per cluster, what it hosts or why it took nothing; and per cluster that cannot take
        one more replica, why (the shortfall lines). Computed once."""
        if self._trace is None:
            self._trace = self._explain(replicas)
        return self._trace

    def _explain(
        self, replicas: list[_Replica]
    ) -> tuple[tuple[pl.ClusterTrace, ...], tuple[str, ...]]:
        hosted: dict[str, list[_Replica]] = {}
        for r in replicas:
            hosted.setdefault(r.cluster, []).append(r)
        out = []
        full = []
        for cluster in self.fleet:
            mine = hosted.get(cluster.name, [])
            uses: dict[str, list[str]] = {}
            for r in mine:
                assert r.choice is not None
                for engine, option in zip(self.matcher.engines, r.choice, strict=True):
                    for pool in dict.fromkeys(option.pools):
                        uses.setdefault(pool, []).append(f"replica {r.index} engine {engine.name}")
            summary, pool_reasons = self._why_not(cluster)
            if summary != pl.ROOM:
                full.append(f"{cluster.name}: {summary}")
            pools = tuple(
                pl.PoolTrace(p.name, True, "hosts " + ", ".join(uses[p.name]))
                if p.name in uses
                else pl.PoolTrace(p.name, False, pool_reasons.get(p.name, "not needed"))
                for p in cluster.pools
            )
            if mine:
                reason = f"hosts replica{'s' if len(mine) > 1 else ''} " + ", ".join(
                    str(r.index) for r in mine
                )
            else:
                reason = summary
            out.append(
                pl.ClusterTrace(
                    cluster.name,
                    cluster.name not in self.ineligible,
                    reason,
                    pools,
                    tuple(r.index for r in mine),
                )
            )
        return tuple(out), tuple(full)
