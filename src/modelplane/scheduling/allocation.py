"""A cluster's published allocation: which ModelReplicas hold its pools' devices.

The InferenceCluster sees every ModelReplica placed on it, so it is the arbiter of its own
capacity (docs/design/scheduling.md, "Capacity: who arbitrates"): :func:`arbitrate` admits the
replicas in a deterministic order within what each pool holds and refuses the rest, and
``status.allocation`` publishes the answer. A deployment charges what the cluster admitted for
other deployments instead of listing every replica of the fleet, counts its own placement as
confirmed once the cluster names it, and re-places one the cluster refuses.

Admission order: the replicas the previous allocation admitted first (an admission is never
withdrawn because a list lagged or an older replica showed up late), then the others by creation
time, namespace and name. A replica is admitted when it fits beside every replica admitted
before it, packed exactly as the ledger packs (``capacity.fit``).

What a deployment charges is kept per deployment and pool as gangs of pods, each pod its
devices by name (``gpu=2``; ``0`` for a pod that claims none), pods of one gang joined by ``+``
and identical gangs counted (``4*gpu=2``): the ledger's units, small enough to travel in every
request of every deployment, and read back whatever order the class lists its devices in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from modelplane import labels
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.scheduling.capacity import (
    Pool,
    Unit,
    Vector,
    fits_alone,
    observed_units,
    order_units,
)
from modelplane.scheduling.replicas import replica_identity, replica_namespace

Key = tuple[str, str]
"""A replica by (namespace, name)."""


def deployment_of(replica: dict[str, Any]) -> str:
    """``namespace/name`` of the ModelDeployment a replica's labels name."""
    stamped = objects.labels(replica).get(labels.DEPLOYMENT, "")
    return f"{replica_namespace(replica)}/{stamped}"


# --- the encoding ---------------------------------------------------------------------------


def _names(pool: Pool) -> tuple[str, ...]:
    return tuple(pool.kinds[i].name for i in pool.claimable)


def encode(pool: Pool, units: Iterable[Unit]) -> list[str]:
    """A pool's units as published: canonical order, identical gangs counted."""
    names = _names(pool)
    counted: dict[str, int] = {}
    for unit in order_units(tuple(units)):
        pods = "+".join(
            ",".join(f"{n}={c}" for n, c in zip(names, pod, strict=True) if c) or "0"
            for pod in unit
        )
        counted[pods] = counted.get(pods, 0) + 1
    return [f"{n}*{pods}" if n > 1 else pods for pods, n in counted.items()]


def decode(pool: Pool, published: Iterable[Any]) -> tuple[Unit, ...]:
    """The units a pool's published strings stand for. Devices the pool's class no longer has
    are dropped (a pod needing them matches no node of it); a malformed entry charges nothing,
    as a replica pinned to a pool that is gone does."""
    index = {name: i for i, name in enumerate(_names(pool))}
    width = len(index)
    out: list[Unit] = []
    for text in published:
        count, _, pods = str(text).rpartition("*")
        try:
            copies = int(count) if count else 1
            unit = tuple(_pod(pod, index, width) for pod in pods.split("+"))
        except ValueError:
            continue
        out.extend([unit] * max(0, copies))
    return tuple(out)


def _pod(text: str, index: Mapping[str, int], width: int) -> Vector:
    vector = [0] * width
    if text != "0":
        for part in text.split(","):
            name, _, count = part.partition("=")
            if name in index:
                vector[index[name]] += int(count)
            else:
                int(count)  # still well formed
    return tuple(vector)


# --- the arbiter ------------------------------------------------------------------------------


def admission_order(replica: dict[str, Any], admitted: frozenset[Key]) -> tuple[bool, str, Key]:
    """Where a replica stands in its cluster's admission order: those ``admitted`` already
    first, then by creation time, namespace and name."""
    key = replica_identity(replica)
    created = str(objects.dig(replica, "metadata", "creationTimestamp") or "")
    return key not in admitted, created, key


@dataclass(frozen=True)
class Allocation:
    """What one cluster admitted, per deployment and pool, and what it refused and why."""

    pools: tuple[Pool, ...]
    admitted: dict[str, dict[str, tuple[Unit, ...]]]
    """Units by deployment (``namespace/name``), then by pool."""
    names: dict[str, list[str]]
    """Admitted replicas' names by deployment."""
    refused: dict[Key, str]

    def published(self) -> Obj:
        """``status.allocation``: per pool the devices allocated (as a node's ``allocatable``
        reads), per deployment its admitted replicas and their units, then refusals."""
        by_name = {p.name: p for p in self.pools}
        totals: dict[str, list[int]] = {}
        for units in self.admitted.values():
            for pool, us in units.items():
                sums = totals.setdefault(pool, [0] * len(by_name[pool].per_node))
                for unit in us:
                    for pod in unit:
                        for i, c in enumerate(pod):
                            sums[i] += c
        pools = [
            {"name": pool, "allocated": dict(zip(_names(by_name[pool]), sums, strict=True))}
            for pool, sums in sorted(totals.items())
        ]
        out: Obj = {"pools": pools}
        out["admitted"] = [
            {
                "deployment": deployment,
                "replicas": sorted(self.names[deployment]),
                "pools": [
                    {"name": pool, "units": encode(by_name[pool], us)}
                    for pool, us in sorted(self.admitted[deployment].items())
                    if us
                ],
            }
            for deployment in sorted(self.names)
        ]
        if self.refused:
            out["refused"] = [
                {"replica": f"{ns}/{name}", "reason": reason}
                for (ns, name), reason in sorted(self.refused.items())
            ]
        return out


def arbitrate(
    cluster: str,
    pools: Iterable[Pool],
    replicas: Iterable[dict[str, Any]],
    sticky: frozenset[Key] = frozenset(),
) -> Allocation:
    """Admit ``replicas`` (those on this cluster) within its pools: ``sticky`` (admitted by the
    previous allocation) first, then by creation time, namespace and name; each admitted when
    it fits beside all admitted before it, else refused with the pool it does not fit."""
    by_pool = {p.name: p for p in pools}
    keyed = {(cluster, name): p for name, p in by_pool.items()}
    wanted = []
    for r in replicas:
        order = admission_order(r, sticky)
        wanted.append((order, order[2], deployment_of(r), observed_units(keyed, cluster, r)))
    wanted.sort(key=lambda w: w[0])
    admitted: dict[str, dict[str, tuple[Unit, ...]]] = {}
    names: dict[str, list[str]] = {}
    refused: dict[Key, str] = {}
    accepted: dict[str, tuple[Unit, ...]] = {}
    # Most reconciles admit everyone: one packing per pool says so.
    together: dict[str, tuple[Unit, ...]] = {}
    for *_, units in wanted:
        for pool, us in units.items():
            together[pool] = together.get(pool, ()) + us
    everyone = all(fits_alone(by_pool[pool], us) for pool, us in together.items())
    for _, key, deployment, units in wanted:
        if not everyone:
            beside = {p: accepted.get(p, ()) + us for p, us in units.items()}
            full = next((p for p in sorted(beside) if not fits_alone(by_pool[p], beside[p])), None)
            if full is not None:
                refused[key] = f"pool {full} cannot hold it beside the replicas admitted before it"
                continue
        mine = admitted.setdefault(deployment, {})
        for pool, us in units.items():
            accepted[pool] = accepted.get(pool, ()) + us
            mine[pool] = mine.get(pool, ()) + us
        names.setdefault(deployment, []).append(key[1])
    return Allocation(tuple(by_pool.values()), admitted, names, refused)


# --- what a deployment reads ------------------------------------------------------------------


class Published(NamedTuple):
    """A cluster's ``status.allocation`` as a deployment reads it."""

    admitted: frozenset[Key]
    refused: Mapping[Key, str]
    entries: tuple[tuple[str, str, tuple[Any, ...]], ...]
    """(deployment, pool, published units) for every admitted deployment and pool."""

    def units(
        self, pools: Mapping[str, Pool], exclude: str | None = None
    ) -> dict[str, tuple[Unit, ...]]:
        """What every deployment but ``exclude`` (all, when None) holds, by pool of ``pools``."""
        out: dict[str, tuple[Unit, ...]] = {}
        for deployment, pool, published in self.entries:
            if (exclude is not None and deployment == exclude) or pool not in pools:
                continue
            out[pool] = out.get(pool, ()) + decode(pools[pool], published)
        return out


def read_published(raw: Mapping[str, Any] | None) -> Published | None:
    """A cluster's ``status.allocation`` read, or None when it publishes none (a hand-written
    fleet, or a cluster composed before it did): then the replicas listed are all there is."""
    if not isinstance(raw, Mapping):
        return None
    admitted: set[Key] = set()
    entries = []
    for entry in raw.get("admitted") or ():
        deployment = str(entry.get("deployment", ""))
        namespace = deployment.partition("/")[0]
        admitted.update((namespace, str(n)) for n in entry.get("replicas") or ())
        for pool in entry.get("pools") or ():
            entries.append((deployment, str(pool.get("name", "")), tuple(pool.get("units") or ())))
    refused: dict[Key, str] = {}
    for entry in raw.get("refused") or ():
        namespace, _, name = str(entry.get("replica", "")).partition("/")
        refused[(namespace, name)] = str(entry.get("reason", ""))
    return Published(frozenset(admitted), refused, tuple(entries))
