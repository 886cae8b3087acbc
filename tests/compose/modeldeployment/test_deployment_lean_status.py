"""A deployment's conditions are sent back with it on every reconcile (its own, and every
ModelCache's that requires it): on a large fleet they name a few clusters, not all of them."""

from __future__ import annotations

from typing import Any

from tests.compose.through import composed_deployment
from tests.fleet.builders import H100, deployment, engine, inference_cluster, member

Obj = dict[str, Any]


def scheduled(replicas: int, clusters: int) -> tuple[str, str, int]:
    """ReplicasScheduled's reason and message, and how many replicas were composed, for
    ``replicas`` whole-node replicas over ``clusters`` one-node clusters."""
    fleet = [
        inference_cluster(f"c{i:02}", {"h100": ("h100", 1)}, classes=[H100])
        for i in range(clusters)
    ]
    md = deployment("qwen", engine("main", member(gpus=8)), replicas=replicas)
    result = composed_deployment(md, fleet, unrouted=True)
    [cond] = [c for c in result.conditions if c.type == "ReplicasScheduled"]
    placed = sum(1 for d in result.resources.values() if d.resource["kind"] == "ModelReplica")
    return cond.reason, cond.message, placed


def test_replicas_placed_over_many_clusters_name_ten_and_count_the_rest() -> None:
    reason, message, placed = scheduled(replicas=25, clusters=25)
    assert (reason, placed) == ("AllReplicasScheduled", 25)
    assert message.startswith("25 of 25 replicas placed: c00 (")
    assert message.count("(") == 10
    assert message.endswith(" and 15 more clusters")


def test_replicas_placed_on_ten_clusters_are_all_named() -> None:
    _, message, _ = scheduled(replicas=10, clusters=10)
    assert message.count("(") == 10
    assert "more clusters" not in message
