"""Fleets mixing an Existing cluster and EKS clusters whose pools grow, and what `modelplane
render` placed in them: the ground explain's placements are held to."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from modelplane.compose.registry import default_registry
from modelplane.composer import namespace_of
from modelplane.explain import explain_all
from modelplane.labels import DEPLOYMENT, REPLICA_INDEX
from modelplane.render import api_server_admission, render_documents
from modelplane.simulate import simulate_stack

Obj = dict[str, Any]
V1 = "modelplane.ai/v1alpha1"
AT_LEAST_79GI = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("79Gi")) >= 0'
Placed = dict[str, list[tuple[int, str, tuple[str, ...]]]]
"""Per deployment (namespace/name): (replica index, cluster, each member's pool) by index."""


def h100_class(name: str, eks: bool = False) -> Obj:
    """Eight H100s per node as DRA reports them (81559Mi); ``eks``: provisioned as p5 nodes."""
    spec: Obj = {
        "devices": [
            {
                "name": "gpu",
                "driver": "gpu.nvidia.com",
                "deviceClassName": "gpu.nvidia.com",
                "count": 8,
                "capacity": {"memory": {"value": "81559Mi"}},
            }
        ]
    }
    if eks:
        recipe = {
            "instanceType": "p5.48xlarge",
            "diskSizeGb": 500,
            "accelerator": {"type": "nvidia-h100", "count": 8},
        }
        spec["provisioning"] = {"provider": "EKS", "eks": recipe}
    return {"apiVersion": V1, "kind": "InferenceClass", "metadata": {"name": name}, "spec": spec}


CLASSES = [h100_class("h100"), h100_class("eks-h100", eks=True)]


def existing(name: str = "onprem", nodes: int = 8, cache_class: str | None = "efs") -> Obj:
    """An Existing cluster with one H100 pool; ``cache_class``: its RWX class, when it names one."""
    reach: Obj = {"secretRef": {"name": f"{name}-kubeconfig"}}
    if cache_class is not None:
        reach["cache"] = {"storageClassName": cache_class}
    return {
        "apiVersion": V1,
        "kind": "InferenceCluster",
        "metadata": {"name": name, "labels": {"region": "us-west"}},
        "spec": {
            "cluster": {"source": "Existing", "existing": reach},
            "nodePools": [{"name": "h100", "className": "h100", "nodeCount": nodes}],
        },
    }


def eks(name: str = "eks-west", low: int = 0, high: int = 4) -> Obj:
    """An EKS cluster whose H100 pool has ``low`` nodes and grows to ``high``."""
    pool = {
        "name": "h100",
        "className": "eks-h100",
        "nodeCount": low,
        "minNodeCount": low,
        "maxNodeCount": high,
        "zones": ["us-west-2a"],
    }
    return {
        "apiVersion": V1,
        "kind": "InferenceCluster",
        "metadata": {"name": name, "labels": {"region": "us-west"}},
        "spec": {"cluster": {"source": "EKS", "eks": {"region": "us-west-2"}}, "nodePools": [pool]},
    }


CACHE: Obj = {
    "apiVersion": V1,
    "kind": "ModelCache",
    "metadata": {"name": "llama", "namespace": "ml"},
    "spec": {
        "source": "HuggingFace",
        "huggingFace": {"repo": "meta-llama/Llama-3.1-70B", "sizeGiB": 140},
    },
}


def deployment(name: str, replicas: int, gpus: int = 8, cached: bool = False) -> Obj:
    """A deployment of ``gpus`` H100s per replica; ``cached``: its weights from ``CACHE``."""
    request = {"name": "gpu", "count": gpus, "selectors": [{"cel": AT_LEAST_79GI}]}
    container = {"name": "engine", "image": "vllm/vllm-openai:v0.11.0"}
    member = {
        "role": "Standalone",
        "nodeSelector": {"devices": [request]},
        "template": {"spec": {"containers": [container]}},
    }
    template: Obj = {"engines": [{"name": "main", "members": [member]}]}
    if cached:
        template["modelCacheRef"] = {"name": "llama"}
    return {
        "apiVersion": V1,
        "kind": "ModelDeployment",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"replicas": replicas, "template": {"spec": template}},
    }


def documents(*objs: Obj) -> list[Obj]:
    """What render reads: the classes, the cache and ``objs``."""
    return [*copy.deepcopy(CLASSES), copy.deepcopy(CACHE), *copy.deepcopy(list(objs))]


def rendered(docs: Iterable[Obj]) -> Placed:
    """What `modelplane render` places: its ModelReplicas, read back from the rendered stream."""
    out = render_documents(
        default_registry(), copy.deepcopy(list(docs)), (), api_server_admission(), simulate_stack
    )
    placed: dict[str, dict[str, tuple[int, str, tuple[str, ...]]]] = {}
    for d in out:
        labels = (d.get("metadata") or {}).get("labels") or {}
        if d.get("kind") != "ModelReplica" or DEPLOYMENT not in labels:
            continue
        pools = tuple(
            str(m.get("nodePoolName"))
            for e in d["spec"].get("engines") or ()
            for m in e.get("members") or ()
        )
        key = f"{namespace_of(d)}/{labels[DEPLOYMENT]}"
        # An input replica the deployment composes again is one replica, not two.
        placed.setdefault(key, {})[d["metadata"]["name"]] = (
            int(labels[REPLICA_INDEX]),
            str(d["spec"]["clusterName"]),
            pools,
        )
    return {k: sorted(v.values()) for k, v in placed.items()}


def explained(docs: Iterable[Obj]) -> Placed:
    """What `modelplane explain` says it places, per deployment that places any."""
    out: Placed = {}
    for e in explain_all(copy.deepcopy(list(docs))):
        rows = [
            (p.index, p.cluster, tuple(m.pool for en in p.engines for m in en.members))
            for p in e.plan.placements
        ]
        if rows:
            out[e.deployment] = sorted(rows)
    return out
