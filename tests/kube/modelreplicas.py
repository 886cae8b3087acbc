"""Builders for ModelReplica test objects: small, valid by default, easy to bend."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.kube.admission import Admission

GPU = [{"name": "gpu", "deviceClassName": "gpu.nvidia.com"}]


def container(name: str = "engine", **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": "vllm/vllm-openai:v0.23.0", **extra}


def member(
    role: str | None = "Standalone",
    containers: list[dict[str, Any]] | None = None,
    devices: bool = True,
    **extra: Any,
) -> dict[str, Any]:
    m: dict[str, Any] = {
        "nodePoolName": "gpu-l4",
        "template": {"spec": {"containers": containers or [container()]}},
    }
    if role is not None:
        m["role"] = role
    if devices:
        m["deviceRequests"] = copy.deepcopy(GPU)
    m.update(extra)
    return m


def engine(name: str = "qwen", members: list[dict[str, Any]] | None = None, **extra: Any) -> dict:
    return {"name": name, "members": members or [member()], **extra}


def gang(name: str = "qwen", **extra: Any) -> dict[str, Any]:
    return engine(
        name,
        [member("Leader"), member("Worker", devices=True, worker={"nodes": 1})],
        **extra,
    )


def epp(**extra: Any) -> dict[str, Any]:
    return {"template": {"spec": {"containers": [{"name": "epp", "image": "epp:v1", **extra}]}}}


def replica(
    engines: list[dict[str, Any]] | None = None, serving: dict[str, Any] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"clusterName": "eks-l4", "engines": engines or [engine()]}
    if serving is not None:
        spec["serving"] = serving
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": "qwen-0", "namespace": "ml-team"},
        "spec": spec,
    }


def prefill_decode_serving(**serving: Any) -> dict[str, Any]:
    """PrefillDecode serving routed by an endpoint picker; ``serving`` adds or overrides fields."""
    return {"mode": "PrefillDecode", "router": "EndpointPicker", "endpointPicker": epp(), **serving}


def prefill_decode(**serving: Any) -> dict[str, Any]:
    return replica(
        [engine("prefill", phase="Prefill"), engine("decode", phase="Decode")],
        prefill_decode_serving(**serving),
    )


def errors_of(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in Admission.default().admit(obj).errors]
