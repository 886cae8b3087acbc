"""Deletion order, as Crossplane Usages (protection.crossplane.io): nothing is stranded.

- Each ProviderConfig outlives every Release and Object that needs it to delete something on
  the cluster (one Usage per user: a Usage's ``by`` names one resource).
- A controller outlives the objects whose finalizers it clears or whose CRDs it owns:
  Envoy Gateway the GatewayClass (and that the Gateway), KAI its queues, and so on, as each
  component declares.
- The InferenceCluster itself cannot be deleted while ModelReplicas run on it: a ClusterUsage
  of the cluster, with the replicas named as its reason, composed while any exists.

Objects that are never deleted on the cluster (observe-only ones, the Namespace, the CRDs) need
no ProviderConfig to go away, so they take no Usage: their deletion never waits on the cluster.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from modelplane.compose.inferencecluster.providers import KUBERNETES_CONFIG_API_VERSION
from modelplane.compose.inferencecluster.releases import HELM_CONFIG_API_VERSION
from modelplane.compose.inferencecluster.target import Target
from modelplane.kube.names import dns_label
from modelplane.labels import STACK_COMPONENT

Obj = dict[str, Any]

USAGE_API_VERSION = "protection.crossplane.io/v1beta1"
CLUSTER_API_VERSION = "modelplane.ai/v1alpha1"
REPLICA_GUARD = "replica-guard"
_NAMED_REPLICAS = 5


def deletion_order(
    t: Target, resources: Mapping[str, Obj], outlives: Iterable[tuple[str, str]]
) -> dict[str, Obj]:
    """The Usages ordering the deletion of ``resources`` (composition resource name -> object)."""
    out: dict[str, Obj] = {}
    for key, obj in sorted(resources.items()):
        if not _deletes_on_cluster(obj):
            continue
        config = obj["spec"]["providerConfigRef"]
        of = {
            "apiVersion": _provider_config_api_version(obj),
            "kind": config["kind"],
            "resourceRef": {"name": config["name"]},
        }
        usage_key = f"{key}-uses-provider"
        out[usage_key] = _usage(t, usage_key, of, _ref(obj), _component(obj))
    for of_key, by_key in outlives:
        if of_key in resources and by_key in resources:
            usage_key = f"{by_key}-uses-{of_key}"
            by = resources[by_key]
            out[usage_key] = _usage(t, usage_key, _ref(resources[of_key]), _ref(by), _component(by))
    return out


def replica_guard(cluster: str, replicas: Sequence[Mapping[str, Any]]) -> Obj:
    """A ClusterUsage refusing the cluster's deletion, naming the replicas that run on it."""
    names = replica_names(replicas)
    shown = ", ".join(names[:_NAMED_REPLICAS])
    more = f" and {len(names) - _NAMED_REPLICAS} more" if len(names) > _NAMED_REPLICAS else ""
    noun = "ModelReplica runs" if len(names) == 1 else "ModelReplicas run"
    return {
        "apiVersion": USAGE_API_VERSION,
        "kind": "ClusterUsage",
        "metadata": {"name": dns_label(cluster, REPLICA_GUARD)},
        "spec": {
            "of": {
                "apiVersion": CLUSTER_API_VERSION,
                "kind": "InferenceCluster",
                "resourceRef": {"name": cluster},
            },
            "reason": (
                f"{len(names)} {noun} on InferenceCluster {cluster} ({shown}{more}): drain it (a "
                "NoExecute taint moves them elsewhere) or delete them before deleting the cluster"
            ),
        },
    }


def replica_names(replicas: Sequence[Mapping[str, Any]]) -> list[str]:
    """``namespace/name`` of each replica, sorted."""
    out = []
    for r in replicas:
        meta = r.get("metadata") or {}
        out.append(f"{meta.get('namespace', '')}/{meta.get('name', '')}")
    return sorted(out)


def _usage(t: Target, key: str, of: Obj, by: Obj, component: str) -> Obj:
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


def _ref(obj: Obj) -> Obj:
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "resourceRef": {"name": obj["metadata"]["name"]},
    }


def _component(obj: Obj) -> str:
    return str(((obj.get("metadata") or {}).get("labels") or {}).get(STACK_COMPONENT) or "")


def _provider_config_api_version(obj: Obj) -> str:
    if obj["apiVersion"].startswith("helm."):
        return HELM_CONFIG_API_VERSION
    return KUBERNETES_CONFIG_API_VERSION


def _deletes_on_cluster(obj: Obj) -> bool:
    if obj.get("kind") not in ("Release", "Object"):
        return False
    policies = (obj.get("spec") or {}).get("managementPolicies")
    return policies is None or "*" in policies or "Delete" in policies
