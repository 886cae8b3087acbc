"""Deletion order, as Crossplane Usages (protection.crossplane.io): nothing is stranded.

- A controller outlives the objects whose finalizers it clears or whose CRDs it owns:
  Envoy Gateway the GatewayClass (and that the Gateway), KAI its queues, and so on, as each
  component declares.
- The InferenceCluster itself cannot be deleted while ModelReplicas run on it: a ClusterUsage
  of the cluster, with the replicas named as its reason, composed while any exists. The refused
  delete, recorded on the cluster, empties it (docs/operations.md), and the guard replays it.

No Usage orders the ClusterProviderConfigs: Crossplane (v2.3.4, internal/protection/usage/
finder.go) indexes a namespaced Usage under its own namespace, so one whose ``of`` is a
cluster-scoped object never matches that object's deletion, and a ClusterUsage cannot name a
namespaced ``by``. What keeps each ClusterProviderConfig until the Releases and Objects using it
are gone is the providers' own accounting: each records a ProviderConfigUsage per managed
resource, and a provider config is not released while any remains (docs/design/serving-stack.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from modelplane.apis import API_VERSION
from modelplane.compose.inferencecluster.target import Target
from modelplane.compose.shared.routed import USAGE_API_VERSION
from modelplane.kube import objects
from modelplane.kube.names import dns_label
from modelplane.kube.objects import Obj
from modelplane.labels import STACK_COMPONENT
from modelplane.shortlist import shortlist

REPLICA_GUARD = "replica-guard"
GUARDED = "modelplane.ai/guarded-replicas"
"""Annotation on the guard: every replica it was composed for (``namespace/name``, comma
separated), so an empty list can be checked against them by name before the guard goes."""
_NAMED_REPLICAS = 5


def deletion_order(
    t: Target, resources: Mapping[str, Obj], outlives: Iterable[tuple[str, str]]
) -> dict[str, Obj]:
    """The Usages ordering the deletion of ``resources`` (composition resource name -> object)."""
    out: dict[str, Obj] = {}
    for of_key, by_key in outlives:
        if of_key in resources and by_key in resources:
            usage_key = f"{by_key}-uses-{of_key}"
            by = resources[by_key]
            component = str(objects.labels(by).get(STACK_COMPONENT) or "")
            out[usage_key] = usage(
                t, usage_key, reference(resources[of_key]), reference(by), component
            )
    return out


def replica_guard(cluster: str, replicas: Sequence[Mapping[str, Any]]) -> Obj:
    """A ClusterUsage refusing the cluster's deletion, naming the replicas that run on it."""
    names = replica_names(replicas)
    shown = shortlist(names, _NAMED_REPLICAS)
    noun = "ModelReplica runs" if len(names) == 1 else "ModelReplicas run"
    return {
        "apiVersion": USAGE_API_VERSION,
        "kind": "ClusterUsage",
        "metadata": {
            "name": dns_label(cluster, REPLICA_GUARD),
            "annotations": {GUARDED: ",".join(names)},
        },
        "spec": {
            "of": _ours("InferenceCluster", cluster),
            "reason": (
                f"{len(names)} {noun} on InferenceCluster {cluster} ({shown}): they are moved "
                "to other clusters first, and this delete is replayed once they are gone"
            ),
            # The refused delete is the request to empty the cluster (scheduling/fleet.py
            # Cluster.deleting): once it is empty, the guard goes and Crossplane deletes it.
            "replayDeletion": True,
        },
    }


def gateway_guard(cluster: str, gateway: str) -> Obj:
    """A ClusterUsage keeping the cluster until an InferenceGateway running on it is gone: its
    front Gateway holds Envoy Gateway's finalizer on the cluster's GatewayClass, so deleting the
    cluster first would stall with nothing saying why. Both are cluster-scoped, so Crossplane
    resolves ``by`` and replays the cluster's deletion once the gateway is gone."""
    return {
        "apiVersion": USAGE_API_VERSION,
        "kind": "ClusterUsage",
        "metadata": {"name": dns_label(cluster, "gateway", gateway)},
        "spec": {
            "of": _ours("InferenceCluster", cluster),
            "by": _ours("InferenceGateway", gateway),
            "replayDeletion": True,
        },
    }


def guarded_replicas(guard: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(namespace, name) of every replica an observed guard was composed for."""
    entries = str(objects.annotations(guard).get(GUARDED) or "").split(",")
    return [(namespace, name) for namespace, _, name in (e.partition("/") for e in entries) if name]


def replica_names(replicas: Sequence[Mapping[str, Any]]) -> list[str]:
    """``namespace/name`` of each replica, sorted."""
    metas = (objects.metadata(r) for r in replicas)
    return sorted(f"{m.get('namespace', '')}/{m.get('name', '')}" for m in metas)


def usage(t: Target, key: str, of: Obj, by: Obj, component: str = "") -> Obj:
    """A Usage on the control plane: deleting ``of`` waits for ``by`` to be gone."""
    metadata: Obj = {"name": t.name(key), "namespace": t.namespace}
    if component:
        metadata["labels"] = {STACK_COMPONENT: component}
    return {
        "apiVersion": USAGE_API_VERSION,
        "kind": "Usage",
        "metadata": metadata,
        # Deleting ``of`` was refused while ``by`` existed; replay it as soon as ``by`` is gone
        # instead of waiting for the garbage collector's next attempt.
        "spec": {"of": of, "by": by, "replayDeletion": True},
    }


def reference(obj: Obj) -> Obj:
    """What a Usage names ``obj`` by."""
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "resourceRef": {"name": obj["metadata"]["name"]},
    }


def _ours(kind: str, name: str) -> Obj:
    """What a ClusterUsage names a cluster-scoped object of this project's kinds by."""
    return {"apiVersion": API_VERSION, "kind": kind, "resourceRef": {"name": name}}
