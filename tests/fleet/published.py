"""A cluster's published allocation, as its composition writes it (``scheduling.allocation``)."""

from __future__ import annotations

from typing import Any

from modelplane.scheduling.allocation import arbitrate, read_published
from modelplane.scheduling.devices import device_kinds
from modelplane.scheduling.fleet import Cluster

Obj = dict[str, Any]


def publish(cluster: Obj, classes: list[Obj], replicas: list[Obj]) -> Obj:
    """``cluster`` once it reconciled with ``replicas`` listed: its allocation admits them in
    order (those its last allocation admitted first) within its pools."""
    name = cluster["metadata"]["name"]
    kinds = {c["metadata"]["name"]: device_kinds(c) for c in classes}
    last = read_published((cluster.get("status") or {}).get("allocation"))
    sticky = last.admitted if last is not None else frozenset()
    here = [r for r in replicas if r["spec"]["clusterName"] == name]
    allocation = arbitrate(name, Cluster(name, cluster, kinds).pools, here, sticky)
    return {
        **cluster,
        "status": {**cluster.get("status", {}), "allocation": allocation.published()},
    }


def publish_all(clusters: list[Obj], classes: list[Obj], replicas: list[Obj]) -> list[Obj]:
    return [publish(c, classes, replicas) for c in clusters]


def admitted(cluster: Obj) -> set[str]:
    """Names of the replicas the cluster's allocation admits."""
    found = read_published(cluster["status"]["allocation"])
    assert found is not None
    return {name for _, name in found.admitted}


def refused(cluster: Obj) -> dict[str, str]:
    """Why the cluster's allocation refused each replica it refused, by name."""
    found = read_published(cluster["status"]["allocation"])
    assert found is not None
    return {name: why for (_, name), why in found.refused.items()}


def created(replicas: list[Obj], at: str) -> list[Obj]:
    return [{**r, "metadata": {**r["metadata"], "creationTimestamp": at}} for r in replicas]
