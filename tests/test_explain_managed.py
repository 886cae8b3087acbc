"""`modelplane explain` with managed clusters in the fleet: it places as `modelplane render`
does, because it asks the scheduler what render asked it (issue #40, point 1)."""

from __future__ import annotations

from modelplane.explain import explain
from tests.explain_fleets import deployment, documents, eks, existing, explained, rendered


def test_a_cached_model_may_go_where_a_managed_cluster_composes_its_own_storage_class() -> None:
    # EKS clusters name no spec.cluster.existing.cache: their composition publishes the EFS
    # class it creates (status.cache), which is what render's scheduler reads.
    docs = documents(existing(nodes=0), eks(), deployment("llama", 1, cached=True))
    out = explain(docs)
    assert "spec.cluster.existing.cache.storageClassName" not in out
    assert "ModelDeployment/ml/llama: 1 of 1 replicas placed" in out


def test_an_existing_cluster_without_a_cache_class_leaves_a_cached_model_to_eks() -> None:
    docs = documents(existing(cache_class=None), eks(), deployment("llama", 2, cached=True))
    assert (
        explained(docs)
        == rendered(docs)
        == {"ml/llama": [(0, "eks-west", ("h100",)), (1, "eks-west", ("h100",))]}
    )


def test_a_cached_model_fills_the_existing_cluster_then_grows_the_eks_pool() -> None:
    docs = documents(existing(), eks(), deployment("llama", 40, cached=True))
    placed = explained(docs)
    assert placed == rendered(docs)
    assert len(placed["ml/llama"]) == 12


def test_a_second_deployment_goes_where_render_grows_the_eks_pool() -> None:
    # The first deployment's replica lands on the EKS node there is; render's reconciles place
    # the second beside it, growing the pool, before the cluster publishes the first.
    docs = documents(existing(), eks(low=1), deployment("a", 1, gpus=4), deployment("b", 1))
    assert (
        explained(docs)
        == rendered(docs)
        == {
            "ml/a": [(0, "eks-west", ("h100",))],
            "ml/b": [(0, "eks-west", ("h100",))],
        }
    )


def test_a_deployment_a_cache_holds_back_is_placed_after_the_others_as_render_does() -> None:
    docs = documents(existing(), eks(), deployment("a", 4), deployment("b", 6, cached=True))
    assert explained(docs) == rendered(docs)
