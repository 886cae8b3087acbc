"""What a cluster's claim holds, and the evidence an old revision needs before it is pruned."""

from __future__ import annotations

from typing import Any

from modelplane.compose.modelcache.revisions import (
    PRUNE_AFTER,
    Holding,
    counted,
    in_use,
    prune_paths,
    recorded,
)
from modelplane.compose.shared.cache import (
    UNVERSIONED,
    hydrated_marker,
    revision_marker,
    revision_path,
)
from modelplane.labels import MODEL_REVISION
from tests.fleet.builders import model_cache, with_condition

Obj = dict[str, Any]


def cache(revision: str = "v2", **entry: Any) -> Obj:
    out = model_cache("weights")
    out["spec"]["huggingFace"]["revision"] = revision
    if entry:
        out["status"] = {"clusters": [{"name": "a", **entry}]}
    return out


def replica(revision: str | None, serving: str = "True", cluster: str = "a") -> Obj:
    metadata: Obj = {"name": f"r-{revision}", "namespace": "ml"}
    if revision is not None:
        metadata["annotations"] = {MODEL_REVISION: revision}
    obj = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": metadata,
        "spec": {"clusterName": cluster, "modelCacheRef": {"name": "weights"}},
    }
    return with_condition(obj, "ModelServing", serving)


def test_an_entry_from_before_revision_paths_holds_the_cache_s_revision_at_the_root() -> None:
    assert recorded(cache("v1", phase="Ready", hydratedBy="x"), "a") == Holding(unversioned="v1")


def test_the_revisions_the_replicas_on_a_cluster_read() -> None:
    mc = cache(phase="Ready", revisions=["v2", "v1"])
    replicas = [replica("v1"), replica(None), replica("v3", cluster="b")]
    assert in_use(mc, "a", replicas) == {"v1", "v2"}


def test_a_replica_not_serving_leaves_what_is_used_unknown() -> None:
    mc = cache(phase="Ready", revisions=["v2", "v1"])
    assert in_use(mc, "a", [replica("v2"), replica("v2", serving="False")]) is None


def test_replicas_not_read_leave_what_is_used_unknown() -> None:
    assert in_use(cache(), "a", None) is None


def test_an_unused_revision_counts_up_and_is_pruned_at_the_limit() -> None:
    held = Holding(revisions=("v2", "v1"))
    for n in range(1, PRUNE_AFTER):
        held = counted(held, "v2", set())
        assert dict(held.unused) == {"v1": n}
    held = counted(held, "v2", set())
    assert held == Holding(revisions=("v2",), pruning=("v1",))


def test_a_revision_seen_in_use_starts_counting_again() -> None:
    held = counted(Holding(revisions=("v2", "v1")), "v2", set())
    assert counted(held, "v2", {"v1"}).unused == ()


def test_no_evidence_resets_the_count() -> None:
    held = counted(Holding(revisions=("v2", "v1")), "v2", set())
    assert counted(held, "v2", None).unused == ()


def test_nothing_is_pruned_before_the_current_revision_is_hydrated_there() -> None:
    held = Holding(revisions=("v1",), unused=(("v1", PRUNE_AFTER),))
    assert counted(held, "v2", set()) == Holding(revisions=("v1",))


def test_the_weights_at_the_root_are_pruned_like_a_revision() -> None:
    held = Holding(revisions=("v2",), unversioned="v1")
    for _ in range(PRUNE_AFTER):
        held = counted(held, "v2", {"v2"})
    assert held == Holding(revisions=("v2",), pruning=(UNVERSIONED,))


def test_a_prune_deletes_every_marker_before_any_weights() -> None:
    mc = cache()
    assert prune_paths(mc, ["v1", UNVERSIONED]) == [
        revision_marker(mc, "v1"),
        hydrated_marker(mc),
        revision_path(mc, "v1"),
        "/mnt/models/models--Qwen--Qwen3-8B",
    ]
