"""``status.allocation``: the cluster admits the ModelReplicas placed on it, within its pools.

Deployments no longer list every replica of the fleet: each reads what the clusters publish
(``scheduling.allocation``). The allocation is built from the replicas labelled for this cluster
(the list the deletion guard reads) and the classes of its pools. Nothing admitted is
withdrawn on absence: a replica the last allocation admitted that the list no longer holds is
asked for by name, and the last allocation stands until the answer comes; one that is gone (or
runs elsewhere now) leaves it. Until the replicas and classes are read, it stands as published.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import groupby
from operator import itemgetter
from typing import Any, NamedTuple

from modelplane.apis import API_VERSION
from modelplane.compose.shared.evidence import look_up
from modelplane.composer import Inputs, Requirement
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.scheduling.allocation import Allocation, arbitrate, read_published
from modelplane.scheduling.capacity import Pool, Unit, nodes_needed, order_units
from modelplane.scheduling.devices import device_kinds
from modelplane.scheduling.fleet import Cluster
from modelplane.scheduling.policy import replica_identity

ADMITTED_REPLICA = "admitted-replica"
"""Requirements asking for an admitted replica by name: ``admitted-replica/<namespace>/<name>``."""


class Allotted(NamedTuple):
    """The allocation to publish (None while there is none to publish), and the arbitration
    that made it, when it was made now (else it is the last one, standing)."""

    published: Obj | None
    arbitrated: Allocation | None = None


def allocation(
    inputs: Inputs,
    replicas: list[Any] | None,
    classes: list[Any] | None,
    requirements: dict[str, Requirement],
) -> Allotted:
    """The allocation to publish; the by-name requirements it needs go into
    ``requirements``."""
    cluster = inputs.composite
    name = str(cluster["metadata"]["name"])
    last = objects.status(cluster).get("allocation")
    last = dict(last) if isinstance(last, Mapping) else None
    if replicas is None or classes is None:
        return Allotted(last)
    previous = read_published(last)
    sticky = previous.admitted if previous is not None else frozenset()
    here = {replica_identity(r): r for r in replicas if _on(r, name)}
    found, pending = replicas_on(inputs, ADMITTED_REPLICA, sticky - set(here), name, requirements)
    if pending:
        return Allotted(last)
    here.update((replica_identity(r), r) for r in found)
    arbitrated = arbitrate(name, _pools(cluster, classes), here.values(), sticky)
    return Allotted(arbitrated.published(), arbitrated)


def replicas_on(
    inputs: Inputs,
    prefix: str,
    replicas: Iterable[tuple[str, str]],
    cluster: str,
    requirements: dict[str, Requirement],
) -> tuple[list[Obj], int]:
    """Those of ``replicas`` ((namespace, name)), asked for by name under ``prefix``, that are
    read and on ``cluster``, and how many are not read yet; the by-name requirements go into
    ``requirements``."""
    found: list[Obj] = []
    pending = 0
    for namespace, group in groupby(sorted(replicas), key=itemgetter(0)):
        names = [replica for _, replica in group]
        lookup = look_up(inputs, prefix, API_VERSION, "ModelReplica", names, namespace or None)
        requirements.update(lookup.requirements)
        pending += len(lookup.pending)
        found += [r for r in lookup.found.values() if _on(r, cluster)]
    return found, pending


def nodes_per_pool(cluster: Obj, allotted: Allotted, classes: Any) -> dict[str, int]:
    """The fewest nodes of each pool that hold what the allocation admitted there; a pool it
    admits nothing on is absent. Empty until the classes are read."""
    if classes is None:
        return {}
    units: dict[str, tuple[Unit, ...]] = {}
    if allotted.arbitrated is not None:
        # Arbitrated now: its units and pools as parsed, not read back from what they publish.
        pools = {p.name: p for p in allotted.arbitrated.pools}
        for by_pool in allotted.arbitrated.admitted.values():
            for pool, us in by_pool.items():
                if us:
                    units[pool] = units.get(pool, ()) + us
    else:
        read = read_published(allotted.published)
        if read is None:
            return {}
        pools = {p.name: p for p in _pools(cluster, classes)}
        units = read.units(pools)
    out = {}
    for pool, us in units.items():
        p = pools[pool]
        # Admitted within the pool's maxNodeCount, so it fits there; a fit the search gave
        # up on asks for all of it.
        out[pool] = nodes_needed(p.per_node, order_units(us), p.node_count) or p.node_count
    return out


def _pools(cluster: Obj, classes: Any) -> tuple[Pool, ...]:
    kinds = {objects.name(c): device_kinds(c) for c in classes}
    return Cluster(str(cluster["metadata"]["name"]), cluster, kinds).pools


def _on(replica: Mapping[str, Any], cluster: str) -> bool:
    """Placed here: its pods go where ``spec.clusterName`` says, whatever a label says."""
    return objects.spec(replica).get("clusterName") == cluster
