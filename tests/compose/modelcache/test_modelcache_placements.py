"""A ModelCache without a clusterSelector stages its weights only where they can run: on the
clusters where a deployment referencing it could be placed, or a replica still mounts it."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.modelcache.composer import (
    CLASSES,
    CLUSTERS,
    DEPLOYMENTS,
    REPLICAS,
    compose_model_cache,
)
from modelplane.composer import Inputs, Result
from tests.compose.modelcache.test_modelcache import cache
from tests.compose.through import Response, run
from tests.fleet.builders import (
    declared_cluster,
    gpu_class,
    llm_deployment,
    memory_at_least,
    standalone,
)

Obj = dict[str, Any]

H100 = gpu_class("h100", memory="80Gi")
L4 = gpu_class("l4", count=1, product="L4", memory="24Gi")


def reachable(name: str, class_name: str) -> Obj:
    c = declared_cluster(name, [("p", class_name, 2)])
    c["status"] = {"providerConfigRef": {"name": f"pc-{name}"}}
    return c


FLEET = [reachable("big", "h100"), reachable("small", "l4")]


def big_model(ref: str = "weights", namespace: str = "ml") -> Obj:
    md = llm_deployment(
        namespace=namespace, engines=[standalone(gpus=1, selectors=[memory_at_least("64Gi")])]
    )
    md["spec"]["template"]["spec"]["modelCacheRef"] = {"name": ref}
    return md


def mounting(on: str, ref: str = "weights") -> Obj:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": f"r-{on}", "namespace": "ml"},
        "spec": {"clusterName": on, "modelCacheRef": {"name": ref}, "engines": []},
    }


def compose(mc: Obj, deployments: list[Obj], replicas: list[Obj] | None = None) -> Result:
    required = {
        CLUSTERS: FLEET,
        DEPLOYMENTS: deployments,
        REPLICAS: replicas or [],
        CLASSES: [H100, L4],
    }
    return compose_model_cache(Inputs(composite=mc, required=required, observed={}))


def staged_on(result: Result) -> list[str]:
    return [c["name"] for c in result.status["clusters"]]


def test_weights_are_staged_only_where_a_deployment_referencing_them_could_run() -> None:
    assert staged_on(compose(cache(), [big_model()])) == ["big"]


def test_a_deployment_referencing_another_cache_changes_nothing() -> None:
    assert staged_on(compose(cache(), [big_model(ref="other")])) == ["big", "small"]


def test_weights_stay_where_a_replica_still_mounts_them() -> None:
    assert staged_on(compose(cache(), [big_model()], [mounting("small")])) == ["big", "small"]


def test_a_cache_nothing_references_yet_is_staged_ahead_on_every_cluster() -> None:
    assert staged_on(compose(cache(), [])) == ["big", "small"]


def test_a_cluster_selector_decides_alone() -> None:
    mc = cache(selector={})
    assert staged_on(compose(mc, [big_model()])) == ["big", "small"]


def test_the_cache_asks_for_the_deployments_and_replicas_of_its_namespace() -> None:
    result = compose(cache(), [])
    assert result.requirements[DEPLOYMENTS].namespace == "ml"
    assert result.requirements[REPLICAS].namespace == "ml"
    assert result.requirements[CLASSES].kind == "InferenceClass"


def test_until_the_lists_are_read_every_selected_cluster_keeps_its_weights() -> None:
    result = compose_model_cache(Inputs(composite=cache(), required={CLUSTERS: FLEET}, observed={}))
    assert staged_on(result) == ["big", "small"]


# --- a class the list does not hold is asked for by name ---------------------------------------


def through(
    mc: Obj, observed: dict[str, Obj], classes: list[Obj], **by_name: list[Obj]
) -> Response:
    required = {
        CLUSTERS: FLEET,
        DEPLOYMENTS: [big_model()],
        REPLICAS: [],
        CLASSES: classes,
        **{f"class/{name}": found for name, found in by_name.items()},
    }
    return run(mc, observed, required)


def staged_through() -> dict[str, Obj]:
    """What the cache composed with every class listed: its weights on big only."""
    rsp = through(cache(), {}, [H100, L4])
    assert rsp.fatal is None, rsp.fatal
    assert {c["name"] for c in rsp.status["clusters"]} == {"big"}
    return copy.deepcopy(rsp.resources)


def test_a_class_missing_from_the_list_is_asked_for_by_name_and_the_weights_stay() -> None:
    observed = staged_through()
    rsp = through(cache(), observed, [L4])
    assert rsp.by_name["class/h100"] == ("InferenceClass", "h100", None)
    assert set(observed) <= set(rsp.resources)


def test_a_class_found_by_name_is_read_as_listed() -> None:
    observed = staged_through()
    rsp = through(cache(), observed, [L4], h100=[H100])
    assert set(rsp.resources) == set(observed)
    assert {c["name"] for c in rsp.status["clusters"]} == {"big"}


def test_a_class_gone_by_name_takes_the_weights_off_the_clusters_it_alone_made_usable() -> None:
    observed = staged_through()
    rsp = through(cache(), observed, [L4], h100=[])
    assert not [k for k in rsp.resources if k.endswith("-big")]
