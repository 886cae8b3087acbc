"""Builders for fleet test inputs: classes, clusters, deployments and stamped replicas."""

from __future__ import annotations

from typing import Any

from modelplane.fleet import placement as pl
from modelplane.fleet.placement import ReplicaPlacement

GPU = 'device.driver == "gpu.nvidia.com"'


def memory_at_least(q: str) -> str:
    return f'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("{q}")) >= 0'


def product(name: str) -> str:
    return f'device.attributes["gpu.nvidia.com"].productName == "{name}"'


def gpu_class(
    name: str, count: int = 8, product: str = "H100", memory: str = "80Gi", **extra: Any
) -> dict[str, Any]:
    devices = [
        {
            "name": "gpu",
            "driver": "gpu.nvidia.com",
            "deviceClassName": "gpu.nvidia.com",
            "count": count,
            "attributes": {"productName": {"string": product}},
            "capacity": {"memory": {"value": memory}},
        }
    ]
    devices += extra.get("more", [])
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceClass",
        "metadata": {"name": name},
        "spec": {"devices": devices},
    }


def cluster(
    name: str,
    pools: list[tuple[str, str, int]],
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "cluster": {"source": "Existing", "existing": {"secretRef": {"name": name}}},
        "nodePools": [{"name": p, "className": c, "nodeCount": n} for p, c, n in pools],
    }
    if taints:
        spec["taints"] = taints
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
    }


def member(
    role: str = "Standalone",
    devices: list[tuple[str, int, list[str]]] | None = None,
    nodes: int | None = None,
) -> dict[str, Any]:
    m: dict[str, Any] = {
        "role": role,
        "template": {"spec": {"containers": [{"name": "engine", "image": "vllm:latest"}]}},
    }
    if devices is not None:
        m["nodeSelector"] = {
            "devices": [
                {"name": n, "count": c, "selectors": [{"cel": s} for s in sels]}
                for n, c, sels in devices
            ]
        }
    if nodes is not None:
        m["worker"] = {"nodes": nodes}
    return m


def engine(name: str, members: list[dict[str, Any]], copies: int = 1, **kw: Any) -> dict[str, Any]:
    return {"name": name, "copies": copies, "members": members, **kw}


def standalone(
    name: str = "main", gpus: int = 8, selectors: list[str] | None = None, copies: int = 1
) -> dict[str, Any]:
    return engine(name, [member(devices=[("gpu", gpus, selectors or [GPU])])], copies=copies)


def deployment(
    name: str = "llm",
    namespace: str = "team-a",
    replicas: int = 1,
    engines: list[dict[str, Any]] | None = None,
    selector: dict[str, str] | None = None,
    tolerations: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    template: dict[str, Any] = {"engines": engines or [standalone()]}
    if selector:
        template["clusterSelector"] = {"matchLabels": selector}
    if tolerations:
        template["tolerations"] = tolerations
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": replicas, "template": {"spec": template}},
    }


def stamp(md: dict[str, Any], p: ReplicaPlacement, name: str | None = None) -> dict[str, Any]:
    """A ModelReplica as the deployment composer would stamp it for placement ``p``."""
    engines = []
    for e in md["spec"]["template"]["spec"]["engines"]:
        placed = p.engine(e["name"])
        members = []
        for m, mp in zip(e["members"], placed.members, strict=True):
            out = {k: v for k, v in m.items() if k != "nodeSelector"}
            out["nodePoolName"] = mp.pool
            if mp.device_requests:
                out["deviceRequests"] = mp.device_requests_dicts()
            members.append(out)
        engines.append({**{k: v for k, v in e.items() if k != "members"}, "members": members})
    meta = md["metadata"]
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {
            "name": name or f"{meta['name']}-{p.cluster}-{p.index}",
            "namespace": meta["namespace"],
            "labels": {
                pl.DEPLOYMENT: meta["name"],
                pl.DEPLOYMENT_NAMESPACE: meta["namespace"],
                pl.REPLICA_INDEX: str(p.index),
                pl.CLUSTER: p.cluster,
            },
        },
        "spec": {"clusterName": p.cluster, "engines": engines},
    }


def where(schedule: pl.Schedule) -> list[tuple[int, str]]:
    return [(p.index, p.cluster) for p in schedule.placements]
