"""How an InferenceGateway's hops to the fleet are split into InferenceGatewayShards.

A gateway reaching every cluster of a large fleet would compose two Objects per cluster in one
response, which past about 2,300 clusters is more than Crossplane's gRPC client receives (4 MiB).
So the hops live in ``SHARDS`` child composites, each composing those of its own clusters; the
gateway composes one InferenceGatewayShard per shard holding a cluster.

A cluster's shard is a hash of its name alone, never of the fleet around it: a cluster added or
removed moves no other cluster. A hop that moved would be deleted by one shard and created by
another (traffic lost in between), and the new shard could not take an Object the old one still
controls. So ``SHARDS`` is fixed. Measured (docs/design/routing.md), a shard answers 1.9 KB per
cluster, so under 4 MiB up to about 2,200 clusters, and the gateway about 140 bytes per cluster
(its shards' entries): the layout holds about 30,000 clusters.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from modelplane.apis import API_VERSION
from modelplane.compose.shared.frontdoor import ClusterGateway
from modelplane.kube import objects
from modelplane.kube.names import dns_label
from modelplane.kube.objects import Obj

KIND = "InferenceGatewayShard"
SHARDS = 16
SHARD = "shard/"
"""A gateway's composition resource name for shard ``n``: ``shard/<n>``."""
GATEWAY_LABEL = "modelplane.ai/gateway"
"""On every shard: the InferenceGateway composing it (``kubectl get igs -l ...``)."""


def shard_of(cluster: str) -> int:
    return int(hashlib.sha256(cluster.encode()).hexdigest()[:8], 16) % SHARDS


def shard_name(gateway: str, n: int) -> str:
    return dns_label(gateway, "shard", str(n))


def target_entry(target: ClusterGateway) -> Obj:
    """What a shard reads of a cluster it dials."""
    return {
        "cluster": target.cluster,
        "address": target.address,
        "fleetHostname": target.fleet_hostname,
    }


def shard(gateway: str, n: int, host: ClusterGateway, targets: Iterable[Obj]) -> Obj:
    """Shard ``n`` of ``gateway``: everything its composer needs, so it requires nothing."""
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": shard_name(gateway, n), "labels": {GATEWAY_LABEL: gateway}},
        "spec": {
            "gatewayName": gateway,
            "host": {
                "clusterName": host.cluster,
                "providerConfigName": host.provider_config,
                "namespace": host.namespace,
            },
            "targets": sorted(targets, key=lambda t: str(t["cluster"])),
        },
    }


def observed_targets(observed: Mapping[str, Any]) -> dict[str, Obj]:
    """Every cluster the observed shards dial, with the entry each was composed with."""
    out: dict[str, Obj] = {}
    for key, obj in observed.items():
        if not key.startswith(SHARD):
            continue
        for entry in objects.spec(obj).get("targets") or ():
            if isinstance(entry, Mapping) and entry.get("cluster"):
                out[str(entry["cluster"])] = {k: str(v) for k, v in entry.items()}
    return out


def reached(shard: Mapping[str, Any] | None) -> set[str]:
    """The clusters an observed shard reports its hops to exist for (``status.reached``): each
    cluster's own evidence, so a cluster joining a shard, or one hop that never comes up, says
    nothing of the shard's other clusters."""
    names = objects.status(shard).get("reached") or ()
    return {str(n) for n in names if isinstance(n, str) and n}
