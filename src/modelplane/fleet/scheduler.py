"""The fleet scheduler: places every replica of a ModelDeployment that can be placed."""

from __future__ import annotations

from typing import Any

from modelplane.fleet.placement import Schedule


def schedule(
    deployment: dict[str, Any],
    clusters: list[dict[str, Any]],
    classes: list[dict[str, Any]],
    replicas: list[dict[str, Any]],
) -> Schedule:
    """Place ``deployment``'s replicas on ``clusters`` (InferenceClusters) whose pools' ``classes``
    (InferenceClasses) fit, charging ``replicas`` (every ModelReplica of every namespace)."""
    desired = int(deployment.get("spec", {}).get("replicas", 0))
    return Schedule(desired=desired, placements=(), shortfall=("scheduler not implemented yet",))
