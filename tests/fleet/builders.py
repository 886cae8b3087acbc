"""The one set of builders for fleet objects, shared by the fleet tests and the fleet benches.

Objects come in two shapes: as a platform or ML team declares them (``declared_cluster``,
spec only, what the scheduler reads) and as the API server stores them once reconciled
(``inference_cluster`` with the status the deployment composer reads). The scheduler tests'
shorthands follow: classes by GPU product (``gpu_class``), members by the devices they request
(``device_member``), engines of a list of members (``engine_of``), a team's whole-node deployment
(``llm_deployment``), and a replica stamped for a placement (``stamp``).
"""

from __future__ import annotations

import copy
from typing import Any

from modelplane import labels
from modelplane.compose.shared.replica_revision import revision_message
from modelplane.labels import TEMPLATE_HASH
from modelplane.reasons import ModelReplica
from modelplane.scheduling import placement as pl
from modelplane.scheduling.placement import ReplicaPlacement

Obj = dict[str, Any]
API = "modelplane.ai/v1alpha1"
GPU_SELECTOR = 'device.driver == "gpu.nvidia.com"'


def gpu_device(
    count: int = 8,
    memory: str = "81559Mi",
    attributes: Obj | None = None,
    *,
    claim: str | None = None,
) -> Obj:
    """One NVIDIA GPU device kind of an InferenceClass; ``claim`` left out is the default."""
    device: Obj = {"name": "gpu"}
    if claim is not None:
        device["claim"] = claim
    device |= {"driver": "gpu.nvidia.com", "deviceClassName": "gpu.nvidia.com", "count": count}
    if attributes is not None:
        device["attributes"] = attributes
    device["capacity"] = {"memory": {"value": memory}}
    return device


def inference_class_of(name: str, devices: list[Obj]) -> Obj:
    return {
        "apiVersion": API,
        "kind": "InferenceClass",
        "metadata": {"name": name},
        "spec": {"devices": devices},
    }


def inference_class(name: str, *, gpus: int = 8, memory: str = "81559Mi") -> Obj:
    """A class of ``gpus`` GPUs whose model attribute is the class name, defaults applied."""
    return inference_class_of(
        name, [gpu_device(gpus, memory, {"model": {"string": name}}, claim="DRA")]
    )


H100 = inference_class("h100")
"""The class most composer tests place on: eight 80 GiB H100s."""


def declared_cluster(
    name: str,
    pools: list[tuple[str, str, int]],
    labels: dict[str, str] | None = None,
    taints: list[Obj] | None = None,
) -> Obj:
    """An Existing cluster as declared; ``pools`` lists (pool name, class name, nodes)."""
    spec: Obj = {
        "cluster": {
            "source": "Existing",
            "existing": {"secretRef": {"name": f"{name}-kubeconfig", "key": "kubeconfig"}},
        },
        "stack": "Standard",
        "nodePools": [{"name": p, "className": c, "nodeCount": n} for p, c, n in pools],
    }
    if taints:
        spec["taints"] = taints
    return {
        "apiVersion": API,
        "kind": "InferenceCluster",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
    }


def inference_cluster(
    name: str,
    pools: dict[str, tuple[str, int]],
    *,
    labels: dict[str, str] | None = None,
    taints: list[Obj] | None = None,
    classes: list[Obj] | None = None,
) -> Obj:
    """A reachable, ready cluster; ``pools`` maps pool name to (class name, nodes)."""
    by_class = {c["metadata"]["name"]: c for c in classes or []}
    gpu_pools = [
        {"name": p, "nodes": n, "devices": copy.deepcopy(by_class[c]["spec"]["devices"])}
        for p, (c, n) in pools.items()
        if c in by_class
    ]
    declared = [(p, c, n) for p, (c, n) in pools.items()]
    ic = declared_cluster(name, declared, labels, taints)
    ic["status"] = {
        "providerConfigRef": {"name": name},
        "gateway": {
            "address": f"10.0.0.{len(name)}",
            "name": "inference-gateway",
            "namespace": "modelplane-system",
        },
        "gpuPools": gpu_pools,
        "conditions": [{"type": "Ready", "status": "True", "reason": "Available"}],
    }
    return ic


def fleet(*names: str, nodes: int = 2, taints: dict[str, list[Obj]] | None = None) -> list[Obj]:
    """Ready clusters of one ``h100`` pool of ``nodes`` H100 nodes; ``taints`` by cluster name."""
    return [
        inference_cluster(
            n, {"h100": ("h100", nodes)}, taints=(taints or {}).get(n), classes=[H100]
        )
        for n in names
    ]


def node_selector(devices: list[tuple[str, int, list[str]]]) -> Obj:
    """A member's nodeSelector from (request name, count, CEL selectors) triples."""
    return {
        "devices": [
            {"name": n, "count": c, "selectors": [{"cel": s} for s in sels]}
            for n, c, sels in devices
        ]
    }


def member(role: str = "Standalone", *, gpus: int = 1, selector: str = GPU_SELECTOR) -> Obj:
    return {
        "role": role,
        "nodeSelector": node_selector([("gpu", gpus, [selector])]),
        "template": {
            "metadata": {"labels": {"team": "ml"}},
            "spec": {
                "containers": [
                    {
                        "name": "engine",
                        "image": "vllm/vllm-openai:v0.11.0",
                        "args": ["--model", "Qwen/Qwen3-8B"],
                        "ports": [{"name": "http", "containerPort": 8000}],
                    }
                ]
            },
        },
    }


def placed_member(pool: str, gpus: int, template: Obj | None = None) -> Obj:
    """A Standalone member as the deployment composer stamps it: on ``pool``, its GPUs requested."""
    [request] = node_selector([("gpu", gpus, [GPU_SELECTOR])])["devices"]
    return {
        "role": "Standalone",
        "nodePoolName": pool,
        "deviceRequests": [{**request, "deviceClassName": "gpu.nvidia.com"}],
        "template": template or {},
    }


def engine(name: str = "main", *members: Obj, copies: int = 1, phase: str | None = None) -> Obj:
    e: Obj = {"name": name, "copies": copies, "members": list(members) or [member()]}
    if phase:
        e["phase"] = phase
    return e


def deployment(
    name: str = "qwen",
    *engines: Obj,
    replicas: int = 1,
    namespace: str = "ml",
    selector: dict[str, str] | None = None,
    tolerations: list[Obj] | None = None,
    serving: Obj | None = None,
) -> Obj:
    spec: Obj = {"engines": list(engines) or [engine()]}
    if selector:
        spec["clusterSelector"] = {"matchLabels": selector}
    if tolerations:
        spec["tolerations"] = tolerations
    if serving:
        spec["serving"] = serving
    return {
        "apiVersion": API,
        "kind": "ModelDeployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
    }


def placed_replica(
    deployment: str,
    namespace: str,
    cluster: str,
    index: int,
    engines: list[Obj],
    name: str | None = None,
) -> Obj:
    """A ModelReplica as the deployment composer stamps it: labelled with its placement."""
    return {
        "apiVersion": API,
        "kind": "ModelReplica",
        "metadata": {
            "name": name or f"{deployment}-{cluster}-{index}",
            "namespace": namespace,
            "labels": {
                labels.DEPLOYMENT: deployment,
                labels.DEPLOYMENT_NAMESPACE: namespace,
                labels.REPLICA_INDEX: str(index),
                labels.CLUSTER: cluster,
            },
        },
        "spec": {"clusterName": cluster, "engines": engines},
    }


def with_condition(obj: Obj, type_: str, status: str, reason: str = "", message: str = "") -> Obj:
    out = copy.deepcopy(obj)
    conditions = out.setdefault("status", {}).setdefault("conditions", [])
    conditions[:] = [c for c in conditions if c.get("type") != type_]
    conditions.append({"type": type_, "status": status, "reason": reason, "message": message})
    return out


def stamp_of(obj: Obj) -> str:
    return str(((obj.get("metadata") or {}).get("annotations") or {}).get(TEMPLATE_HASH))


def reported(replica: Obj, up: bool, stamp: str | None = None) -> Obj:
    """The replica with the status its own reconcile writes: ModelServing, and RevisionReady
    for ``stamp`` (the one it carries, by default) ready exactly when it serves."""
    out = with_condition(replica, "ModelServing", "True" if up else "False")
    message = revision_message(stamp or stamp_of(replica), "ready" if up else "not ready")
    reason = "Running" if up else "Updating"
    return with_condition(
        out, ModelReplica.REVISION_READY, "True" if up else "False", reason, message
    )


def serving(
    replica: Obj, status: str = "True", reason: str | None = None, *, revision: bool = False
) -> Obj:
    """The replica as observed with ModelServing and Ready ``status``; ``reason`` of ModelServing
    is Serving when it serves, NoReadyCopy when not, unless given. ``revision``: its status
    also describes the stamp it carries (``reported``)."""
    if revision:
        replica = reported(replica, up=status == "True")
    reason = reason or ("Serving" if status == "True" else "NoReadyCopy")
    return with_condition(with_condition(replica, "ModelServing", status, reason), "Ready", status)


def is_serving(replica: Obj) -> bool:
    """Whether the replica's status says ModelServing is True."""
    conditions = (replica.get("status") or {}).get("conditions") or []
    return any(c["type"] == "ModelServing" and c["status"] == "True" for c in conditions)


def model_cache(name: str, namespace: str = "ml", selector: dict[str, str] | None = None) -> Obj:
    """A ModelCache of a Hugging Face repo, staged on the clusters ``selector`` labels (all
    when None)."""
    spec: Obj = {"source": "HuggingFace", "huggingFace": {"repo": "Qwen/Qwen3-8B", "sizeGiB": 20}}
    if selector is not None:
        spec["clusterSelector"] = {"matchLabels": selector}
    return {
        "apiVersion": API,
        "kind": "ModelCache",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def memory_at_least(q: str) -> str:
    return f'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("{q}")) >= 0'


def product(name: str) -> str:
    return f'device.attributes["gpu.nvidia.com"].productName == "{name}"'


def gpu_class(
    name: str, count: int = 8, product: str = "H100", memory: str = "80Gi", **extra: Any
) -> dict[str, Any]:
    """A class of ``count`` GPUs of one product; ``more=[...]`` adds further device kinds."""
    gpu = gpu_device(count, memory, {"productName": {"string": product}})
    return inference_class_of(name, [gpu, *extra.get("more", [])])


def priced(inference_class: dict[str, Any], per_node_hour: float) -> dict[str, Any]:
    """A copy of ``inference_class`` costing ``per_node_hour`` a node."""
    spec = {**inference_class["spec"], "cost": {"perNodeHour": per_node_hour}}
    return {**inference_class, "spec": spec}


def device_member(
    role: str = "Standalone",
    devices: list[tuple[str, int, list[str]]] | None = None,
    nodes: int | None = None,
) -> dict[str, Any]:
    """A member requesting exactly ``devices`` (none: no nodeSelector), ``nodes`` per worker."""
    m: dict[str, Any] = {
        "role": role,
        "template": {"spec": {"containers": [{"name": "engine", "image": "vllm:latest"}]}},
    }
    if devices is not None:
        m["nodeSelector"] = node_selector(devices)
    if nodes is not None:
        m["worker"] = {"nodes": nodes}
    return m


def engine_of(name: str, members: list[dict[str, Any]], copies: int = 1, **kw: Any) -> Obj:
    """An engine of a list of members; ``engine`` takes them as arguments, one GPU by default."""
    return {"name": name, "copies": copies, "members": members, **kw}


def standalone(
    name: str = "main", gpus: int = 8, selectors: list[str] | None = None, copies: int = 1
) -> dict[str, Any]:
    return engine_of(
        name, [device_member(devices=[("gpu", gpus, selectors or [GPU_SELECTOR])])], copies=copies
    )


def llm_deployment(
    name: str = "llm",
    namespace: str = "team-a",
    replicas: int = 1,
    engines: list[dict[str, Any]] | None = None,
    selector: dict[str, str] | None = None,
    tolerations: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """Team A's deployment ``llm`` of whole-node standalone engines unless ``engines`` says."""
    return deployment(
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
    return placed_replica(meta["name"], meta["namespace"], p.cluster, p.index, engines, name)


def where(schedule: pl.Schedule) -> list[tuple[int, str]]:
    return [(p.index, p.cluster) for p in schedule.placements]
