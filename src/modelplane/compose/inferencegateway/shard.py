"""The InferenceGatewayShard composition: a share of one InferenceGateway's hops to the fleet.

Composed by its InferenceGateway (``shards``), never written by a user. Per target cluster, on
the gateway's host through its ClusterProviderConfig, the ``Backend`` and ``BackendTLSPolicy``
the gateway's routes send that cluster's traffic through. Its spec holds all it reads, so it
requires nothing; it is Ready once every hop's Object is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.compose.inferencegateway import objects
from modelplane.compose.shared.frontdoor import CONTROL_NAMESPACE, ClusterGateway
from modelplane.compose.shared.remote import remote_object
from modelplane.composer import Condition, Desired, Inputs, Result
from modelplane.kube.names import dns_label
from modelplane.observed import ready_as_observed
from modelplane.reasons import InferenceGatewayShard
from modelplane.shortlist import counted, shortlist

# Per target: ``backend/<cluster>``; a name holds no ``/``, so no two keys meet.
BACKEND = "backend/"
BACKEND_TLS = "backend-tls/"
READY = InferenceGatewayShard.HOPS_READY
NAMED_CLUSTERS = 10
"""How many clusters HopsReady names of those whose hop is not ready."""


def hop_object_name(shard: str, key: str) -> str:
    """A hop's Object on the control plane. Not the name the gateway gave the same hop's Object
    before it had shards (``dns_label("gw", gateway, key)``): while that one is handed over,
    both exist (they apply the same remote object)."""
    return dns_label("gws", shard, key)


def compose_shard(inputs: Inputs) -> Result:
    shard = inputs.composite
    problem = _malformed(shard)
    if problem:
        return Result.failed(problem)
    name = str(shard["metadata"]["name"])
    spec = shard["spec"]
    gateway = str(spec["gatewayName"])
    host = _host(spec["host"])
    result = Result()
    for entry in spec["targets"]:
        target = _target(entry)
        for key, manifest in (
            (BACKEND + target.cluster, objects.cluster_backend(gateway, host, target)),
            (BACKEND_TLS + target.cluster, objects.cluster_backend_tls(gateway, host, target)),
        ):
            obj = remote_object(
                hop_object_name(name, key), CONTROL_NAMESPACE, host.provider_config, manifest
            )
            result.resources[key] = Desired(obj, ready_as_observed(inputs.observed.get(key)))
    unready = {k.partition("/")[2] for k, d in result.resources.items() if d.ready != "True"}
    waiting = sorted(unready)
    clusters = len(spec["targets"])
    # The gateway reads which clusters' hops exist from here, cluster by cluster.
    reached = sorted(str(t["cluster"]) for t in spec["targets"] if t["cluster"] not in unready)
    result.status = {"clusters": clusters, "reached": reached}
    result.conditions.append(_ready(gateway, clusters, waiting))
    result.ready = "False" if waiting else "True"
    return result


def _ready(gateway: str, clusters: int, waiting: list[str]) -> Condition:
    if not waiting:
        created = f"InferenceGateway {gateway}: the hops to {counted(clusters, 'cluster')} exist"
        return Condition(READY, "True", InferenceGatewayShard.HOPS_CREATED, created)
    named = shortlist(waiting, NAMED_CLUSTERS)
    missing = (
        f"InferenceGateway {gateway}: {len(waiting)} of {clusters} hops not created yet: {named}"
    )
    return Condition(READY, "False", InferenceGatewayShard.WAITING_FOR_HOPS, missing)


def _host(host: Mapping[str, Any]) -> ClusterGateway:
    return ClusterGateway(
        cluster=str(host.get("clusterName") or ""),
        namespace=str(host["namespace"]),
        provider_config=str(host["providerConfigName"]),
    )


def _target(entry: Mapping[str, Any]) -> ClusterGateway:
    return ClusterGateway(
        cluster=str(entry["cluster"]),
        address=str(entry["address"]),
        fleet_hostname=str(entry["fleetHostname"]),
    )


def _malformed(shard: Mapping[str, Any]) -> str | None:
    spec = shard.get("spec")
    if not isinstance(spec, Mapping):
        return "InferenceGatewayShard spec is required"
    if not _text(spec.get("gatewayName")):
        return "InferenceGatewayShard spec.gatewayName is required"
    host = spec.get("host")
    if not isinstance(host, Mapping):
        return "InferenceGatewayShard spec.host must be an object (providerConfigName, namespace)"
    for field in ("providerConfigName", "namespace"):
        if not _text(host.get(field)):
            return f"InferenceGatewayShard spec.host.{field} is required"
    targets = spec.get("targets")
    if not isinstance(targets, list):
        return "InferenceGatewayShard spec.targets must be a list"
    seen: set[str] = set()
    for i, entry in enumerate(targets):
        if not isinstance(entry, Mapping):
            return f"InferenceGatewayShard spec.targets[{i}] must be an object"
        for field in ("cluster", "address", "fleetHostname"):
            if not _text(entry.get(field)):
                return f"InferenceGatewayShard spec.targets[{i}].{field} is required"
        if entry["cluster"] in seen:
            return (
                f"InferenceGatewayShard spec.targets[{i}].cluster {entry['cluster']!r} is "
                "listed twice"
            )
        seen.add(str(entry["cluster"]))
    return None


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)
