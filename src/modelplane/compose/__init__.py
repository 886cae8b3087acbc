"""Composers, one per composite kind, and the registry the function and render share."""

from __future__ import annotations

from modelplane.compose.modelreplica.composer import API_VERSION as MODELPLANE_API
from modelplane.compose.modelreplica.composer import compose as compose_model_replica
from modelplane.composer import Registry


def default_registry() -> Registry:
    """Every composer this project ships, keyed by composite API group and kind."""
    registry = Registry()
    registry.register(MODELPLANE_API, "ModelReplica", compose_model_replica)
    return registry
