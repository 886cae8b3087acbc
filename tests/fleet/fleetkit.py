"""The scheduler tests' shorthands, built on the shared fleet builders in ``builders``."""

from __future__ import annotations

from typing import Any

from modelplane.scheduling import placement as pl
from modelplane.scheduling.placement import ReplicaPlacement

from . import builders
from .builders import GPU_SELECTOR as GPU
from .builders import declared_cluster as cluster

__all__ = [
    "GPU",
    "cluster",
    "deployment",
    "engine",
    "gpu_class",
    "member",
    "memory_at_least",
    "product",
    "stamp",
    "standalone",
    "where",
]


def memory_at_least(q: str) -> str:
    return f'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("{q}")) >= 0'


def product(name: str) -> str:
    return f'device.attributes["gpu.nvidia.com"].productName == "{name}"'


def gpu_class(
    name: str, count: int = 8, product: str = "H100", memory: str = "80Gi", **extra: Any
) -> dict[str, Any]:
    """A class of ``count`` GPUs of one product; ``more=[...]`` adds further device kinds."""
    gpu = builders.gpu_device(count, memory, {"productName": {"string": product}})
    return builders.inference_class_of(name, [gpu, *extra.get("more", [])])


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
        m["nodeSelector"] = builders.node_selector(devices)
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
    return builders.deployment(
        name,
        *(engines or [standalone()]),
        replicas=replicas,
        namespace=namespace,
        selector=selector,
        tolerations=tolerations,
    )


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
    return builders.placed_replica(
        meta["name"], meta["namespace"], p.cluster, p.index, engines, name
    )


def where(schedule: pl.Schedule) -> list[tuple[int, str]]:
    return [(p.index, p.cluster) for p in schedule.placements]
