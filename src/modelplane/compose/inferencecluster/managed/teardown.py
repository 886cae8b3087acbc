"""The deletion order of a managed cluster, as Usages Crossplane resolves.

Deleting an InferenceCluster deletes every composed resource at once; Usages hold each back
until what needs it is gone:

- the stack (and the autoscaler and StorageClass) uninstall while the API server, the
  kubeconfig and the system pool its controllers run on still exist, so Helm uninstalls finish
  and the gateway's load balancer is deleted by the cloud controller before the network goes;
  GPU pools are not held (their ModelReplicas are gone before the cluster's deletion starts,
  and a Usage held by the stack would keep a pool removed from the spec until the stack goes:
  Crossplane deletes a composed Usage only once its ``by`` is gone);
- a cloud resource outlives every resource that refers to it by name: node pools go before the
  cluster, the cluster before its subnets and roles, subnets before the VPC.

Each Usage is namespaced, in the namespace of both resources it names: Crossplane v2.3.4
indexes a namespaced Usage's ``of`` in the Usage's own namespace and looks ``by`` up there too
(``internal/protection/usage/finder.go``, ``internal/controller/protection/usage/
reconciler.go``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from modelplane.compose.inferencecluster.target import Target
from modelplane.compose.inferencecluster.usages import reference, usage
from modelplane.kube.objects import Obj


def deletion_order(
    t: Target,
    cloud: Mapping[str, Obj],
    holds_stack: tuple[str, ...],
    on_cluster: Mapping[str, Obj],
    outlives: tuple[tuple[str, str], ...] = (),
) -> dict[str, Obj]:
    by_name = {str(obj["metadata"]["name"]): key for key, obj in cloud.items()}
    out: dict[str, Obj] = {}
    for key, obj in sorted(cloud.items()):
        for name in sorted(set(_referenced(obj["spec"].get("forProvider") or {}))):
            needed = by_name.get(name)
            if needed is not None and needed != key:
                out.update(_usage(t, cloud[needed], needed, obj, key))
    for of_key, by_key in outlives:
        if of_key in cloud and by_key in cloud:
            out.update(_usage(t, cloud[of_key], of_key, cloud[by_key], by_key))
    for held in holds_stack:
        if held not in cloud:
            continue
        for key, obj in sorted(on_cluster.items()):
            if obj.get("kind") in ("Release", "Object"):
                out.update(_usage(t, cloud[held], held, obj, key))
    return out


def _referenced(node: Any) -> Iterator[str]:
    """Every name a ``...Ref`` or ``...Refs`` field of ``node`` names."""
    if isinstance(node, Mapping):
        for field, value in node.items():
            if field.endswith("Ref") and isinstance(value, Mapping) and value.get("name"):
                yield str(value["name"])
            elif field.endswith("Refs") and isinstance(value, list):
                yield from (
                    str(v["name"]) for v in value if isinstance(v, Mapping) and v.get("name")
                )
            else:
                yield from _referenced(value)
    elif isinstance(node, list):
        for item in node:
            yield from _referenced(item)


def _usage(t: Target, of: Obj, of_key: str, by: Obj, by_key: str) -> dict[str, Obj]:
    key = f"{by_key}-uses-{of_key}"
    return {key: usage(t, key, reference(of), reference(by))}
