"""A ModelDeployment under missing, empty or lagging inputs, through the real FunctionRunner:
what the deployment composed and still runs is never dropped because a list says otherwise."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from modelplane import labels
from tests.compose.through import (
    Response,
    composed_deployment,
    deployment_required,
    reconcile_deployment,
    run,
)
from tests.fleet.builders import (
    H100,
    deployment,
    engine,
    inference_class,
    inference_cluster,
    member,
    serving,
)

Obj = dict[str, Any]
A100 = inference_class("a100")
WHOLE_NODE = engine("main", member(gpus=8))


def clusters(*names: str, class_name: str = "h100") -> list[Obj]:
    """One single-node pool ``p`` per cluster: each holds exactly one whole-node replica."""
    return [inference_cluster(n, {"p": (class_name, 1)}, classes=[H100, A100]) for n in names]


def placed_serving(md: Obj, fleet: list[Obj], classes: list[Obj] | None = None) -> dict[str, Obj]:
    """The replicas a first reconcile composes, observed serving."""
    result = composed_deployment(md, fleet, classes=classes)
    assert result.fatal is None, result.fatal
    return {k: serving(d.resource, revision=True) for k, d in result.resources.items()}


def replicas_reconciled(
    md: Obj, fleet: list[Obj], observed: dict[str, Obj], **answers: Any
) -> Response:
    """A reconcile with ``observed`` composed and no route naming a pool, its replicas only: a
    Ready replica also gets a ModelEndpoint, which these tests leave aside."""
    rsp = reconcile_deployment(md, fleet, observed, unrouted=True, **answers)
    replicas = {k: r for k, r in rsp.resources.items() if r.get("kind") == "ModelReplica"}
    return dataclasses.replace(rsp, resources=replicas)


def on(rsp: Response, cluster: str) -> list[str]:
    return sorted(k for k, r in rsp.resources.items() if r["spec"]["clusterName"] == cluster)


# --- every cluster or class missing ---------------------------------------------------------------


def test_no_cluster_listed_keeps_every_replica_unchanged_and_says_why() -> None:
    md = deployment("qwen", WHOLE_NODE, replicas=2)
    observed = placed_serving(md, clusters("east", "west"))
    rsp = replicas_reconciled(md, [], observed)
    assert set(rsp.resources) == set(observed)
    for key, obj in observed.items():
        assert rsp.resources[key]["spec"] == obj["spec"]
    status, reason, message = rsp.condition("ReplicasScheduled")
    assert (status, reason) == ("False", "FleetNotListed")
    assert message.startswith("no InferenceCluster is listed (all deleted, or the list failed")
    assert "the 2 existing replicas are kept as they are" in message
    assert ("Warning", message) in rsp.events


def test_no_class_listed_keeps_every_replica_unchanged_and_says_why() -> None:
    md = deployment("qwen", WHOLE_NODE, replicas=2)
    fleet = clusters("east", "west")
    observed = placed_serving(md, fleet)
    rsp = replicas_reconciled(md, fleet, observed, classes=[])
    assert set(rsp.resources) == set(observed)
    status, reason, message = rsp.condition("ReplicasScheduled")
    assert (status, reason) == ("False", "FleetNotListed")
    assert message.startswith("no InferenceClass is listed")
    assert rsp.condition("ReplicasServing")[0] == "True"


# --- a replica's cluster missing ---------------------------------------------------------------


def test_a_replica_whose_cluster_is_deleted_and_that_has_nowhere_to_go_is_kept_and_reported() -> (
    None
):
    md = deployment("qwen", WHOLE_NODE, replicas=2)
    observed = placed_serving(md, clusters("east", "west"))
    [west] = [k for k, mr in observed.items() if mr["spec"]["clusterName"] == "west"]
    # Its own composition waits for the cluster too, so its status no longer says serving.
    observed[west] = serving(observed[west], "False", revision=True)
    rsp = replicas_reconciled(md, clusters("east"), observed, gone=("west",))
    assert set(rsp.resources) == set(observed)
    assert rsp.resources[west]["spec"] == observed[west]["spec"]
    status, reason, message = rsp.condition("ReplicasScheduled")
    assert (status, reason) == ("False", "InsufficientCapacity")
    name = observed[west]["metadata"]["name"]
    assert (
        f"{name} on west kept as no listed cluster can take it (cluster west is deleted)"
    ) in message
    assert f"removing {name}" not in message


def scaled_in_on_two_classes() -> tuple[Obj, dict[str, Obj], list[Obj], str]:
    """Two serving replicas, on an h100 and an a100 cluster, for one wanted: with every class
    listed the scale-down keeps h100's (same load, then the earlier cluster name)."""
    md = deployment("qwen", WHOLE_NODE, replicas=2)
    fleet = [*clusters("c1"), *clusters("c2", class_name="a100")]
    observed = placed_serving(md, fleet, classes=[H100, A100])
    md["spec"]["replicas"] = 1
    [wanted] = on(replicas_reconciled(md, fleet, observed, classes=[H100, A100]), "c1")
    return md, observed, fleet, wanted


def test_a_pool_s_class_missing_from_the_list_is_asked_for_by_name_and_nothing_changes() -> None:
    md, observed, fleet, _ = scaled_in_on_two_classes()
    rsp = replicas_reconciled(md, fleet, observed, classes=[A100])
    assert rsp.by_name["class/h100"] == ("InferenceClass", "h100", None)
    assert set(rsp.resources) == set(observed)
    assert rsp.condition("ReplicasScheduled")[:2] == ("Unknown", "WaitingForFleet")


def test_a_pool_s_class_found_by_name_is_read_as_listed() -> None:
    md, observed, fleet, wanted = scaled_in_on_two_classes()
    full = replicas_reconciled(md, fleet, observed, classes=[H100, A100])
    rsp = run(
        md,
        observed,
        {
            **deployment_required(fleet, observed, classes=[A100], unrouted=True),
            "class/h100": [H100],
        },
    )
    assert rsp.resources[wanted] == full.resources[wanted]
    assert rsp.condition("ReplicasScheduled") == full.condition("ReplicasScheduled")


def test_a_replica_on_a_pool_whose_class_is_gone_by_name_is_kept_and_said_why() -> None:
    md, observed, fleet, wanted = scaled_in_on_two_classes()
    rsp = run(
        md,
        observed,
        {**deployment_required(fleet, observed, classes=[A100], unrouted=True), "class/h100": []},
    )
    assert wanted in rsp.resources
    name = observed[wanted]["metadata"]["name"]
    assert (
        f"{name} on c1 kept until its ground is listed again (nothing is scaled down on no "
        "evidence) (InferenceClass h100 of pool p is deleted)"
    ) in rsp.condition("ReplicasScheduled")[2]


def test_a_replica_whose_cluster_is_unlisted_is_asked_for_by_name_and_kept_meanwhile() -> None:
    md = deployment("qwen", WHOLE_NODE)
    observed = placed_serving(md, clusters("east"))
    rsp = replicas_reconciled(md, clusters("west"), observed)
    assert set(rsp.resources) == set(observed)
    assert rsp.condition("ReplicasScheduled")[:2] == ("Unknown", "WaitingForFleet")


def test_a_replica_whose_cluster_a_lagging_list_left_out_stays_where_it_is() -> None:
    md = deployment("qwen", WHOLE_NODE)
    observed = placed_serving(md, clusters("east"))
    fleet = clusters("west")
    required = {**deployment_required(fleet, observed), "cluster/east": clusters("east")}
    rsp = run(md, observed, required)
    assert {k for k, r in rsp.resources.items() if r["kind"] == "ModelReplica"} == set(observed)
    assert rsp.condition("ReplicasScheduled")[:2] == ("True", "AllReplicasScheduled")


def test_a_replica_whose_cluster_is_deleted_moves_make_before_break() -> None:
    md = deployment("qwen", WHOLE_NODE)
    observed = placed_serving(md, clusters("east"))
    [old] = observed
    moving = replicas_reconciled(md, clusters("west"), observed, gone=("east",))
    assert old in moving.resources
    [new] = on(moving, "west")
    name = observed[old]["metadata"]["name"]
    assert (
        f"{name} on east kept until its replacement serves"
        in moving.condition("ReplicasScheduled")[2]
    )

    assert moving.condition("ReplicasServing")[2].startswith("1 of 1 replicas serving, 1 moving")

    both = {old: observed[old], new: serving(moving.resources[new], revision=True)}
    done = replicas_reconciled(md, clusters("west"), both, gone=("east",))
    assert set(done.resources) == {new}


def test_a_replica_whose_pool_class_is_gone_by_name_moves_make_before_break() -> None:
    md = deployment("qwen", WHOLE_NODE)
    fleet = [*clusters("east", class_name="a100"), *clusters("west")]
    observed = placed_serving(md, fleet, classes=[A100, H100])
    [old] = observed
    assert observed[old]["spec"]["clusterName"] == "east"
    # Not serving either: a serving replica would be kept by the ordinary make-before-break.
    observed[old] = serving(observed[old], "False", revision=True)
    moving = replicas_reconciled(md, fleet, observed, classes=[H100], classes_gone=("a100",))
    assert old in moving.resources
    assert on(moving, "west")
    assert "(InferenceClass a100 of pool p is deleted)" in moving.condition("ReplicasScheduled")[2]


# --- the replica list lagging or a label edited --------------------------------------------------


def spread_over_b_and_c(md: Obj) -> dict[str, Obj]:
    """Replicas 0 and 1 on clusters b and c; cluster a, added later, would be chosen first for
    a new replica (it hosts none, and ties go by name)."""
    observed = placed_serving(md, clusters("b", "c"))
    assert sorted(mr["spec"]["clusterName"] for mr in observed.values()) == ["b", "c"]
    return observed


def test_a_composed_replica_the_list_does_not_hold_yet_is_kept_not_replaced() -> None:
    md = deployment("qwen", WHOLE_NODE, replicas=2)
    observed = spread_over_b_and_c(md)
    listed = [mr for mr in observed.values() if mr["spec"]["clusterName"] == "b"]
    rsp = replicas_reconciled(md, clusters("a", "b", "c"), observed, replicas=listed)
    assert set(rsp.resources) == set(observed)
    assert rsp.condition("ReplicasScheduled")[:2] == ("True", "AllReplicasScheduled")


def test_a_composed_replica_whose_deployment_label_was_edited_away_is_kept_and_relabelled() -> None:
    md = deployment("qwen", WHOLE_NODE, replicas=2)
    observed = spread_over_b_and_c(md)
    [c] = [k for k, mr in observed.items() if mr["spec"]["clusterName"] == "c"]
    edited = copy.deepcopy(observed)
    del edited[c]["metadata"]["labels"][labels.DEPLOYMENT]
    rsp = replicas_reconciled(md, clusters("a", "b", "c"), edited)
    assert set(rsp.resources) == set(observed)
    assert rsp.resources[c]["metadata"]["name"] == observed[c]["metadata"]["name"]
    assert rsp.resources[c]["metadata"]["labels"][labels.DEPLOYMENT] == "qwen"
