"""Small builders for fleet objects as the API server would store them (defaults applied)."""

from __future__ import annotations

import copy
from typing import Any

Obj = dict[str, Any]
API = "modelplane.ai/v1alpha1"
GPU_SELECTOR = 'device.driver == "gpu.nvidia.com"'


def inference_class(name: str, *, gpus: int = 8, memory: str = "81559Mi") -> Obj:
    return {
        "apiVersion": API,
        "kind": "InferenceClass",
        "metadata": {"name": name},
        "spec": {
            "devices": [
                {
                    "name": "gpu",
                    "claim": "DRA",
                    "driver": "gpu.nvidia.com",
                    "deviceClassName": "gpu.nvidia.com",
                    "count": gpus,
                    "attributes": {"model": {"string": name}},
                    "capacity": {"memory": {"value": memory}},
                }
            ]
        },
    }


def inference_cluster(
    name: str,
    pools: dict[str, tuple[str, int]],
    *,
    labels: dict[str, str] | None = None,
    taints: list[Obj] | None = None,
    classes: list[Obj] | None = None,
) -> Obj:
    """A reachable Existing cluster; ``pools`` maps pool name to (class name, nodes)."""
    by_class = {c["metadata"]["name"]: c for c in classes or []}
    node_pools = [{"name": p, "className": c, "nodeCount": n} for p, (c, n) in pools.items()]
    gpu_pools = [
        {"name": p, "nodes": n, "devices": copy.deepcopy(by_class[c]["spec"]["devices"])}
        for p, (c, n) in pools.items()
        if c in by_class
    ]
    spec: Obj = {
        "cluster": {
            "source": "Existing",
            "existing": {"secretRef": {"name": f"{name}-kubeconfig", "key": "kubeconfig"}},
        },
        "stack": "Standard",
        "nodePools": node_pools,
    }
    if taints:
        spec["taints"] = taints
    return {
        "apiVersion": API,
        "kind": "InferenceCluster",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
        "status": {
            "providerConfigRef": {"name": name},
            "gateway": {
                "address": f"10.0.0.{len(name)}",
                "name": "inference-gateway",
                "namespace": "modelplane-system",
            },
            "gpuPools": gpu_pools,
            "conditions": [{"type": "Ready", "status": "True", "reason": "Available"}],
        },
    }


def member(role: str = "Standalone", *, gpus: int = 1, selector: str = GPU_SELECTOR) -> Obj:
    m: Obj = {
        "role": role,
        "nodeSelector": {
            "devices": [{"name": "gpu", "count": gpus, "selectors": [{"cel": selector}]}]
        },
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
    return m


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


def with_condition(obj: Obj, type_: str, status: str, reason: str = "", message: str = "") -> Obj:
    out = copy.deepcopy(obj)
    conditions = out.setdefault("status", {}).setdefault("conditions", [])
    conditions[:] = [c for c in conditions if c.get("type") != type_]
    conditions.append({"type": type_, "status": status, "reason": reason, "message": message})
    return out
