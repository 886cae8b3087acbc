"""Small ModelReplica builders for the routing, picker, status and simulate tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.compose.modelreplica.context import ReplicaContext
from tests.compose.results import manifest as manifest

Obj = dict[str, Any]

PROVIDER_CONFIG = "eks-l4-kubeconfig"


def container(name: str = "engine", image: str = "vllm/vllm-openai:v0.23.0") -> Obj:
    return {"name": name, "image": image, "args": ["--model=Qwen/Qwen3-8B"]}


def standalone(name: str = "qwen3-8b", *, copies: int = 1, phase: str | None = None) -> Obj:
    engine: Obj = {
        "name": name,
        "copies": copies,
        "members": [
            {
                "role": "Standalone",
                "nodePoolName": "gpu-l4",
                "deviceRequests": [
                    {"name": "gpu", "count": 1, "deviceClassName": "gpu.nvidia.com"}
                ],
                "template": {"spec": {"containers": [container()]}},
            }
        ],
    }
    if phase:
        engine["phase"] = phase
    return engine


def gang(
    name: str = "qwen3-235b", *, copies: int = 1, nodes: int = 1, phase: str | None = None
) -> Obj:
    engine: Obj = {
        "name": name,
        "copies": copies,
        "members": [
            {
                "role": "Leader",
                "nodePoolName": "gpu-h100",
                "deviceRequests": [
                    {"name": "gpu", "count": 8, "deviceClassName": "gpu.nvidia.com"}
                ],
                "template": {"spec": {"containers": [container()]}},
            },
            {
                "role": "Worker",
                "nodePoolName": "gpu-h100",
                "worker": {"nodes": nodes},
                "deviceRequests": [
                    {"name": "gpu", "count": 8, "deviceClassName": "gpu.nvidia.com"}
                ],
                "template": {"spec": {"containers": [container()]}},
            },
        ],
    }
    if phase:
        engine["phase"] = phase
    return engine


def user_picker(**container_fields: Any) -> Obj:
    epp: Obj = {"name": "epp", "image": "registry.example.com/epp:v1", **container_fields}
    return {"template": {"spec": {"containers": [epp]}}}


def objectiveless_picker() -> Obj:
    """Serving through an llm-d picker of v0.8.0, which runs gateway-api-inference-extension's
    picker and watches only the legacy group: no InferenceObjective of llm-d.ai is read. Its own
    config, of the group that release reads, is admitted where Modelplane's default is not."""
    image = "ghcr.io/llm-d/llm-d-inference-scheduler:v0.8.0"
    config = {
        "apiVersion": "inference.networking.x-k8s.io/v1alpha1",
        "kind": "EndpointPickerConfig",
    }
    endpoint_picker = {**user_picker(image=image), "config": config}
    return {"router": "EndpointPicker", "endpointPicker": endpoint_picker}


def replica(
    name: str = "qwen3-8b-eks-l4-0",
    namespace: str = "ml-team",
    *,
    engines: list[Obj] | None = None,
    serving: Obj | None = None,
    status: Obj | None = None,
) -> Obj:
    spec: Obj = {"clusterName": "eks-l4", "engines": engines or [standalone()]}
    spec["serving"] = {"mode": "Unified", **(serving or {})}
    obj: Obj = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
    if status is not None:
        obj["status"] = status
    return obj


def prefill_decode(
    *, prefill: Obj | None = None, decode: Obj | None = None, config: Obj | None = None, **kw: Any
) -> Obj:
    picker = user_picker()
    if config is not None:
        picker["config"] = config
    return replica(
        engines=[
            prefill or standalone("prefill", phase="Prefill"),
            decode or standalone("decode", copies=3, phase="Decode"),
        ],
        serving={"mode": "PrefillDecode", "router": "EndpointPicker", "endpointPicker": picker},
        **kw,
    )


def cluster(*, stack: str = "Standard", gateway: Obj | None = None) -> Obj:
    status: Obj = {"providerConfigRef": {"name": PROVIDER_CONFIG}}
    if gateway is not None:
        status["gateway"] = gateway
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": "eks-l4"},
        "spec": {"stack": stack},
        "status": status,
    }


def context(
    replica_obj: Obj | None = None,
    *,
    cluster_obj: Obj | None = None,
    observed: Mapping[str, Obj] | None = None,
) -> ReplicaContext:
    return ReplicaContext(
        replica=replica_obj or replica(),
        cluster=cluster_obj or cluster(),
        provider_config=PROVIDER_CONFIG,
        observed=observed or {},
    )


def workload(ctx: ReplicaContext, engine: Obj, kind: str = "Deployment") -> Obj:
    """A minimal wrapped workload for one engine, as the workloads half would compose it."""
    from modelplane.compose.modelreplica.remote import wrap

    copies = int(engine.get("copies", 1))
    api = {
        "Deployment": "apps/v1",
        "LeaderWorkerSet": "leaderworkerset.x-k8s.io/v1",
        "PodCliqueSet": "grove.io/v1alpha1",
    }[kind]
    remote: Obj = {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": f"{ctx.name}-{engine['name']}-0123abcd", "namespace": ctx.namespace},
        "spec": {"replicas": copies},
    }
    return wrap(ctx, f"workload-{engine['name']}", remote)
