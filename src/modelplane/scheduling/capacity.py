"""The fleet-wide capacity ledger, at device granularity.

A pool offers ``nodeCount`` nodes, each carrying its InferenceClass's devices. A pod needs all
its devices on one node; the pods of one gang copy placed on one pool (a Leader and its
``worker.nodes`` Workers) need distinct nodes; pods of different copies may share a node, so
four 2-GPU pods fit on one 8-GPU node. Only claimable (DRA) devices are consumed: Synthetic
devices steer placement and are never claimed, so nothing can be charged against them.

A pool's free state is a multiset of per-node free-device vectors (:class:`PoolState`), so
identical nodes are one entry and the search never tries two of them for the same pod. Fitting a
set of gangs into a pool is an exact, deterministic backtracking search (:func:`fit`), cached
on (state, demand): fleets of identical clusters cost one search per distinct state.

Where the real pods sit is the workload cluster's scheduler's business and is never observed, so
the ledger fixes no packing: a pool's :class:`Load` is the gangs charged to it, and every question
packs those plus the newcomers in one exact search. A pool whose charged replicas no longer fit (it
shrank, copies grew) is overcommitted and takes nothing new until it drains.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from typing import Any, NamedTuple

from modelplane.kube import objects
from modelplane.scheduling.devices import DeviceKind, matches
from modelplane.scheduling.placement import Assignment, read_device_assignment

Vector = tuple[int, ...]
"""Devices per claimable kind of a pool's class, in device name order."""

Unit = tuple[Vector, ...]
"""Pods that need distinct nodes: one gang copy's pods on one pool (a single pod is a unit)."""

Nodes = tuple[tuple[Vector, int], ...]
"""A multiset of node free-vectors: (free devices, how many nodes), sorted by vector."""

SEARCH_BUDGET = 200_000
"""Search steps one :func:`fit` may take before it gives up (and reports no fit)."""


class PoolState(NamedTuple):
    """The free devices of every node of one pool (a tuple: cheap to hash and compare)."""

    per_node: Vector
    nodes: Nodes

    @staticmethod
    def empty(per_node: Vector, node_count: int) -> PoolState:
        return PoolState(per_node, ((per_node, node_count),) if node_count > 0 else ())

    @property
    def free_nodes(self) -> int:
        """Nodes with every device free."""
        return sum(n for v, n in self.nodes if v == self.per_node)

    @property
    def overcommitted(self) -> bool:
        return any(x < 0 for v, _ in self.nodes for x in v)


def _fits(free: Vector, pod: Vector) -> bool:
    return all(f >= p for f, p in zip(free, pod, strict=True))


def _sub(free: Vector, pod: Vector) -> Vector:
    return tuple(f - p for f, p in zip(free, pod, strict=True))


def _remove(nodes: Nodes, i: int) -> Nodes:
    vector, count = nodes[i]
    if count == 1:
        return nodes[:i] + nodes[i + 1 :]
    return (*nodes[:i], (vector, count - 1), *nodes[i + 1 :])


def _add(nodes: Nodes, vectors: tuple[Vector, ...]) -> Nodes:
    counts = dict(nodes)
    for v in vectors:
        counts[v] = counts.get(v, 0) + 1
    return tuple(sorted(counts.items()))


def order_units(units: tuple[Unit, ...]) -> tuple[Unit, ...]:
    """Canonical order: biggest gangs first, each gang's biggest pods first."""
    ordered = (tuple(sorted(u, key=lambda p: (-sum(p), p))) for u in units)
    return tuple(sorted(ordered, key=lambda u: (-len(u), -sum(map(sum, u)), u)))


class _BudgetError(Exception):
    pass


def _unit_placements(
    nodes: Nodes,
    pods: Unit,
    j: int,
    held: tuple[Vector, ...],
    floor: Vector | None,
    steps: list[int],
) -> Iterator[Nodes]:
    """Every way to put pods[j:] on distinct nodes; tightest nodes first."""
    if j == len(pods):
        yield _add(nodes, held)
        return
    steps[0] -= 1
    if steps[0] < 0:
        raise _BudgetError
    pod = pods[j]
    same_as_previous = j > 0 and pods[j - 1] == pod
    candidates = sorted(
        (sum(v) - sum(pod), v, i)
        for i, (v, _) in enumerate(nodes)
        # Identical pods take nodes in non-decreasing vector order: one representative per
        # multiset of choices.
        if _fits(v, pod) and not (same_as_previous and floor is not None and v < floor)
    )
    for _, vector, i in candidates:
        yield from _unit_placements(
            _remove(nodes, i), pods, j + 1, (*held, _sub(vector, pod)), vector, steps
        )


def _fit_units(
    nodes: Nodes, units: tuple[Unit, ...], i: int, failed: set[tuple[int, Nodes]], steps: list[int]
) -> Nodes | None:
    if i == len(units):
        return nodes
    if (i, nodes) in failed:
        return None
    seen: set[Nodes] = set()
    for after in _unit_placements(nodes, units[i], 0, (), None, steps):
        if after in seen:
            continue
        seen.add(after)
        result = _fit_units(after, units, i + 1, failed, steps)
        if result is not None:
            return result
    failed.add((i, nodes))
    return None


@lru_cache(maxsize=65536)
def _fit(nodes: Nodes, units: tuple[Unit, ...]) -> Nodes | None:
    try:
        return _fit_units(nodes, units, 0, set(), [SEARCH_BUDGET])
    except _BudgetError:
        return None


@lru_cache(maxsize=65536)
def _fit_any_order(nodes: Nodes, units: tuple[Unit, ...]) -> Nodes | None:
    # Necessary conditions first: enough devices of each kind, enough nodes for the widest gang.
    if max(map(len, units)) > sum(n for _, n in nodes):
        return None
    width = len(nodes[0][0]) if nodes else 0
    for i in range(width):
        if sum(p[i] for u in units for p in u) > sum(v[i] * n for v, n in nodes):
            return None
    return _fit(nodes, order_units(units))


def fit(state: PoolState, units: tuple[Unit, ...]) -> PoolState | None:
    """The pool after placing every unit, or None when they cannot all fit (exact search)."""
    if not units:
        return state
    nodes = _fit_any_order(state.nodes, units)
    return None if nodes is None else PoolState(state.per_node, nodes)


def force(state: PoolState, units: tuple[Unit, ...]) -> PoolState:
    """Charge units that may not fit: each pod on the node with the most free devices, going
    negative where it must (an overcommitted pool blocks new placements)."""
    nodes = state.nodes
    for unit in order_units(units):
        held: list[Vector] = []
        for pod in unit:
            if not nodes:
                break
            i = max(range(len(nodes)), key=lambda k: (sum(nodes[k][0]), nodes[k][0]))
            held.append(_sub(nodes[i][0], pod))
            nodes = _remove(nodes, i)
        nodes = _add(nodes, tuple(held))
    return PoolState(state.per_node, nodes)


def charge(state: PoolState, units: tuple[Unit, ...]) -> tuple[PoolState, bool]:
    """Charge units exactly when they fit, by force when not; says whether they fitted."""
    after = fit(state, units)
    if after is not None:
        return after, True
    return force(state, units), False


@lru_cache(maxsize=4096)
def nodes_needed(per_node: Vector, units: tuple[Unit, ...], limit: int) -> int | None:
    """The fewest whole nodes of this shape the units fit on (None above ``limit``)."""
    low = max((len(u) for u in units), default=0)
    for count in range(max(low, 1), limit + 1):
        if fit(PoolState.empty(per_node, count), units) is not None:
            return count
    return None


class Pool:
    """One node pool of one InferenceCluster, with its class's devices resolved."""

    __slots__ = (
        "ambiguous",
        "claimable",
        "class_name",
        "cluster",
        "existing",
        "kinds",
        "name",
        "node_count",
        "per_node",
        "price",
    )

    def __init__(
        self,
        cluster: str,
        name: str,
        class_name: str,
        kinds: tuple[DeviceKind, ...],
        nodes: int,
        existing: int | None = None,
        price: float | None = None,
    ) -> None:
        self.cluster = cluster
        self.name = name
        self.class_name = class_name
        self.kinds = kinds
        # ``nodes`` is what the pool may hold (``maxNodeCount`` when it can grow), ``existing``
        # the nodes it has now; placing beyond them is what makes its autoscaler add nodes.
        self.node_count = nodes
        self.existing = nodes if existing is None else min(existing, nodes)
        self.price = price
        # Indices (into kinds) of the devices the ledger counts: the claimable ones.
        self.claimable: tuple[int, ...] = tuple(i for i, k in enumerate(kinds) if k.claimable)
        self.per_node: Vector = tuple(kinds[i].count for i in self.claimable)
        classes = [kinds[i].device_class_name for i in self.claimable]
        # DeviceClasses shared by several claimable kinds: a stamp naming one is ambiguous.
        self.ambiguous = frozenset(c for c in classes if classes.count(c) > 1)


def fits_alone(pool: Pool, units: tuple[Unit, ...]) -> bool:
    """Whether ``units`` fit on the pool's nodes with nothing else charged."""
    return fit(PoolState.empty(pool.per_node, pool.node_count), units) is not None


class Load(NamedTuple):
    """A pool's nodes and every gang charged to it. Where each pod sits is never fixed: each
    question (does this fit too?) packs everything charged plus the newcomers in one exact
    search, so no earlier packing choice can strand devices a later placement needs."""

    empty: PoolState
    units: tuple[Unit, ...] = ()

    def fits(self, units: tuple[Unit, ...] = ()) -> bool:
        return fit(self.empty, self.units + units) is not None

    def plus(self, units: tuple[Unit, ...]) -> Load:
        return Load(self.empty, order_units(self.units + units))

    def state(self) -> PoolState:
        """One packing of what is charged (forced, possibly negative, when it does not fit)."""
        return fit(self.empty, self.units) or force(self.empty, self.units)

    @property
    def overcommitted(self) -> bool:
        return not self.fits()


HeldByOthers = Callable[[str], Mapping[str, tuple[Unit, ...]]]
"""By cluster name, what its published allocation says other deployments hold, by pool (read
from ``allocation.Published``)."""


class Ledger:
    """Every pool of the fleet with the ModelReplicas charged to it: what each cluster
    publishes that other deployments hold (``published``), and the replicas charged here."""

    def __init__(
        self, pools: Mapping[tuple[str, str], Pool], published: HeldByOthers | None = None
    ) -> None:
        self.pools = pools
        self.loads: dict[tuple[str, str], Load] = {}
        self._vectors: dict[Any, Vector] = {}
        self._published = published
        self._read: dict[str, Mapping[str, tuple[Unit, ...]]] = {}
        self._pending: dict[tuple[str, str], list[Unit]] = {}
        self._observed: dict[str, list[tuple[dict[str, Any], Assignment]]] = {}

    def published(self, cluster: str) -> Mapping[str, tuple[Unit, ...]]:
        """What the cluster publishes that others hold, by pool (read once, when first asked)."""
        found = self._read.get(cluster)
        if found is None:
            found = self._read[cluster] = self._published(cluster) if self._published else {}
            self.charge(cluster, found)
        return found

    def charge(self, cluster: str, units_by_pool: Mapping[str, tuple[Unit, ...]]) -> None:
        for pool, units in units_by_pool.items():
            key = (cluster, pool)
            if key in self.pools:
                self._pending.setdefault(key, []).extend(units)

    def load(self, key: tuple[str, str]) -> Load:
        """The pool's load with everything charged so far."""
        self.published(key[0])
        for spec, recorded in self._observed.pop(key[0], ()):
            _observed_into(self._pending, self.pools, key[0], spec, recorded, self._vectors)
        if key not in self.loads:
            pool = self.pools[key]
            self.loads[key] = Load(PoolState.empty(pool.per_node, pool.node_count))
        pending = self._pending.pop(key, None)
        if pending:
            current = self.loads[key]
            self.loads[key] = Load(current.empty, current.units + tuple(pending))
        return self.loads[key]

    def charge_observed(self, replica: dict[str, Any]) -> None:
        """Charge an existing ModelReplica from its own spec (whatever its deployment). Read
        when one of its cluster's pools is first asked about: clusters a reconcile never
        considers cost one dict lookup per replica."""
        spec = replica.get("spec") or {}
        recorded = read_device_assignment(replica)
        self._observed.setdefault(str(spec.get("clusterName") or ""), []).append((spec, recorded))


def pod_count(member: dict[str, Any]) -> int:
    """Pods of one member per copy: ``worker.nodes`` for a Worker, one otherwise."""
    if member.get("role") == "Worker":
        return max(1, int(objects.dig(member, "worker", "nodes", default=1)))
    return 1


ASSIGNMENTS = 4096
"""Request-to-device assignments :func:`observed_vector` tries before settling for the first
(only conceivable with many requests on many devices of one DeviceClass)."""


def observed_vector(
    pool: Pool, requests: list[dict[str, Any]], recorded: Mapping[str, str] | None = None
) -> Vector:
    """A stamped member's per-pod demand on its pool.

    A stamped request names a DeviceClass, not a device. Where one claimable device of the
    pool's class has that DeviceClass it is that device; where several share it, the device
    recorded at placement (``recorded``, by request name) when there is one, else the requests
    are assigned jointly as the placement search assigns them: the first assignment, in device
    order, in which each request's selectors match its device and the requests sharing a device
    fit its per-node count. Assigning each request on its own would charge two requests that
    the search put on two devices to the same one."""
    choices: list[tuple[int, tuple[int, ...]]] = []
    for request in requests:
        devices = _request_devices(pool, request, recorded or {})
        if devices:
            choices.append((max(0, int(request.get("count", 1))), devices))
    return _assign(pool.per_node, tuple(choices))


def _request_devices(
    pool: Pool, request: Mapping[str, Any], recorded: Mapping[str, str]
) -> tuple[int, ...]:
    """The claimable devices (by position) one stamped request may be on: the one its
    DeviceClass names, the one recorded at placement, or those its selectors match (the first
    of the DeviceClass when none does); () when no claimable device has its DeviceClass."""
    claimable = pool.claimable
    dcn = request.get("deviceClassName")
    same_class = tuple(j for j, i in enumerate(claimable) if pool.kinds[i].device_class_name == dcn)
    if len(same_class) <= 1:
        return same_class
    named = recorded.get(str(request.get("name", "")))
    pinned = tuple(j for j in same_class if pool.kinds[claimable[j]].name == named)
    if pinned:
        return pinned[:1]
    selectors = tuple(str(s.get("cel")) for s in request.get("selectors") or [] if "cel" in s)
    matching = tuple(j for j in same_class if matches(selectors, pool.kinds[claimable[j]]) is True)
    return matching or same_class[:1]


@lru_cache(maxsize=4096)
def _assign(per_node: Vector, choices: tuple[tuple[int, tuple[int, ...]], ...]) -> Vector:
    first: Vector | None = None
    for combo in itertools.islice(itertools.product(*(js for _, js in choices)), ASSIGNMENTS):
        demand = [0] * len(per_node)
        for (count, _), j in zip(choices, combo, strict=True):
            demand[j] += count
        if all(d <= n for d, n in zip(demand, per_node, strict=True)):
            return tuple(demand)
        if first is None:
            first = tuple(demand)
    # Nothing fits one node: charge the first assignment (the pool reads as overcommitted).
    return first if first is not None else tuple(0 for _ in per_node)


def _request_key(
    pool: Pool, requests: list[dict[str, Any]], recorded: Mapping[str, str] | None
) -> Any:
    # Selectors and recorded devices only matter where two claimable kinds share a DeviceClass;
    # elsewhere the class alone names the kind, so the key (and the cache) skips reading them.
    key: list[Any] = [pool.class_name]
    for r in requests:
        dcn = r.get("deviceClassName")
        if dcn in pool.ambiguous:
            selectors = tuple(str(s.get("cel")) for s in r.get("selectors") or [])
            device = (recorded or {}).get(str(r.get("name", "")), "")
            key.append((dcn, r.get("count", 1), selectors, r.get("name"), device))
        else:
            key.append((dcn, r.get("count", 1)))
    return tuple(key)


def observed_units(
    pools: Mapping[tuple[str, str], Pool], cluster: str, replica: dict[str, Any]
) -> dict[str, tuple[Unit, ...]]:
    """What a ModelReplica occupies, per pool of its cluster. A member pinned to a pool the
    cluster no longer has occupies nothing (its pods match no node)."""
    sink: dict[tuple[str, str], list[Unit]] = {}
    spec = replica.get("spec") or {}
    _observed_into(sink, pools, cluster, spec, read_device_assignment(replica), {})
    return {pool: tuple(units) for (_, pool), units in sink.items()}


def _observed_into(
    sink: dict[tuple[str, str], list[Unit]],
    pools: Mapping[tuple[str, str], Pool],
    cluster: str,
    spec: dict[str, Any],
    recorded: Assignment,
    cache: dict[Any, Vector],
) -> None:
    # The hot loop of a large fleet's worst case (every replica read): kept flat on purpose.
    for engine in spec.get("engines") or ():
        copies = max(0, int(engine.get("copies", 1)))
        gang: dict[tuple[str, str], list[Vector]] = {}
        for m, member in enumerate(engine.get("members") or ()):
            key = (cluster, member.get("nodePoolName"))
            pool = pools.get(key)
            if pool is None:
                continue
            requests = member.get("deviceRequests") or []
            devices = recorded.get((str(engine.get("name", "")), m)) if recorded else None
            rkey = _request_key(pool, requests, devices)
            vector = cache.get(rkey)
            if vector is None:
                vector = cache[rkey] = observed_vector(pool, requests, devices)
            pods = pod_count(member) if member.get("role") == "Worker" else 1
            on_pool = gang.get(key)
            if on_pool is None:
                gang[key] = [vector] * pods
            else:
                on_pool.extend([vector] * pods)
        for key, pods_on_pool in gang.items():
            units = sink.get(key)
            if units is None:
                sink[key] = [tuple(pods_on_pool)] * copies
            else:
                units.extend([tuple(pods_on_pool)] * copies)
