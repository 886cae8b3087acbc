"""Managed clusters: an InferenceCluster on EKS, GKE or AKS provisions its own GPU cluster.

Each cloud's module composes the Upbound provider's namespaced managed resources (network,
identity, control plane, a system pool and one GPU pool per spec pool with its class's machine,
autoscaling and RWX storage for ModelCache), and an Object on the gateway's load balancer that
its teardown waits on. The InferenceCluster composer then treats the
cluster as an Existing one reached through the connection secret the cloud writes, with one
gate: nothing is installed on it until the control plane, its kubeconfig and the system pool
are Ready. GPU pools are not waited for (one without quota would otherwise hold the gateway);
NodePoolsReady names each one not Ready and what its provider says.
Nebius and Vultr are refused: their providers' CRDs are not published where they can be read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from modelplane.compose.inferencecluster import usages as stack_usages
from modelplane.compose.inferencecluster.managed import aks, eks, gke, load_balancer
from modelplane.compose.inferencecluster.managed.common import Provisioned, cloud_of
from modelplane.compose.inferencecluster.managed.teardown import deletion_order
from modelplane.compose.inferencecluster.target import Target
from modelplane.composer import Condition
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.observed import carried, observed_ready
from modelplane.reasons import InferenceCluster

CLOUDS = {"EKS": eks, "GKE": gke, "AKS": aks}
POOL_PREFIXES = ("nodegroup-", "nodepool-")
NODE_POOLS_READY = InferenceCluster.NODE_POOLS_READY


@dataclass(frozen=True)
class Managed:
    source: str
    provisioned: Provisioned
    resources: dict[str, Obj]
    """The cloud resources, with node pools that cannot be rebuilt this time carried."""
    waiting: tuple[str, ...]
    """What is not Ready yet of the control plane, the kubeconfig and the system pool."""
    pools_down: tuple[str, ...] = ()
    """Each GPU pool not Ready, with what its provider says."""

    @property
    def ready(self) -> bool:
        return not self.waiting

    def existing(self) -> Obj:
        return self.provisioned.existing()

    def provisioning(self) -> Condition:
        return Condition(
            InferenceCluster.STACK_READY,
            "False",
            InferenceCluster.CLUSTER_PROVISIONING,
            f"the {self.source} cluster is still provisioning (waiting for "
            f"{', '.join(self.waiting)}); the serving stack installs once it and its system "
            "pool are Ready",
        )

    def pools_condition(self) -> Condition:
        if not self.pools_down:
            return Condition(
                NODE_POOLS_READY, "True", InferenceCluster.PROVISIONED, "every node pool is Ready"
            )
        message = (
            f"{len(self.pools_down)} GPU pool(s) not Ready: {'; '.join(self.pools_down)}. The "
            "serving stack does not wait for them; replicas that need them wait (GPU quota and "
            "capacity are the usual causes)"
        )
        return Condition(NODE_POOLS_READY, "False", InferenceCluster.POOLS_NOT_READY, message)

    def usages(self, t: Target, on_cluster: Mapping[str, Obj]) -> dict[str, Obj]:
        p = self.provisioned
        out = deletion_order(t, self.resources, p.holds_stack, on_cluster, p.outlives)
        out.update(stack_usages.deletion_order(t, on_cluster, load_balancer.OUTLIVES))
        return out


def managed_cluster(
    composite: Obj,
    source: str,
    classes: list[Obj] | None,
    observed: Mapping[str, Any],
    t: Target,
    needed: Mapping[str, int],
) -> Managed | str:
    """The cloud resources of a managed cluster, or why its spec cannot be built (a message
    naming the field). ``needed``: the nodes each pool's admitted replicas need."""
    module = CLOUDS[source]
    cloud, problems = cloud_of(composite, source, classes, needed)
    cloud = replace(cloud, names=module.NAMES)
    problems += module.problems(cloud) if cloud.location else []
    if problems:
        return "; ".join(problems)
    provisioned = module.provision(cloud, t, observed)
    # The cluster and its network go only once the gateway's load balancer is gone.
    provisioned.on_cluster.update(load_balancer.load_balancer(t))
    resources = dict(provisioned.resources)
    # A pool not rebuilt (classes not read yet, a class that lost its recipe) keeps its nodes.
    spec_pools = {str(p.get("name")) for p in objects.spec(composite).get("nodePools") or []}
    for key, obj in observed.items():
        pool = key.split("-", 1)[-1]
        if key.startswith(POOL_PREFIXES) and key not in resources and pool in spec_pools:
            resources[key] = carried(obj)
    waiting = [
        _waiting_for(key, observed.get(key))
        for key in dict.fromkeys(
            (provisioned.kubeconfig_from, *provisioned.nodes_from, *provisioned.stack_needs)
        )
        if not observed_ready(observed.get(key))
    ]
    if classes is None:
        waiting.append("the InferenceClasses of its node pools")
    down = tuple(
        f"{key.split('-', 1)[-1]} ({_why_not_ready(observed.get(key))})"
        for key in provisioned.gpu_pools_from
        if not observed_ready(observed.get(key))
    )
    return Managed(source, provisioned, resources, tuple(waiting), down)


_WHY_MAX = 240
LAST_ASYNC_OPERATION = "LastAsyncOperation"
_FAILED = ("Synced False", f"{LAST_ASYNC_OPERATION} False")


def _waiting_for(key: str, obj: Mapping[str, Any] | None) -> str:
    """A resource the stack waits for, with the provider's error when it failed to sync (a
    refused create would otherwise read as still provisioning)."""
    why = _why_not_ready(obj)
    return f"{key} ({why})" if why.startswith(_FAILED) else key


def _why_not_ready(obj: Mapping[str, Any] | None) -> str:
    """What the provider says of a pool that is not Ready: a failed sync first (a quota or
    stockout error comes back there), then upjet's last async operation (which keeps that
    error while the create is retried and Synced is True again), then its Ready condition."""
    if obj is None:
        return "not created yet"
    for kind in ("Synced", LAST_ASYNC_OPERATION, "Ready"):
        c = objects.condition(obj, kind)
        if c is not None and c.get("status") != "True":
            said = str(c.get("message") or c.get("reason") or "not Ready")
            return f"{kind} {c.get('status')}: {said[:_WHY_MAX]}"
    return "provisioning"
