"""A placed replica, stamped: the ModelReplica the deployment composes for one placement."""

from __future__ import annotations

from modelplane.apis import API_VERSION
from modelplane.compose.modeldeployment.picker import replica_serving
from modelplane.compose.pods_revision import pods_revision
from modelplane.composer import namespace_of
from modelplane.kube import objects
from modelplane.kube.names import dns_label
from modelplane.kube.objects import Obj
from modelplane.labels import (
    CLUSTER,
    DEPLOYMENT,
    DEPLOYMENT_NAMESPACE,
    PODS_REVISION,
    REPLICA_INDEX,
    TERMINATION_GRACE,
)
from modelplane.labels import PRE_STOP_SECONDS as PRE_STOP
from modelplane.scheduling.placement import DEVICE_ASSIGNMENT, ReplicaPlacement


def replica_key(index: int, cluster: str) -> str:
    """The composition resource name: a replica moved to another cluster is a new resource."""
    return f"replica-{index}-{cluster}"


def replica_name(md: Obj, placement: ReplicaPlacement) -> str:
    """Hashes the deployment's namespace too: same-named deployments in two namespaces compose
    distinct names, which logs and a cluster's view of several namespaces tell apart."""
    return dns_label(
        str(md["metadata"]["name"]), namespace_of(md), placement.cluster, str(placement.index)
    )


def stamp(md: Obj, placement: ReplicaPlacement, name: str) -> Obj:
    """The ModelReplica for one placed replica: the template verbatim, each member's
    nodeSelector replaced by the pool and DRA requests the scheduler resolved."""
    template = md["spec"]["template"]
    tspec = template["spec"]
    labels = {
        **objects.labels(template),
        DEPLOYMENT: str(md["metadata"]["name"]),
        DEPLOYMENT_NAMESPACE: namespace_of(md),
        CLUSTER: placement.cluster,
        REPLICA_INDEX: str(placement.index),
    }
    spec: Obj = {"clusterName": placement.cluster}
    if "modelCacheRef" in tspec:
        spec["modelCacheRef"] = tspec["modelCacheRef"]
    if "serving" in tspec:
        spec["serving"] = replica_serving(tspec["serving"])
    spec["engines"] = [_engine(e, placement) for e in tspec["engines"]]
    metadata: Obj = {"name": name, "namespace": namespace_of(md), "labels": labels}
    metadata["annotations"] = {**_drain(md), PODS_REVISION: pods_revision()}
    assignment = placement.device_assignment()
    if assignment is not None:
        metadata["annotations"][DEVICE_ASSIGNMENT] = assignment
    return {"apiVersion": API_VERSION, "kind": "ModelReplica", "metadata": metadata, "spec": spec}


GRACE_SECONDS = 600
"""Long enough for a long generation (thousands of tokens) to finish after its pod is told to
stop; Kubernetes' 30 s default cuts streams."""
PRE_STOP_SECONDS = 30
"""Long enough for the endpoint picker to stop sending a terminating pod new requests."""


def _drain(md: Obj) -> dict[str, str]:
    drain = md["spec"].get("drain") or {}
    return {
        TERMINATION_GRACE: str(int(drain.get("terminationGracePeriodSeconds", GRACE_SECONDS))),
        PRE_STOP: str(int(drain.get("preStopSeconds", PRE_STOP_SECONDS))),
    }


def _engine(engine: Obj, placement: ReplicaPlacement) -> Obj:
    placed = placement.engine(str(engine["name"]))
    members = engine["members"]
    if len(placed.members) != len(members):
        raise ValueError(
            f"the schedule placed {len(placed.members)} members of engine {engine['name']}, "
            f"the template has {len(members)}"
        )
    out = {k: v for k, v in engine.items() if k != "members"}
    out["members"] = []
    for member, where in zip(members, placed.members, strict=True):
        stamped = {k: v for k, v in member.items() if k != "nodeSelector"}
        stamped["nodePoolName"] = where.pool
        if where.device_requests:
            stamped["deviceRequests"] = where.device_requests_dicts()
        out["members"].append(stamped)
    return out
