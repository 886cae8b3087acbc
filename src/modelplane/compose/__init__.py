"""Composers, one per composite kind, and the registry the function and render share."""

from __future__ import annotations

from modelplane.composer import Registry


def default_registry() -> Registry:
    """Every composer this project ships, keyed by composite API group and kind."""
    registry = Registry()
    return registry
