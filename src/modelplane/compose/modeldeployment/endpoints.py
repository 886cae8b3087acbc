"""A ModelEndpoint per replica that can take traffic: observed ModelServing (a pod restarting or
a rolling update leaves it serving, though not Ready), on a cluster that publishes a gateway
address. Withdrawn on evidence that either stopped holding (ModelServing False; the cluster's
GatewayReady False), Crossplane deleting an endpoint left out of the desired state; a replica
whose status is not written yet, or a cluster that is not listed, or listed without its gateway
status, is no evidence, so an endpoint there is kept as it is. An updated replica's endpoint
is withdrawn until every route that routed it has dropped it (``reroute.py``): the rollout
counts it again only once routed again.

Each endpoint carries its replica's labels (the template's plus the deployment, cluster and
replica index), the public ``url``/``rewritePath`` (the replica's own address on its cluster's
gateway), and where the fleet reaches it: ``clusterName`` and its ``inferencePool``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.apis import API_VERSION
from modelplane.compose.modeldeployment.reroute import withdrawn
from modelplane.compose.shared.frontdoor import cluster_gateway, gateway_withdrawn
from modelplane.compose.shared.replicapool import replica_pool_name
from modelplane.composer import CLASSES, Desired, Inputs, Result, namespace_of
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.observed import carried, carry_forward, ready_as_observed
from modelplane.reasons import ModelReplica

CLUSTERS = "inference-clusters"
"""The deployment's requirements on every InferenceCluster and InferenceClass (the composer's)."""


def endpoint_key(replica_key: str) -> str:
    """``replica-<index>-<cluster>`` -> ``endpoint-<index>-<cluster>``."""
    return "endpoint-" + replica_key.removeprefix("replica-")


def with_endpoints(
    inputs: Inputs, result: Result, fleet: Mapping[str, Mapping[str, Any]], draining: frozenset[str]
) -> Result:
    """``result`` with the endpoints of the replicas it composes added, but for those
    ``draining`` (kept only until the routes no longer reference them). ``fleet``: the
    InferenceClusters listed, by name."""
    observed = {
        key: obj for key, obj in inputs.observed.items() if obj.get("kind") == "ModelEndpoint"
    }
    if not inputs.required.get(CLUSTERS) or not inputs.required.get(CLASSES):
        # The fleet is not read yet or not listed (a list that failed looks like every cluster
        # deleted): the deployment holds what it composed, and its endpoints are held with it.
        result.resources.update(carry_forward(observed))
        return result
    for key, desired in list(result.resources.items()):
        replica = desired.resource
        if replica.get("kind") != "ModelReplica" or key in draining:
            continue
        ek = endpoint_key(key)
        endpoint = _endpoint_for(replica, inputs.observed.get(key), observed.get(ek), fleet)
        if endpoint is not None:
            result.resources[ek] = endpoint
    return result


def _endpoint_for(
    replica: Obj,
    observed_replica: Mapping[str, Any] | None,
    observed: Obj | None,
    fleet: Mapping[str, Mapping[str, Any]],
) -> Desired | None:
    """The replica's endpoint: composed while it serves on a reachable cluster, kept as observed
    on no evidence either way, none (withdrawn) on evidence."""
    kept = None if observed is None else Desired(carried(observed), ready_as_observed(observed))
    if withdrawn(replica):
        # Updated, it restarts: every ModelService routing it must drop its lane, and add it
        # back once it serves the new stamp. The rollout counts it again only once it is
        # routed again (reroute.py).
        return None
    serving = serving_status(observed_replica)
    if serving != "True":
        # Serving False is the evidence that withdraws an endpoint; a replica whose status
        # is not written yet keeps the endpoint it has.
        return kept if serving == "Unknown" else None
    cluster = fleet.get(str(objects.dig(replica, "spec", "clusterName") or ""))
    if cluster is None or not _reachable(cluster):
        # The cluster is not listed, or listed before its gateway address was written (or
        # with only Crossplane's conditions): no evidence its gateway went away, so an
        # endpoint it has stays as it is.
        return kept
    endpoint = _endpoint(replica, cluster)
    if endpoint is None:
        return None
    return Desired(endpoint, ready_as_observed(observed))


def serving_status(replica: Mapping[str, Any] | None) -> str:
    """The replica's ModelServing status: whether it can take traffic (one ready copy of each
    engine and its routing path), not whether its rollout is complete (Ready)."""
    c = objects.condition(replica, ModelReplica.MODEL_SERVING)
    return str(c.get("status") or "Unknown") if c else "Unknown"


def _reachable(cluster: Mapping[str, Any]) -> bool:
    """Whether the cluster's status decides its endpoints: it publishes a gateway address and a
    providerConfigRef, or says its gateway has none."""
    gateway = cluster_gateway(cluster)
    return bool(gateway.address and gateway.provider_config) or gateway_withdrawn(cluster)


def _endpoint(replica: Obj, cluster: Mapping[str, Any]) -> Obj | None:
    address = cluster_gateway(cluster).address
    if not address:
        return None
    meta = replica["metadata"]
    name = str(meta["name"])
    namespace = namespace_of(replica)
    host = f"[{address}]" if ":" in address else address
    return {
        "apiVersion": API_VERSION,
        "kind": "ModelEndpoint",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": dict(meta.get("labels") or {}),
        },
        "spec": {
            "url": f"https://{host}/{namespace}/{name}/v1",
            "rewritePath": f"/{namespace}/{name}/",
            "clusterName": str(replica["spec"]["clusterName"]),
            "inferencePool": replica_pool_name(name),
        },
    }
