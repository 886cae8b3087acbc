"""A deployment that mounts a ModelCache places replicas only where that cache stages the
weights, through the real FunctionRunner: it requires the cache, waits for it before placing
anything new, and never removes a running replica because the cache is unread or gone."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.compose.modeldeployment.composer import CLASSES, CLUSTERS, REPLICAS
from modelplane.compose.modeldeployment.footprint import CACHE
from modelplane.compose.registry import default_registry
from modelplane.compose.shared.cache import stages_on
from modelplane.function import FunctionRunner
from tests.compose.through import Response, reconcile_deployment, request
from tests.fleet.builders import (
    H100,
    deployment,
    engine,
    inference_cluster,
    member,
    model_cache,
    serving,
)
from tests.properties import examples

Obj = dict[str, Any]
WHOLE_NODE = engine("main", member(gpus=8))
UNREAD = None


def cached(replicas: int = 1, selector: dict[str, str] | None = None, cache: str = "qwen") -> Obj:
    md = deployment("qwen", WHOLE_NODE, replicas=replicas, selector=selector)
    md["spec"]["template"]["spec"]["modelCacheRef"] = {"name": cache}
    return md


def cluster(name: str, **labels: str) -> Obj:
    """A one-node cluster that can stage a model cache (it names a ReadWriteMany class)."""
    ic = inference_cluster(name, {"p": ("h100", 1)}, labels=labels, classes=[H100])
    ic["status"]["cache"] = {"storageClassName": "rwx"}
    return ic


def replicas(rsp: Response) -> dict[str, Obj]:
    return {k: r for k, r in rsp.resources.items() if r.get("kind") == "ModelReplica"}


def clusters_of(rsp: Response) -> list[str]:
    return sorted(r["spec"]["clusterName"] for r in replicas(rsp).values())


def observed_serving(rsp: Response) -> dict[str, Obj]:
    """The replicas of ``rsp`` as observed serving on the next reconcile."""
    return {k: serving(r) for k, r in replicas(rsp).items()}


def test_the_deployment_requires_the_cache_it_references_by_name_in_its_namespace() -> None:
    rsp = FunctionRunner(default_registry()).run(
        request(cached(), {}, {CLUSTERS: [cluster("a")], CLASSES: [H100], REPLICAS: []})
    )
    selector = rsp.requirements.resources[CACHE]
    assert selector.api_version == "modelplane.ai/v1alpha1"
    assert selector.kind == "ModelCache"
    assert selector.match_name == "qwen"
    assert selector.namespace == "ml"


def test_a_deployment_without_a_cache_requires_none() -> None:
    md = deployment("qwen", WHOLE_NODE)
    rsp = FunctionRunner(default_registry()).run(
        request(md, {}, {CLUSTERS: [cluster("a")], CLASSES: [H100], REPLICAS: []})
    )
    assert CACHE not in rsp.requirements.resources


def test_replicas_land_only_on_clusters_the_cache_selects() -> None:
    fleet = [cluster("a", tier="cpu"), cluster("b", tier="gpu"), cluster("c", tier="gpu")]
    rsp = reconcile_deployment(
        cached(replicas=3), fleet, cache=[model_cache("qwen", selector={"tier": "gpu"})]
    )
    assert clusters_of(rsp) == ["b", "c"]
    status, reason, message = rsp.condition("ReplicasScheduled")
    assert (status, reason) == ("False", "InsufficientCapacity")
    assert "a: ModelCache qwen does not stage on it (clusterSelector tier=gpu)" in message


def test_the_cache_selector_is_intersected_with_the_deployments_own() -> None:
    fleet = [
        cluster("a", region="us", tier="gpu"),
        cluster("b", region="eu", tier="gpu"),
        cluster("c", region="us", tier="cpu"),
    ]
    md = cached(replicas=3, selector={"region": "us"})
    rsp = reconcile_deployment(md, fleet, cache=[model_cache("qwen", selector={"tier": "gpu"})])
    assert clusters_of(rsp) == ["a"]


def test_selectors_that_disagree_on_a_label_admit_no_cluster() -> None:
    md = cached(selector={"region": "us"})
    rsp = reconcile_deployment(
        md, [cluster("a", region="us")], cache=[model_cache("qwen", selector={"region": "eu"})]
    )
    assert replicas(rsp) == {}
    assert rsp.condition("ReplicasScheduled")[:2] == ("False", "NoEligibleCluster")


def test_a_cache_without_a_selector_constrains_nothing() -> None:
    rsp = reconcile_deployment(
        cached(replicas=2), [cluster("a"), cluster("b")], cache=[model_cache("qwen")]
    )
    assert clusters_of(rsp) == ["a", "b"]
    assert rsp.condition("ModelCacheResolved") == (
        "True",
        "ModelCacheResolved",
        "ModelCache qwen stages on every cluster",
    )


def test_the_resolved_condition_names_where_the_cache_stages() -> None:
    rsp = reconcile_deployment(
        cached(), [cluster("a", tier="gpu")], cache=[model_cache("qwen", selector={"tier": "gpu"})]
    )
    assert rsp.condition("ModelCacheResolved") == (
        "True",
        "ModelCacheResolved",
        "ModelCache qwen stages on clusters labelled tier=gpu",
    )


def test_a_cache_not_read_yet_holds_new_placements_and_says_so() -> None:
    rsp = reconcile_deployment(cached(), [cluster("a")], cache=UNREAD)
    assert replicas(rsp) == {}
    status, reason, message = rsp.condition("ModelCacheResolved")
    assert (status, reason) == ("Unknown", "ModelCacheUnresolved")
    assert "reading ModelCache qwen" in message
    status, reason, message = rsp.condition("ReplicasScheduled")
    assert (status, reason) == ("False", "WaitingForModelCache")
    assert "ModelCache qwen is not read yet" in message


def test_an_answer_for_another_cache_is_not_read_as_this_one() -> None:
    # The answer to the requirement of a previous reference, before Crossplane asks again.
    rsp = reconcile_deployment(cached(cache="llama"), [cluster("a")], cache=[model_cache("qwen")])
    assert replicas(rsp) == {}
    assert rsp.condition("ModelCacheResolved")[1] == "ModelCacheUnresolved"


def test_a_cache_not_read_yet_keeps_every_placed_replica() -> None:
    fleet = [cluster("a"), cluster("b")]
    first = reconcile_deployment(cached(replicas=2), fleet, cache=[model_cache("qwen")])
    observed = observed_serving(first)
    rsp = reconcile_deployment(cached(replicas=2), fleet, observed, cache=UNREAD)
    assert replicas(rsp) == replicas(first)


def test_a_cache_not_read_yet_holds_a_scale_up() -> None:
    fleet = [cluster("a"), cluster("b"), cluster("c")]
    first = reconcile_deployment(cached(replicas=2), fleet, cache=[model_cache("qwen")])
    rsp = reconcile_deployment(cached(replicas=3), fleet, observed_serving(first), cache=UNREAD)
    assert replicas(rsp) == replicas(first)


def test_a_missing_cache_holds_new_placements_with_a_condition_and_warning_naming_it() -> None:
    rsp = reconcile_deployment(cached(), [cluster("a")], cache=[])
    assert replicas(rsp) == {}
    status, reason, message = rsp.condition("ModelCacheResolved")
    assert (status, reason) == ("False", "ModelCacheNotFound")
    assert "ModelCache qwen not found in namespace ml" in message
    assert ("Warning", message) in rsp.events
    assert rsp.condition("ReplicasScheduled")[1] == "WaitingForModelCache"


def test_a_deleted_cache_keeps_the_replicas_it_served() -> None:
    first = reconcile_deployment(cached(), [cluster("a")], cache=[model_cache("qwen")])
    rsp = reconcile_deployment(cached(), [cluster("a")], observed_serving(first), cache=[])
    assert replicas(rsp) == replicas(first)
    assert rsp.condition("ReplicasScheduled")[0] == "True"
    assert rsp.condition("ModelCacheResolved")[0] == "False"


def test_a_replica_outside_a_narrowed_cache_moves_make_before_break() -> None:
    fleet = [cluster("a", tier="old"), cluster("b", tier="gpu")]
    first = reconcile_deployment(cached(), fleet, cache=[model_cache("qwen")])
    assert clusters_of(first) == ["a"]
    narrowed = [model_cache("qwen", selector={"tier": "gpu"})]
    rsp = reconcile_deployment(cached(), fleet, observed_serving(first), cache=narrowed)
    # The old one serves until the replacement on b does: it never leaves a gap.
    assert clusters_of(rsp) == ["a", "b"]
    assert "does not stage on it" in rsp.condition("ReplicasScheduled")[2]


def test_the_cache_is_required_while_the_fleet_is_still_being_read() -> None:
    rsp = FunctionRunner(default_registry()).run(request(cached(), {}, {}))
    assert CACHE in rsp.requirements.resources
    assert CLUSTERS in rsp.requirements.resources


LABELS = st.dictionaries(st.sampled_from(["tier", "region"]), st.sampled_from(["x", "y"]))


@settings(max_examples=examples(40), deadline=None)
@given(
    fleet_labels=st.lists(LABELS, min_size=1, max_size=4),
    cache_selector=LABELS,
    own_selector=LABELS,
    replicas=st.integers(1, 4),
)
def test_no_replica_ever_lands_where_the_cache_does_not_stage(
    fleet_labels: list[dict[str, str]],
    cache_selector: dict[str, str],
    own_selector: dict[str, str],
    replicas: int,
) -> None:
    fleet = [cluster(f"c{i}", **labels) for i, labels in enumerate(fleet_labels)]
    mc = model_cache("qwen", selector=cache_selector)
    rsp = reconcile_deployment(cached(replicas, selector=own_selector or None), fleet, cache=[mc])
    by_name = {c["metadata"]["name"]: c["metadata"]["labels"] for c in fleet}
    for name in clusters_of(rsp):
        assert stages_on(mc, by_name[name])
        assert all(by_name[name].get(k) == v for k, v in own_selector.items())
    # Where both selectors admit a cluster with room, replicas are placed there.
    admitted = [
        n
        for n, labels in by_name.items()
        if stages_on(mc, labels) and all(labels.get(k) == v for k, v in own_selector.items())
    ]
    assert len(clusters_of(rsp)) == min(replicas, len(admitted))
