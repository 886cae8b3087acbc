"""The cache guard: an InferenceCluster is not deleted under the weights ModelCaches stage on it
(cache_guard.py), nor before a deleted cache's claim is gone."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.inferencecluster.cache_guard import (
    CACHE_GUARD,
    CACHES,
    claim_object_name,
)
from modelplane.compose.inferencecluster.composer import CLASSES, REPLICAS, compose_cluster
from modelplane.compose.modelcache.composer import compose_model_cache
from modelplane.composer import Inputs, Requirement, Result
from tests.compose.inferencecluster.support import H100, cluster, condition
from tests.compose.modelcache.test_modelcache import cache
from tests.compose.modelcache.test_modelcache import cluster as listed_cluster

Obj = dict[str, Any]


def staging(name: str = "weights", namespace: str = "ml", on: str = "east") -> Obj:
    """A ModelCache whose status lists ``on`` among the clusters it has objects on."""
    mc = cache(name, namespace=namespace)
    mc["status"]["clusters"] = [{"name": on, "phase": "Ready"}]
    return mc


def compose(
    caches: list[Obj] | None, observed: dict[str, Obj] | None = None, **required: list[Obj]
) -> Result:
    asked: dict[str, list[Obj]] = {CLASSES: [H100], REPLICAS: [], **required}
    if caches is not None:
        asked[CACHES] = caches
    result = compose_cluster(Inputs(composite=cluster(), required=asked, observed=observed or {}))
    assert result.fatal is None, result.fatal
    return result


def guarded_by(caches: list[Obj]) -> dict[str, Obj]:
    """What is observed once the guard for ``caches`` exists."""
    guard = compose(caches).resources[CACHE_GUARD].resource
    return {CACHE_GUARD: copy.deepcopy(guard)}


def claim_object(name: str = "weights", namespace: str = "ml") -> Obj:
    return {"metadata": {"name": claim_object_name(name, "east"), "namespace": namespace}}


def test_caches_are_read_in_every_namespace() -> None:
    requirement = compose([]).requirements[CACHES]
    assert requirement == Requirement("modelplane.ai/v1alpha1", "ModelCache")


def test_a_cluster_a_cache_stages_on_refuses_deletion_naming_the_cache() -> None:
    guard = compose([staging()]).resources[CACHE_GUARD].resource
    assert guard["kind"] == "ClusterUsage"
    assert guard["spec"]["of"]["resourceRef"] == {"name": "east"}
    assert "ml/weights" in guard["spec"]["reason"]


def test_a_cache_staging_on_another_cluster_holds_nothing() -> None:
    assert CACHE_GUARD not in compose([staging(on="west")]).resources


def test_in_use_says_the_caches_hold_the_cluster() -> None:
    in_use = condition(compose([staging()]), "InUse")
    assert (in_use.status, in_use.reason) == ("True", "ModelCachesStaged")
    assert "ml/weights" in in_use.message


def test_until_caches_are_read_the_guard_stands_as_observed() -> None:
    observed = guarded_by([staging()])
    result = compose(None, observed)
    assert result.resources[CACHE_GUARD].resource == observed[CACHE_GUARD]


def test_a_guarded_cache_missing_from_the_list_is_asked_for_by_name() -> None:
    result = compose([], guarded_by([staging()]))
    assert "guarded-cache/ml/weights" in result.requirements
    assert CACHE_GUARD in result.resources


def test_a_guarded_cache_found_by_name_still_staging_keeps_the_guard() -> None:
    result = compose([], guarded_by([staging()]), **{"guarded-cache/ml/weights": [staging()]})
    assert CACHE_GUARD in result.resources


def test_a_deleted_cache_holds_the_cluster_while_its_claim_object_exists() -> None:
    result = compose(
        [],
        guarded_by([staging()]),
        **{
            "guarded-cache/ml/weights": [],
            f"guarded-cache-claim/ml/{claim_object_name('weights', 'east')}": [claim_object()],
        },
    )
    assert CACHE_GUARD in result.resources


def test_a_deleted_cache_holds_the_cluster_until_its_claim_object_is_read() -> None:
    result = compose([], guarded_by([staging()]), **{"guarded-cache/ml/weights": []})
    assert f"guarded-cache-claim/ml/{claim_object_name('weights', 'east')}" in result.requirements
    assert CACHE_GUARD in result.resources


def test_the_guard_goes_once_the_cache_and_its_claim_object_are_gone() -> None:
    result = compose(
        [],
        guarded_by([staging()]),
        **{
            "guarded-cache/ml/weights": [],
            f"guarded-cache-claim/ml/{claim_object_name('weights', 'east')}": [],
        },
    )
    assert CACHE_GUARD not in result.resources


def test_a_cache_that_stopped_staging_here_holds_the_cluster_while_its_claim_object_exists() -> (
    None
):
    moved = staging(on="west")
    result = compose(
        [moved],
        guarded_by([staging()]),
        **{f"guarded-cache-claim/ml/{claim_object_name('weights', 'east')}": [claim_object()]},
    )
    assert CACHE_GUARD in result.resources


def test_the_claim_object_name_is_the_one_the_modelcache_composition_gives() -> None:
    mc = cache("weights", namespace="ml")
    composed = compose_model_cache(
        Inputs(composite=mc, required={"inference-clusters": [listed_cluster("east")]}, observed={})
    )
    claim = composed.resources["claim-east"].resource
    assert claim["metadata"]["name"] == claim_object_name("weights", "east")
