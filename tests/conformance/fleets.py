"""The fleets every conformance rule runs over: each shipped example and a few generated fleets,
rendered as ``modelplane routes`` renders them (every workload one ready copy), so the composed
objects are the ones a live control plane would apply once the fleet settles.

The interface, for every test module of this package:

- ``NAMES``: every fleet's name (``example/<dir>``, ``generated/<what>``), for
  ``pytest.mark.parametrize("name", NAMES)``;
- ``SERVED``: the names of the fleets with a ModelService;
- ``rendered_fleet(name) -> Fleet``: the fleet, rendered once per test session (``inputs(name)``: as
  written);
- ``Fleet.composites(kind)``: the composites of a kind, with the status their composition
  published;
- ``Fleet.composed(kind)``: the composed resources of a kind (``Release``, ``Object``, ``Usage``,
  ``ClusterUsage``, ``ModelReplica``, ...) as Crossplane would apply them;
- ``Fleet.remote(kind)``: what provider-kubernetes Objects carry to workload clusters, as
  ``Remote(cluster, manifest, object)``: the target cluster's name (its ClusterProviderConfig),
  the manifest, and the Object carrying it.

Generated fleets cover what the examples do not: several replicas of a service on one cluster,
several services on one cluster, prefill/decode behind a service, a Dynamo and a Standard stack
side by side, and an external provider beside replicas.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modelplane import manifests
from modelplane.compose.registry import default_registry
from modelplane.render import api_server_admission, render_documents
from modelplane.simulate import simulate_observed

Obj = dict[str, Any]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RESOURCE_NAME = "crossplane.io/composition-resource-name"
OBJECT_KIND = ("kubernetes.m.crossplane.io/v1alpha1", "Object")


@dataclass(frozen=True)
class Remote:
    """An object on a workload cluster, as a provider-kubernetes Object applies it there."""

    cluster: str
    manifest: Obj
    object: Obj


@dataclass(frozen=True)
class Fleet:
    name: str
    inputs: tuple[Obj, ...]
    docs: tuple[Obj, ...]

    def composites(self, kind: str | None = None) -> list[Obj]:
        """Modelplane's composites, those another composes (ModelReplicas) included."""
        return [d for d in self.docs if _is_composite(d) and kind in (None, d.get("kind"))]

    def composed(self, kind: str | None = None) -> list[Obj]:
        return [d for d in self.docs if _is_composed(d) and kind in (None, d.get("kind"))]

    def remote(self, kind: str | None = None) -> list[Remote]:
        out = []
        for obj in self.composed("Object"):
            if (obj.get("apiVersion"), obj.get("kind")) != OBJECT_KIND:
                continue
            spec = obj.get("spec") or {}
            manifest = (spec.get("forProvider") or {}).get("manifest") or {}
            if kind in (None, manifest.get("kind")):
                cluster = str((spec.get("providerConfigRef") or {}).get("name") or "")
                out.append(Remote(cluster, manifest, obj))
        return out


def _is_composed(doc: Obj) -> bool:
    return RESOURCE_NAME in ((doc.get("metadata") or {}).get("annotations") or {})


def _is_composite(doc: Obj) -> bool:
    return str(doc.get("apiVersion", "")).startswith("modelplane.ai/")


def _objects(docs: list[Obj]) -> tuple[Obj, ...]:
    """Every object once (render prints a nested composite under its owner and again on its own,
    the second time with its status), without render's results."""
    out: dict[tuple[str, str, str, str], Obj] = {}
    for doc in docs:
        meta = doc.get("metadata")
        if meta is None:
            continue
        key = (doc["apiVersion"], doc["kind"], meta.get("namespace", ""), meta["name"])
        if key not in out or "status" in doc:
            out[key] = doc
    return tuple(out.values())


def render(inputs: list[Obj]) -> list[Obj]:
    """The inputs rendered to a fixed point, every workload observed with one ready copy."""
    return render_documents(
        default_registry(),
        copy.deepcopy(inputs),
        admit=api_server_admission(),
        simulate=functools.partial(simulate_observed, ready_copies=1),
    )


def example(directory: str) -> list[Obj]:
    return [m.obj for m in manifests.load([str(EXAMPLES / directory)])]


def _named(objs: list[Obj], kind: str, name: str) -> Obj:
    return next(o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name)


def _several_replicas_per_cluster() -> list[Obj]:
    objs = example("service-canary")
    _named(objs, "ModelDeployment", "qwen-stable")["spec"]["replicas"] = 4
    _named(objs, "ModelDeployment", "qwen-canary")["spec"]["replicas"] = 2
    return objs


def _several_services_per_cluster() -> list[Obj]:
    objs = example("service-canary")
    llama = copy.deepcopy(_named(objs, "ModelDeployment", "qwen-stable"))
    llama["metadata"]["name"] = "llama"
    llama["spec"]["replicas"] = 2
    llama["spec"]["template"]["metadata"]["labels"] = {"model": "llama"}
    service = copy.deepcopy(_named(objs, "ModelService", "qwen"))
    service["metadata"]["name"] = "llama"
    service["spec"]["endpoints"] = [
        {"weight": 1, "selector": {"matchLabels": {"modelplane.ai/deployment": "llama"}}}
    ]
    return [*objs, llama, service]


def _both_stacks() -> list[Obj]:
    """The canary's cluster on the Dynamo stack, the stable one's on Standard."""
    objs = _several_replicas_per_cluster()
    _named(objs, "InferenceCluster", "eu-west")["spec"]["stack"] = "Dynamo"
    return objs


def _prefill_decode_service() -> list[Obj]:
    objs = example("fleet-prefill-decode")
    cluster = _named(objs, "InferenceCluster", "serve-west")
    cluster["status"] = {
        "providerConfigRef": {"name": "serve-west"},
        "gateway": {
            "name": "inference-gateway",
            "namespace": "modelplane-system",
            "address": "203.0.113.40",
            "className": "modelplane",
            "fleetHostname": "serve-west.fleet.modelplane.internal",
        },
    }
    deployment = _named(objs, "ModelDeployment", "qwen3-32b-pd")
    deployment["spec"]["replicas"] = 2
    for engine in deployment["spec"]["template"]["spec"]["engines"]:
        engine["copies"] = 1  # a replica is Ready, so routed, once every copy is
    gateway = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceGateway",
        "metadata": {"name": "west"},
        "spec": {
            "clusterName": "serve-west",
            "hostname": "west.example.com",
            "tls": {"secretRef": {"name": "west-tls", "namespace": "crossplane-system"}},
        },
    }
    service = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelService",
        "metadata": {"name": "qwen-pd", "namespace": "ml-team"},
        "spec": {
            "endpoints": [
                {"selector": {"matchLabels": {"modelplane.ai/deployment": "qwen3-32b-pd"}}}
            ]
        },
    }
    return [*objs, gateway, service]


def _external_beside_replicas() -> list[Obj]:
    objs = example("service-overflow")
    _named(objs, "ModelDeployment", "kimi-k2")["spec"]["replicas"] = 2
    return objs


GENERATED: dict[str, Callable[[], list[Obj]]] = {
    "generated/several-replicas-per-cluster": _several_replicas_per_cluster,
    "generated/several-services-per-cluster": _several_services_per_cluster,
    "generated/both-stacks": _both_stacks,
    "generated/prefill-decode-service": _prefill_decode_service,
    "generated/external-beside-replicas": _external_beside_replicas,
}

NAMES: tuple[str, ...] = (
    *(f"example/{p.name}" for p in sorted(EXAMPLES.iterdir()) if p.is_dir()),
    *GENERATED,
)


def inputs(name: str) -> list[Obj]:
    """The fleet as written, before rendering (cheap: for choosing fleets at collection)."""
    kind, _, what = name.partition("/")
    return example(what) if kind == "example" else GENERATED[name]()


@functools.cache
def rendered_fleet(name: str) -> Fleet:
    objs = inputs(name)
    return Fleet(name, tuple(objs), _objects(render(objs)))


SERVED: tuple[str, ...] = tuple(
    n for n in NAMES if any(o.get("kind") == "ModelService" for o in inputs(n))
)
"""The fleets with a ModelService."""


def fleets() -> Iterator[Fleet]:
    for name in NAMES:
        yield rendered_fleet(name)
