"""Builders and runners shared by the ModelReplica composition tests."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from modelplane.compose.modelreplica.composer import compose_replica
from modelplane.composer import Inputs, Result
from tests.compose import results

Obj = dict[str, Any]

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
REPLICA_XRD = ROOT / "apis" / "modelreplicas" / "definition.yaml"


def example_names() -> list[str]:
    return sorted(p.name for p in EXAMPLES.glob("replica-*") if p.is_dir())


def example_inputs(name: str) -> Inputs:
    """An example directory as the function would see it on a reconcile with nothing observed."""
    docs = [
        doc
        for path in sorted((EXAMPLES / name).glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    ]
    by_kind: dict[str, list[Obj]] = {}
    for doc in docs:
        by_kind.setdefault(doc["kind"], []).append(doc)
    (replica,) = by_kind["ModelReplica"]
    required = {"cluster": by_kind.get("InferenceCluster", [])}
    if "ModelCache" in by_kind:
        required["modelcache"] = by_kind["ModelCache"]
    return Inputs(composite=replica, required=required)


def cluster(
    name: str = "c1", *, stack: str | None = "Standard", provider: str | None = "pc-c1"
) -> Obj:
    obj: Obj = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": name},
        "spec": {"cluster": {"source": "Existing"}},
    }
    if stack is not None:
        obj["spec"]["stack"] = stack
    if provider is not None:
        obj["status"] = {"providerConfigRef": {"name": provider}}
    return obj


def model_cache(name: str = "weights", namespace: str = "team") -> Obj:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"source": "HuggingFace", "huggingFace": {"repo": "org/model", "sizeGiB": 10}},
    }


def engine_container(**fields: Any) -> Obj:
    return {"name": "engine", "image": "vllm/vllm-openai:v0.23.0", **fields}


def standalone(
    pool: str = "gpu",
    *,
    containers: list[Obj] | None = None,
    devices: list[Obj] | None = None,
    metadata: Obj | None = None,
    pull_secrets: list[Obj] | None = None,
) -> Obj:
    return _member("Standalone", pool, containers, devices, metadata, pull_secrets)


def leader(
    pool: str = "gpu",
    *,
    containers: list[Obj] | None = None,
    devices: list[Obj] | None = None,
    metadata: Obj | None = None,
) -> Obj:
    return _member("Leader", pool, containers, devices, metadata, None)


def worker(
    pool: str = "gpu",
    *,
    nodes: int | None = 1,
    containers: list[Obj] | None = None,
    devices: list[Obj] | None = None,
    metadata: Obj | None = None,
) -> Obj:
    member = _member("Worker", pool, containers, devices, metadata, None)
    if nodes is not None:
        member["worker"] = {"nodes": nodes}
    return member


GPU = [{"name": "gpu", "deviceClassName": "gpu.nvidia.com", "count": 1}]


def _member(
    role: str,
    pool: str,
    containers: list[Obj] | None,
    devices: list[Obj] | None,
    metadata: Obj | None,
    pull_secrets: list[Obj] | None,
) -> Obj:
    member: Obj = {"role": role, "nodePoolName": pool}
    devices = GPU if devices is None else devices
    if devices:
        member["deviceRequests"] = copy.deepcopy(devices)
    spec: Obj = {"containers": containers or [engine_container()]}
    if pull_secrets:
        spec["imagePullSecrets"] = pull_secrets
    member["template"] = {"spec": spec}
    if metadata:
        member["template"]["metadata"] = metadata
    return member


def engine(
    name: str = "main", *members: Obj, copies: int | None = None, phase: str | None = None
) -> Obj:
    obj: Obj = {"name": name, "members": list(members) or [standalone()]}
    if copies is not None:
        obj["copies"] = copies
    if phase is not None:
        obj["phase"] = phase
    return obj


def replica(
    *engines: Obj,
    name: str = "r",
    namespace: str = "team",
    cluster_name: str = "c1",
    serving: Obj | None = None,
    cache: str | None = None,
) -> Obj:
    spec: Obj = {"clusterName": cluster_name, "engines": list(engines) or [engine()]}
    if serving is not None:
        spec["serving"] = serving
    if cache is not None:
        spec["modelCacheRef"] = {"name": cache}
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def run(
    composite: Obj,
    *,
    on: Obj | None = None,
    cache: Obj | None = None,
    observed: dict[str, Obj] | None = None,
) -> Result:
    required: dict[str, list[Obj]] = {"cluster": [on if on is not None else cluster()]}
    if cache is not None:
        required["modelcache"] = [cache]
    return compose_replica(Inputs(composite=composite, required=required, observed=observed or {}))


def manifests(result: Result) -> dict[str, Obj]:
    """The remote manifest inside each composed Object, of a result that must not be Fatal."""
    assert result.fatal is None, result.fatal
    return results.manifests(result)


def workload(result: Result, engine_name: str = "main") -> Obj:
    return manifests(result)[f"workload-{engine_name}"]


def claim_templates(result: Result, engine_name: str = "main") -> dict[str, Obj]:
    """The engine's ResourceClaimTemplates by member role (standalone, leader, worker)."""
    prefix = f"claims-{engine_name}-"
    return {
        key[len(prefix) :].rsplit("-", 1)[0]: m
        for key, m in manifests(result).items()
        if key.startswith(prefix)
    }


def pod_specs(manifest: Obj) -> dict[str, Obj]:
    """Every pod spec of a workload by role: standalone, leader, worker."""
    kind = manifest["kind"]
    if kind == "Deployment":
        return {"standalone": manifest["spec"]["template"]["spec"]}
    if kind == "LeaderWorkerSet":
        t = manifest["spec"]["leaderWorkerTemplate"]
        return {"leader": t["leaderTemplate"]["spec"], "worker": t["workerTemplate"]["spec"]}
    return {role: c["spec"]["podSpec"] for role, c in _cliques_by_role(manifest).items()}


def pod_labels(manifest: Obj) -> dict[str, dict[str, str]]:
    kind = manifest["kind"]
    if kind == "Deployment":
        return {"standalone": manifest["spec"]["template"]["metadata"]["labels"]}
    if kind == "LeaderWorkerSet":
        t = manifest["spec"]["leaderWorkerTemplate"]
        return {
            "leader": t["leaderTemplate"]["metadata"]["labels"],
            "worker": t["workerTemplate"]["metadata"]["labels"],
        }
    return {role: c["labels"] for role, c in _cliques_by_role(manifest).items()}


def _cliques_by_role(manifest: Obj) -> dict[str, Obj]:
    """A PodCliqueSet's leader clique and its first worker's (rank 1), by role.

    Every worker rank has a clique of its own; they differ only in the rank.
    """
    cliques = {c["name"]: c for c in manifest["spec"]["template"]["cliques"]}
    return {"leader": cliques["leader"], "worker": cliques["worker1"]}


def container(pod: Obj, name: str = "engine") -> Obj:
    (found,) = [c for c in pod["containers"] if c["name"] == name]
    return found


def env_names(c: Obj) -> list[str]:
    return [e["name"] for e in c.get("env", [])]


def serving_condition(result: Result) -> Any:
    (condition,) = [c for c in result.conditions if c.type == "ModelServing"]
    return condition
