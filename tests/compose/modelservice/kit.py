"""Builders and checks shared by the front door's tests (InferenceGateway, ModelService,
ModelEndpoint): fleets as their statuses publish them, and validation of composed objects against
the upstream CRDs in the repository or Kubernetes' own schemas."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import kubernetes_validate

from modelplane.compose.modelservice.composer import CLUSTERS, GATEWAYS, endpoints_requirement
from modelplane.composer import Inputs, Result
from modelplane.simulate import simulate_observed
from tests.compose.results import condition as condition
from tests.compose.results import manifests as manifests
from tests.upstream_crds import upstream

Obj = dict[str, Any]

ROOT = Path(__file__).resolve().parents[3]
APIS = ROOT / "apis"
KUBERNETES = "1.34"
API = "modelplane.ai/v1alpha1"


def cluster(
    name: str,
    *,
    address: str | None = None,
    provider: bool = True,
    class_name: str | None = "envoy",
    labels: dict[str, str] | None = None,
    pools: bool = True,
) -> Obj:
    """An InferenceCluster as its composition and serving stack publish it."""
    gateway: Obj = {"name": "inference-gateway", "namespace": "modelplane-system"}
    gateway["address"] = f"{name}.gw.example.net" if address is None else address
    if not gateway["address"]:
        del gateway["address"]
    if class_name:
        gateway["className"] = class_name
        gateway["fleetHostname"] = f"{name}.fleet.modelplane.internal"
    status: Obj = {"gateway": gateway}
    if provider:
        status["providerConfigRef"] = {"name": f"pc-{name}"}
    spec: Obj = {"cluster": {"source": "Existing", "existing": {"secretRef": {"name": name}}}}
    if pools:
        spec["nodePools"] = [{"name": "gpu", "className": "h100", "nodeCount": 2}]
    return {
        "apiVersion": API,
        "kind": "InferenceCluster",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
        "status": status,
    }


def edge_fleet(*names: str) -> list[Obj]:
    """The edge cluster, hosting gateways but no pools, and a cluster of each name."""
    return [cluster("edge", pools=False), *(cluster(n) for n in names)]


def gateway(
    name: str = "main",
    cluster_name: str = "edge",
    *,
    hostname: str | None = None,
    secret: str | None = None,
    issuer: str | None = "letsencrypt",
    selector: dict[str, str] | None = None,
    address: str | None = None,
) -> Obj:
    tls: Obj = {"secretRef": {"name": secret}} if secret else {"issuerRef": {"name": issuer}}
    spec: Obj = {
        "clusterName": cluster_name,
        "hostname": hostname or f"{name}.example.com",
        "tls": tls,
    }
    if selector is not None:
        spec["serviceSelector"] = {"matchLabels": selector}
    obj: Obj = {"apiVersion": API, "kind": "InferenceGateway", "metadata": {"name": name}}
    obj["spec"] = spec
    if address:
        obj["status"] = {"address": address}
    return obj


def service(
    name: str = "qwen",
    namespace: str = "ml",
    *entries: tuple[int, dict[str, str]],
    labels: dict[str, str] | None = None,
    timeout: str | None = None,
    model_name: str | None = None,
) -> Obj:
    spec: Obj = {
        "endpoints": [
            {"weight": w, "selector": {"matchLabels": dict(sel)}}
            for w, sel in (entries or [(1, {"modelplane.ai/deployment": name})])
        ]
    }
    if timeout:
        spec["timeout"] = timeout
    if model_name:
        spec["modelName"] = model_name
    return {
        "apiVersion": API,
        "kind": "ModelService",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "spec": spec,
    }


def replica_endpoint(
    name: str,
    cluster_name: str,
    *,
    namespace: str = "ml",
    labels: dict[str, str] | None = None,
    ready: bool = True,
) -> Obj:
    obj: Obj = {
        "apiVersion": API,
        "kind": "ModelEndpoint",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "spec": {
            "url": f"http://{cluster_name}.gw.example.net/{namespace}/{name}/v1",
            "rewritePath": f"/{namespace}/{name}/",
            "clusterName": cluster_name,
            "inferencePool": f"{name}-pool",
        },
    }
    if ready:
        obj["status"] = {"routing": {"backendName": f"{name}-pool", "clusterName": cluster_name}}
    return obj


def external_endpoint(
    name: str,
    url: str = "https://api.provider.example.com/v1",
    *,
    namespace: str = "ml",
    labels: dict[str, str] | None = None,
    rewrite: str | None = "/",
    auth: Obj | None = None,
    ready: bool = True,
) -> Obj:
    spec: Obj = {"url": url}
    if rewrite is not None:
        spec["rewritePath"] = rewrite
    if auth is not None:
        spec["auth"] = auth
    obj: Obj = {
        "apiVersion": API,
        "kind": "ModelEndpoint",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "spec": spec,
    }
    if ready:
        obj["status"] = {"routing": {"backendName": f"{name}-external"}}
    return obj


def observed(result: Result, keys: Iterable[str] | None = None) -> dict[str, Obj]:
    """What the next reconcile observes: the composed Objects as the simulated cluster reports
    them (routes accepted, Gateways programmed, certificates issued)."""
    desired = {k: d.resource for k, d in result.resources.items()}
    seen = simulate_observed(desired, ready_copies=1)
    return {k: v for k, v in seen.items() if keys is None or k in keys}


def again(compose: Any, inputs: Inputs, result: Result) -> Result:
    """The next reconcile of the same inputs, with ``result``'s resources observed."""
    return compose(
        Inputs(composite=inputs.composite, required=inputs.required, observed=observed(result))
    )


def invalid(result: Result) -> dict[str, list[str]]:
    """Every composed object that fails its schema: an Object against provider-kubernetes' CRD
    and its manifest against the upstream CRD of its kind or Kubernetes' built-in schema; what is
    composed on the control plane itself (the fleet's certificates) against its upstream CRD."""
    problems: dict[str, list[str]] = {}
    for key, desired in result.resources.items():
        obj = desired.resource
        assert upstream().knows(obj["apiVersion"], obj["kind"]), obj["kind"]
        errors = [str(e) for e in upstream().admit(obj).errors]
        if obj["kind"] == "Object":
            errors += manifest_errors(obj["spec"]["forProvider"]["manifest"])
        if errors:
            problems[key] = errors
    return problems


def manifest_errors(manifest: Obj) -> list[str]:
    if upstream().knows(manifest["apiVersion"], manifest["kind"]):
        return [str(e) for e in upstream().admit(manifest).errors]
    try:
        kubernetes_validate.validate(manifest, KUBERNETES, strict=True)
    except kubernetes_validate.ValidationError as e:
        return [str(e)]
    return []


def service_inputs(
    ms: Obj,
    selected: list[list[Obj]],
    gateways: list[Obj] | None = None,
    fleet: list[Obj] | None = None,
) -> Inputs:
    """A ModelService's requirements answered: ``gateways`` (one at 203.0.113.1 unless given),
    ``fleet`` (edge with no pools, east and west unless given) and each entry's selected
    endpoints, in entry order."""
    required: dict[str, list[Obj]] = {
        GATEWAYS: [gateway(address="203.0.113.1")] if gateways is None else gateways,
        CLUSTERS: edge_fleet("east", "west") if fleet is None else fleet,
    }
    for i, found in enumerate(selected):
        required[endpoints_requirement(i)] = found
    return Inputs(composite=ms, required=required)
