"""Composers, one per composite kind, and the registry the function and render share."""

from __future__ import annotations

from modelplane.composer import Registry

FLEET_API_VERSION = "modelplane.ai/v1alpha1"


def default_registry() -> Registry:
    """Every composer this project ships, keyed by composite API group and kind."""
    from modelplane.fleet.cluster import compose_cluster
    from modelplane.fleet.deployment import compose_deployment
    from modelplane.fleet.inferenceclass import compose_class

    registry = Registry()
    registry.register(FLEET_API_VERSION, "InferenceCluster", compose_cluster)
    registry.register(FLEET_API_VERSION, "InferenceClass", compose_class)
    registry.register(FLEET_API_VERSION, "ModelDeployment", compose_deployment)
    return registry
