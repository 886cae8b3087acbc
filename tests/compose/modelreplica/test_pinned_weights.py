"""The weights a replica's engines read: the revision it is pinned to, at that revision's own
path, offline; unpinned, what its pods read before revision paths while the claim holds it."""

from __future__ import annotations

from typing import Any

from modelplane.compose.shared.cache import hydrated_marker, revision_marker, revision_path
from modelplane.labels import MODEL_REVISION

from .support import container, model_cache, pod_specs, replica, run, workload

Obj = dict[str, Any]


def cache(revision: str = "v2", **entry: Any) -> Obj:
    out = model_cache()
    out["spec"]["huggingFace"]["revision"] = revision
    if entry:
        out["status"] = {"clusters": [{"name": "c1", **entry}]}
    return out


def pinned(revision: str | None) -> Obj:
    out = replica(cache="weights")
    if revision is not None:
        out["metadata"]["annotations"] = {MODEL_REVISION: revision}
    return out


def engine_pod(composite: Obj, mc: Obj) -> Obj:
    [pod] = pod_specs(workload(run(composite, cache=mc))).values()
    return pod


def env(pod: Obj) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container(pod)["env"]}


def test_a_pinned_replica_reads_its_revision_s_path_offline_whatever_the_cache_s_revision() -> None:
    mc = cache("v2", phase="Ready", revisions=["v2", "v1"])
    pod = engine_pod(pinned("v1"), mc)
    assert env(pod) == {
        "HF_HUB_CACHE": revision_path(mc, "v1"),
        "MODELPLANE_MODEL_CACHE": revision_path(mc, "v1"),
        "HF_HUB_OFFLINE": "1",
        "MODELPLANE_MODEL_REVISION": "v1",
    }
    assert pod["initContainers"][0]["command"][-1] == revision_marker(mc, "v1")


def test_two_revisions_have_distinct_paths_and_markers() -> None:
    mc = cache()
    assert revision_path(mc, "v1") != revision_path(mc, "v2")
    assert revision_marker(mc, "v1") != revision_marker(mc, "v2")
    assert revision_path(mc, "v1").startswith("/mnt/models/revisions/v1-")


def test_an_unpinned_replica_keeps_the_weights_at_the_root_its_pods_read_before() -> None:
    mc = cache("v1", phase="Ready", hydratedBy="x")  # an entry from before revision paths
    pod = engine_pod(pinned(None), mc)
    assert env(pod) == {
        "HF_HUB_CACHE": "/mnt/models",
        "MODELPLANE_MODEL_CACHE": "/mnt/models",
        "HF_HUB_OFFLINE": "1",
    }
    assert pod["initContainers"][0]["command"][-1] == hydrated_marker(mc)


def test_an_unpinned_replica_reads_the_cache_s_revision_once_the_root_is_pruned() -> None:
    mc = cache("v2", phase="Ready", revisions=["v2"])
    assert env(engine_pod(pinned(None), mc))["HF_HUB_CACHE"] == revision_path(mc, "v2")


def serving_message(mc: Obj, revision: str) -> str:
    [serving] = [c for c in run(pinned(revision), cache=mc).conditions if c.type == "ModelServing"]
    return serving.message


def test_a_replica_waiting_for_its_revision_says_so() -> None:
    mc = cache("v2", phase="Ready", revisions=["v1"])
    assert serving_message(mc, "v2").endswith(
        "; the pods wait for revision v2 of ModelCache weights on c1"
    )


def test_a_replica_on_a_hydrated_revision_waits_for_nothing_while_another_hydrates() -> None:
    mc = cache("v2", phase="Hydrating", message="downloading", revisions=["v1"])
    assert "ModelCache" not in serving_message(mc, "v1")
