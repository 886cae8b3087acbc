"""The registry the function and render share: every composer this project ships, in one place."""

from __future__ import annotations

from modelplane.compose.inferenceclass.composer import compose_class
from modelplane.compose.inferencecluster.composer import REPLICAS as CLUSTER_REPLICAS
from modelplane.compose.inferencecluster.composer import compose_cluster
from modelplane.compose.inferencegateway.composer import CLUSTERS as GATEWAY_CLUSTERS
from modelplane.compose.inferencegateway.composer import compose_gateway
from modelplane.compose.inferencegateway.shard import compose_shard
from modelplane.compose.inferencegateway.shards import KIND as GATEWAY_SHARD
from modelplane.compose.modelcache.composer import compose_model_cache
from modelplane.compose.modeldeployment.composer import CLUSTERS, REPLICAS, compose_deployment
from modelplane.compose.modelendpoint.composer import CLUSTERS as ENDPOINT_CLUSTERS
from modelplane.compose.modelendpoint.composer import compose_endpoint
from modelplane.compose.modelreplica.composer import (
    API_VERSION,
    CACHE_REQUIREMENT,
    CLUSTER_REQUIREMENT,
    LAZY_COMPOSITE,
)
from modelplane.compose.modelreplica.composer import compose as compose_model_replica
from modelplane.compose.modelservice.composer import CLUSTERS as SERVICE_CLUSTERS
from modelplane.compose.modelservice.composer import (
    compose_service,
    endpoints_requirement,
    replicas_requirement,
)
from modelplane.composer import Registry

SERVICE_ENTRIES = 16
"""The most entries a ModelService's ``spec.endpoints`` holds (its XRD's maxItems)."""


def default_registry() -> Registry:
    """Every composer this project ships, keyed by composite API group and kind."""

    registry = Registry()
    # A replica reads a handful of fields of its cluster (whose status lists every pool).
    registry.register(
        API_VERSION,
        "ModelReplica",
        compose_model_replica,
        lazy=(CLUSTER_REQUIREMENT, CACHE_REQUIREMENT),
        lazy_composite=LAZY_COMPOSITE,
    )
    # A cluster reads a few fields of the replicas on it: their names (its deletion guard) and
    # what they claim (the allocation it publishes).
    registry.register(API_VERSION, "InferenceCluster", compose_cluster, lazy=(CLUSTER_REPLICAS,))
    registry.register(API_VERSION, "InferenceClass", compose_class)
    registry.register(API_VERSION, "ModelCache", compose_model_cache)
    # The scheduler reads a few fields of every cluster of the fleet and of its own replicas:
    # views spare converting thousands of whole objects on every reconcile.
    registry.register(API_VERSION, "ModelDeployment", compose_deployment, lazy=(CLUSTERS, REPLICAS))
    # The front door: gateways on clusters, services routed through them, their endpoints. Each
    # lists every cluster of the fleet and reads a few fields of its status.
    registry.register(API_VERSION, "InferenceGateway", compose_gateway, lazy=(GATEWAY_CLUSTERS,))
    # Its hops, split in shards so no response grows with the whole fleet; each requires nothing.
    registry.register(API_VERSION, GATEWAY_SHARD, compose_shard)
    # A service also lists, per entry, the endpoints and replicas its selector matches: one per
    # cluster for a model deployed fleet-wide.
    entries = range(SERVICE_ENTRIES)
    selected = [f(i) for i in entries for f in (endpoints_requirement, replicas_requirement)]
    registry.register(
        API_VERSION, "ModelService", compose_service, lazy=(SERVICE_CLUSTERS, *selected)
    )
    registry.register(API_VERSION, "ModelEndpoint", compose_endpoint, lazy=(ENDPOINT_CLUSTERS,))
    return registry
