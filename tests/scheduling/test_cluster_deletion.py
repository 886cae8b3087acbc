"""Deleting an InferenceCluster that serves: the replica guard refuses the delete, Crossplane
records the attempt on the cluster (``usage.crossplane.io/deletion-attempt-with-policy``, read in
tests/conformance/test_crossplane_usage_replay.py), and the scheduler empties the cluster as a
drain would, so the delete the guard replays finds nothing running."""

from __future__ import annotations

from typing import Any

from modelplane import labels
from modelplane.scheduling import placement as pl
from modelplane.scheduling.scheduler import schedule
from tests.fleet.builders import declared_cluster, gpu_class, llm_deployment, stamp, where

H100 = gpu_class("h100")


def run(md: dict[str, Any], clusters: list[dict[str, Any]], replicas: Any = ()) -> pl.Schedule:
    return schedule(md, clusters, [H100], list(replicas))


def deletion_attempted(cluster: dict[str, Any]) -> dict[str, Any]:
    """The cluster as the Usage webhook leaves it after refusing its delete."""
    cluster["metadata"].setdefault("annotations", {})[labels.DELETION_ATTEMPT] = "Background"
    return cluster


def two_clusters() -> list[dict[str, Any]]:
    return [declared_cluster("a", [("p", "h100", 1)]), declared_cluster("b", [("p", "h100", 1)])]


def test_a_cluster_whose_delete_was_refused_loses_its_replicas_to_another() -> None:
    fleet = two_clusters()
    md = llm_deployment()
    existing = [stamp(md, p) for p in run(md, fleet).placements]
    assert where(run(md, fleet, existing)) == [(0, "a")]
    result = run(md, [deletion_attempted(fleet[0]), fleet[1]], existing)
    assert where(result) == [(0, "b")]
    [removed] = result.removed
    assert (removed.cluster, removed.reason) == (
        "a",
        "cluster a: deletion requested (its delete is replayed once its replicas are gone)",
    )


def test_nothing_new_is_placed_on_a_cluster_whose_delete_was_refused() -> None:
    fleet = two_clusters()
    result = run(llm_deployment(replicas=1), [deletion_attempted(fleet[0]), fleet[1]])
    assert where(result) == [(0, "b")]


def test_a_terminating_cluster_is_emptied_too() -> None:
    fleet = two_clusters()
    md = llm_deployment()
    existing = [stamp(md, p) for p in run(md, fleet).placements]
    fleet[0]["metadata"]["deletionTimestamp"] = "2026-12-05T00:00:00Z"
    assert where(run(md, fleet, existing)) == [(0, "b")]


def test_a_cluster_without_the_annotation_keeps_its_replicas() -> None:
    fleet = two_clusters()
    md = llm_deployment()
    existing = [stamp(md, p) for p in run(md, fleet).placements]
    fleet[0]["metadata"]["annotations"] = {"unrelated": "x"}
    result = run(md, fleet, existing)
    assert [p.existing for p in result.placements] == [existing[0]["metadata"]["name"]]
    assert result.removed == ()
