"""The fleet as the scheduler reads it: clusters, their labels, taints and pools."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar, overload

from modelplane import labels
from modelplane.kube import objects
from modelplane.scheduling.capacity import Pool
from modelplane.scheduling.devices import DeviceKind

T = TypeVar("T")

Admits = Callable[["Cluster"], str]
"""A caller's constraint on where the deployment's replicas may stand, beside its own
clusterSelector (the ModelDeployment's: where its ModelCache stages the weights): why the
cluster may not host one ("" when it may)."""


class read_once(Generic[T]):  # noqa: N801  (reads as the decorator it replaces)
    """``functools.cached_property`` without its lock: Python 3.11 takes one on every first
    read, and a schedule reads several properties of every cluster of the fleet once."""

    def __init__(self, func: Callable[[Any], T]) -> None:
        self._func = func
        self._name = func.__name__

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> read_once[T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> T | read_once[T]:
        if obj is None:
            return self
        # Stored on the instance, the value hides this (non-data) descriptor from then on.
        value = obj.__dict__[self._name] = self._func(obj)
        return value


class Cluster:
    """One InferenceCluster as the scheduler reads it. A reconcile reads the whole fleet but
    considers few clusters, so only the name is read up front; labels, taints, source and
    pools are read when first asked for."""

    def __init__(
        self,
        name: str,
        raw: Mapping[str, Any],
        kinds: Mapping[str, tuple[DeviceKind, ...]],
        prices: Mapping[str, float | None] | None = None,
    ) -> None:
        self.name = name
        self._raw = raw
        self._kinds = kinds
        self._prices = prices or {}

    @read_once
    def _spec(self) -> Mapping[str, Any]:
        return objects.spec(self._raw)

    @read_once
    def labels(self) -> dict[str, str]:
        return dict(objects.labels(self._raw))

    @read_once
    def taints(self) -> tuple[tuple[str, str, str], ...]:
        return tuple(
            sorted(
                (str(t.get("key", "")), str(t.get("value", "")), str(t.get("effect", "")))
                for t in self._spec.get("taints") or ()
            )
        )

    @read_once
    def source(self) -> str:
        return str(objects.dig(self._spec, "cluster", "source") or "")

    @read_once
    def node_pools(self) -> Sequence[Any]:
        """``spec.nodePools`` as given."""
        return self._spec.get("nodePools") or ()

    @read_once
    def pool_names(self) -> tuple[str, ...]:
        """The pools' names in order (``pools``), without reading the pools themselves: all an
        ineligible cluster's explanation needs of them."""
        return tuple(sorted(str(p.get("name", "")) for p in self.node_pools))

    @read_once
    def pools(self) -> tuple[Pool, ...]:
        # nodePools is a list-map keyed by name: its order means nothing, so pools are taken
        # (and preferred, among equal fits) in name order, whatever order they are listed in.
        pools = []
        for p in self.node_pools:
            class_name = str(p.get("className", ""))
            # The nodes a pool has now are at least its minNodeCount (the autoscaler keeps
            # them); it may grow to its maxNodeCount, and that headroom is capacity too.
            existing = max(0, int(p.get("nodeCount", 1)), int(p.get("minNodeCount", 0) or 0))
            grows_to = max(existing, int(p.get("maxNodeCount", 0) or 0))
            name = str(p.get("name", ""))
            kinds, price = self._kinds.get(class_name, ()), self._prices.get(class_name)
            pools.append(Pool(self.name, name, class_name, kinds, grows_to, existing, price))
        return tuple(sorted(pools, key=lambda p: p.name))

    @read_once
    def cache_storage_class(self) -> str:
        """The ReadWriteMany storage class model caches are staged on ("" when none is named)."""
        return cache_storage_class(self._raw)

    @read_once
    def deleting(self) -> str:
        """Why the cluster is being emptied ("" while it is not): someone deleted it and the
        replica guard refused (``labels.DELETION_ATTEMPT``), or it is already terminating.
        Its replicas move elsewhere, make before break, and nothing new lands there; once the
        last goes, the guard goes and Crossplane replays the delete."""
        if labels.DELETION_ATTEMPT in objects.annotations(self._raw):
            return "deletion requested (its delete is replayed once its replicas are gone)"
        if objects.dig(self._raw, "metadata", "deletionTimestamp"):
            return "being deleted"
        return ""

    @read_once
    def unready(self) -> str:
        """Why the cluster's serving stack is not ready ("" once it is): nothing new lands there.

        The cluster composition reports StackReady from its first reconcile on. A cluster that
        reports none is judged on its spec: a hand-written fleet (explain, render's first pass),
        or one created a moment ago, whose replicas cannot be composed before it reports anyway.
        """
        for c in objects.status(self._raw).get("conditions") or ():
            if c.get("type") == "StackReady" and c.get("status") != "True":
                return str(c.get("message") or c.get("reason") or "not ready")
        return ""

    @read_once
    def allocation(self) -> Mapping[str, Any] | None:
        """``status.allocation`` as the cluster publishes it (``allocation.read_published``
        reads it), None when it publishes none."""
        raw = objects.dig(self._raw, "status", "allocation")
        return raw if isinstance(raw, Mapping) else None

    def class_names(self) -> set[str]:
        return {str(p.get("className", "")) for p in self.node_pools}

    def pool(self, name: str) -> Pool | None:
        return next((p for p in self.pools if p.name == name), None)


def pool_class_names(clusters: Iterable[Mapping[str, Any]]) -> set[str]:
    """The InferenceClasses the clusters' node pools name, read from their specs as listed: the
    classes a composer must read (by name when a list misses one) before it trusts a pool."""
    return {
        str(p["className"])
        for c in clusters
        for p in objects.spec(c).get("nodePools") or ()
        if isinstance(p, Mapping) and p.get("className")
    }


def cache_storage_class(cluster: Mapping[str, Any]) -> str:
    """The RWX class an InferenceCluster names for model caches, "" when it names none.

    What the cluster publishes (``status.cache``; a Managed cluster composes its own), else what
    an Existing cluster's spec names, which its status mirrors once composed.
    """
    published = objects.dig(cluster, "status", "cache", "storageClassName")
    if published:
        return str(published)
    existing = objects.dig(cluster, "spec", "cluster", "existing", "cache", "storageClassName")
    return str(existing or "")


Clusters = Sequence[Mapping[str, Any]] | Mapping[str, Mapping[str, Any]]
"""InferenceClusters as listed, or already indexed by name (``index_clusters``)."""


def index_clusters(clusters: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Each InferenceCluster by name, each name read once. Names are unique in the API; a
    duplicated input keeps its first entry. One without a name is malformed: reading it
    raises (a view of a request's item says which)."""
    index: dict[str, Mapping[str, Any]] = {}
    for c in clusters:
        index.setdefault(str(c["metadata"]["name"]), c)
    return index


def parse_clusters(
    clusters: Clusters,
    kinds: Mapping[str, tuple[DeviceKind, ...]],
    prices: Mapping[str, float | None] | None = None,
) -> list[Cluster]:
    """The clusters as the scheduler reads them, sorted by name. A caller that read their
    names already hands them over indexed, and none is read again."""
    index = clusters if isinstance(clusters, Mapping) else index_clusters(clusters)
    return [Cluster(name, index[name], kinds, prices) for name in sorted(index)]


class FleetPools(Mapping[tuple[str, str], Pool]):
    """Every pool of the fleet by (cluster, pool name), each cluster's parsed when first asked."""

    def __init__(self, fleet: Iterable[Cluster]) -> None:
        self._clusters = {c.name: c for c in fleet}

    def __getitem__(self, key: tuple[str, str]) -> Pool:
        cluster = self._clusters.get(key[0])
        pool = cluster.pool(key[1]) if cluster is not None else None
        if pool is None:
            raise KeyError(key)
        return pool

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return ((c.name, p.name) for c in self._clusters.values() for p in c.pools)

    def __len__(self) -> int:
        return sum(len(c.pools) for c in self._clusters.values())


def tolerated(taint: tuple[str, str, str], tolerations: list[dict[str, Any]]) -> bool:
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


def untolerated(cluster: Cluster, tolerations: list[dict[str, Any]], effects: set[str]) -> str:
    for taint in cluster.taints:
        if taint[2] in effects and not tolerated(taint, tolerations):
            key, value, effect = taint
            return f"{effect} taint {key}={value}" if value else f"{effect} taint {key}"
    return ""
