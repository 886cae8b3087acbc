"""A ModelCache under missing or empty InferenceClusters, through the real FunctionRunner (observed
objects arrive as read-only views): the claim holding the weights, the hydration Job and the
Namespace are kept, and a condition says why."""

from __future__ import annotations

from typing import Any

from modelplane.compose.modelcache.composer import CLUSTERS
from tests.compose.modelcache.test_modelcache import commit_of
from tests.compose.through import run, settled

Obj = dict[str, Any]


def cache() -> Obj:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelCache",
        "metadata": {"name": "weights", "namespace": "ml"},
        "spec": {"source": "HuggingFace", "huggingFace": {"repo": "Qwen/Qwen3-8B", "sizeGiB": 20}},
        "status": {"resolved": {"revision": "main", "commit": commit_of("main")}},
    }


def cluster(name: str, *, provider: bool = True) -> Obj:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": name},
        "spec": {"stack": "Standard"},
        "status": (
            {"providerConfigRef": {"name": f"pc-{name}"}, "cache": {"storageClassName": "rwx"}}
            if provider
            else {"cache": {"storageClassName": "rwx"}}
        ),
    }


def kinds(resources: dict[str, Obj]) -> list[str]:
    return sorted(r["spec"]["forProvider"]["manifest"]["kind"] for r in resources.values())


def test_a_cluster_without_a_provider_config_keeps_its_claim_job_and_namespace() -> None:
    observed = settled(cache(), {CLUSTERS: [cluster("a"), cluster("b")]})
    rsp = run(cache(), observed, {CLUSTERS: [cluster("a"), cluster("b", provider=False)]})
    assert rsp.fatal is None
    assert set(rsp.resources) == set(observed)
    kept = {k: r for k, r in rsp.resources.items() if k.endswith("-b")}
    assert kinds(kept) == ["Job", "Namespace", "PersistentVolumeClaim"]
    for key, obj in kept.items():
        assert obj["spec"] == observed[key]["spec"]
        assert "status" not in obj
    assert (
        "b: Pending (the cluster publishes no status.providerConfigRef yet)"
        in (rsp.condition("Hydrated")[2])
    )


def test_no_cluster_listed_keeps_every_object_unchanged_and_says_why() -> None:
    observed = settled(cache(), {CLUSTERS: [cluster("a"), cluster("b")]})
    rsp = run(cache(), observed, {CLUSTERS: []})
    assert rsp.fatal is None
    assert set(rsp.resources) == set(observed)
    for key, obj in observed.items():
        assert rsp.resources[key]["spec"] == obj["spec"]
        assert rsp.ready[key] == "READY_TRUE"
    assert rsp.condition("Hydrated") == (
        "Unknown",
        "ClustersNotListed",
        "no InferenceCluster is listed (all deleted, or the list failed or lags): "
        "the 6 composed objects on a, b are kept as they are",
    )


def test_no_cluster_listed_and_nothing_composed_is_no_matching_cluster() -> None:
    rsp = run(cache(), {}, {CLUSTERS: []})
    assert rsp.resources == {}
    assert rsp.condition("Hydrated")[:2] == ("False", "NoMatchingCluster")
