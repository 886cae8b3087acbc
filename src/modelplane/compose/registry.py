"""The registry the function and render share: every composer this project ships, in one place."""

from __future__ import annotations

from modelplane.apis import API_VERSION
from modelplane.compose.inferenceclass.composer import compose_class
from modelplane.compose.inferencecluster import composer as cluster
from modelplane.compose.inferencecluster.allocation import ADMITTED_REPLICA
from modelplane.compose.inferencecluster.waves import PREVIOUS_WAVE
from modelplane.compose.inferencegateway import callers
from modelplane.compose.inferencegateway import composer as gateway
from modelplane.compose.inferencegateway.shard import compose_shard
from modelplane.compose.inferencegateway.shards import KIND as GATEWAY_SHARD
from modelplane.compose.modelcache import composer as cache
from modelplane.compose.modeldeployment import autoscaler, drain, footprint
from modelplane.compose.modeldeployment import composer as deployment
from modelplane.compose.modelendpoint import composer as endpoint
from modelplane.compose.modelreplica.composer import (
    CACHE_REQUIREMENT,
    CLUSTER_REQUIREMENT,
    LAZY_COMPOSITE,
    compose_replica,
)
from modelplane.compose.modelservice import callers as service_callers
from modelplane.compose.modelservice import composer as service
from modelplane.compose.modelservice import usage as service_usage
from modelplane.compose.shared.metricsconfig import ENVIRONMENT_CONFIG_API
from modelplane.compose.shared.remote import OBJECT_API_VERSION
from modelplane.compose.shared.routed import USAGE_API_VERSION
from modelplane.composer import Registry

SERVICE_ENTRIES = 16
"""The most entries a ModelService's ``spec.endpoints`` holds (its XRD's maxItems)."""

# What each requirement asks for: every item answering it is read as that kind (an item of
# another kind, or of none, is a Fatal naming the requirement and the item), never against the
# schema of whatever kind the item claims to be.
CLUSTER = (API_VERSION, "InferenceCluster")
CLASS = (API_VERSION, "InferenceClass")
REPLICA = (API_VERSION, "ModelReplica")
GATEWAY = (API_VERSION, "InferenceGateway")
DEPLOYMENT = (API_VERSION, "ModelDeployment")
CACHE = (API_VERSION, "ModelCache")
ENDPOINT = (API_VERSION, "ModelEndpoint")
SERVICE = (API_VERSION, "ModelService")
OBJECT = (OBJECT_API_VERSION, "Object")
USAGE = (USAGE_API_VERSION, "Usage")
ENVIRONMENT_CONFIG = (ENVIRONMENT_CONFIG_API, "EnvironmentConfig")
HPA = ("autoscaling/v2", "HorizontalPodAutoscaler")


def default_registry() -> Registry:
    """Every composer this project ships, keyed by composite API group and kind."""

    registry = Registry()
    # A replica reads a handful of fields of its cluster (whose status lists every pool).
    registry.register(
        API_VERSION,
        "ModelReplica",
        compose_replica,
        lazy=(CLUSTER_REQUIREMENT, CACHE_REQUIREMENT),
        lazy_composite=LAZY_COMPOSITE,
        requires={CLUSTER_REQUIREMENT: CLUSTER, CACHE_REQUIREMENT: CACHE},
    )
    # A cluster reads a few fields of the replicas on it: their names (its deletion guard) and
    # what they claim (the allocation it publishes).
    registry.register(
        API_VERSION,
        "InferenceCluster",
        cluster.compose_cluster,
        lazy=(cluster.REPLICAS,),
        requires={
            cluster.CLASSES: CLASS,
            cluster.CLASS_BY_NAME: CLASS,
            cluster.REPLICAS: REPLICA,
            cluster.GUARDED_REPLICA: REPLICA,
            ADMITTED_REPLICA: REPLICA,
            cluster.GATEWAYS: GATEWAY,
            cluster.GUARDED_GATEWAY: GATEWAY,
            PREVIOUS_WAVE: CLUSTER,
        },
    )
    registry.register(API_VERSION, "InferenceClass", compose_class)
    registry.register(
        API_VERSION,
        "ModelCache",
        cache.compose_model_cache,
        requires={
            cache.CLUSTERS: CLUSTER,
            cache.BY_NAME: CLUSTER,
            cache.CLASSES: CLASS,
            cache.CLASS_BY_NAME: CLASS,
            cache.DEPLOYMENTS: DEPLOYMENT,
            cache.REPLICAS: REPLICA,
        },
    )
    # The scheduler reads a few fields of every cluster of the fleet and of its own replicas:
    # views spare converting thousands of whole objects on every reconcile.
    registry.register(
        API_VERSION,
        "ModelDeployment",
        deployment.compose_deployment,
        lazy=(deployment.CLUSTERS, deployment.REPLICAS),
        requires={
            deployment.CLUSTERS: CLUSTER,
            deployment.CLUSTER_BY_NAME: CLUSTER,
            deployment.CLASSES: CLASS,
            deployment.CLASS_BY_NAME: CLASS,
            deployment.REPLICAS: REPLICA,
            footprint.CACHE: CACHE,
            drain.ROUTES: OBJECT,
            drain.ROUTE_BY_NAME: OBJECT,
            drain.HOLDS: USAGE,
            autoscaler.METRICS: ENVIRONMENT_CONFIG,
            autoscaler.HPA: HPA,
            autoscaler.SERVICES: SERVICE,
        },
    )
    # The front door: gateways on clusters, services routed through them, their endpoints. Each
    # lists every cluster of the fleet and reads a few fields of its status.
    registry.register(
        API_VERSION,
        "InferenceGateway",
        gateway.compose_gateway,
        lazy=(gateway.CLUSTERS,),
        requires={
            gateway.CLUSTERS: CLUSTER,
            gateway.CLUSTER_BY_NAME: CLUSTER,
            callers.CALLERS: callers.SECRET,
            callers.CALLER_BY_NAME: callers.SECRET,
        },
    )
    # Its hops, split in shards so no response grows with the whole fleet; each requires nothing.
    registry.register(API_VERSION, GATEWAY_SHARD, compose_shard)
    # A service also lists, per entry, the endpoints and replicas its selector matches (one per
    # cluster for a model deployed fleet-wide), and its namespace's deployments (one asleep has
    # neither).
    entries = range(SERVICE_ENTRIES)
    selected = {service.endpoints_requirement(i): ENDPOINT for i in entries}
    selected |= {service.replicas_requirement(i): REPLICA for i in entries}
    registry.register(
        API_VERSION,
        "ModelService",
        service.compose_service,
        lazy=(service.CLUSTERS, *selected),
        requires={
            service.GATEWAYS: GATEWAY,
            service.GATEWAY_BY_NAME: GATEWAY,
            service.CLUSTERS: CLUSTER,
            service.BY_NAME: ENDPOINT,
            service.DEPLOYMENTS: DEPLOYMENT,
            service_callers.SECRETS: callers.SECRET,
            service_usage.CONFIG: ENVIRONMENT_CONFIG,
            service_usage.API: (service_usage.CRD_API_VERSION, "CustomResourceDefinition"),
            **selected,
        },
    )
    registry.register(
        API_VERSION,
        "ModelEndpoint",
        endpoint.compose_endpoint,
        lazy=(endpoint.CLUSTERS,),
        requires={
            endpoint.CLUSTER: CLUSTER,
            endpoint.CLUSTERS: CLUSTER,
            endpoint.GATEWAYS: GATEWAY,
            endpoint.GATEWAY_BY_NAME: GATEWAY,
        },
    )
    return registry
