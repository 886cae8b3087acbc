"""``status.allocation``: the cluster admits the ModelReplicas placed on it, within its pools.

Deployments no longer list every replica of the fleet: each reads what the clusters publish
(``scheduling.allocation``). The allocation is built from the replicas labelled for this cluster
(the list the deletion guard reads) and the classes of its pools. Nothing admitted is
withdrawn on absence: a replica the last allocation admitted that the list no longer holds is
asked for by name, and the last allocation stands until the answer comes; one that is gone (or
runs elsewhere now) leaves it. Until the replicas and classes are read, it stands as published.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.compose.evidence import look_up
from modelplane.composer import Inputs, Requirement
from modelplane.scheduling.allocation import arbitrate, read_published
from modelplane.scheduling.devices import device_kinds
from modelplane.scheduling.fleet import Cluster
from modelplane.scheduling.policy import replica_key

Obj = dict[str, Any]

ADMITTED_REPLICA = "admitted-replica"
"""Requirements asking for an admitted replica by name: ``admitted-replica/<namespace>/<name>``."""


def allocation(
    inputs: Inputs,
    replicas: list[Any] | None,
    classes: list[Any] | None,
    requirements: dict[str, Requirement],
    api_version: str,
) -> Obj | None:
    """The allocation to publish (None while there is none to publish); the by-name
    requirements it needs go into ``requirements``."""
    cluster = inputs.composite
    name = str(cluster["metadata"]["name"])
    last = (cluster.get("status") or {}).get("allocation")
    last = dict(last) if isinstance(last, Mapping) else None
    if replicas is None or classes is None:
        return last
    previous = read_published(last)
    sticky = previous.admitted if previous is not None else frozenset()
    here = {replica_key(r): r for r in replicas if _on(r, name)}
    missing: dict[str, list[str]] = {}
    for namespace, replica in sorted(sticky - set(here)):
        missing.setdefault(namespace, []).append(replica)
    pending = False
    for namespace, names in missing.items():
        lookup = look_up(
            inputs, ADMITTED_REPLICA, api_version, "ModelReplica", names, namespace or None
        )
        requirements.update(lookup.requirements)
        pending = pending or bool(lookup.pending)
        for found in lookup.found.values():
            if _on(found, name):
                here[replica_key(found)] = found
    if pending:
        return last
    kinds = {str((c.get("metadata") or {}).get("name", "")): device_kinds(c) for c in classes}
    pools = Cluster(name, cluster, kinds).pools
    return arbitrate(name, pools, here.values(), sticky).published()


def _on(replica: Mapping[str, Any], cluster: str) -> bool:
    """Placed here: its pods go where ``spec.clusterName`` says, whatever a label says."""
    return (replica.get("spec") or {}).get("clusterName") == cluster
