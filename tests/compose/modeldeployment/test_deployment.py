"""The ModelDeployment composition: placed replicas become ModelReplicas that pass the
ModelReplica XRD; conditions tell the truth; nothing serving is dropped by a fault or a move."""

from __future__ import annotations

import copy
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.compose.modeldeployment.composer import (
    CLASSES,
    CLUSTERS,
    REPLICAS,
    compose_deployment,
)
from modelplane.compose.registry import default_registry
from modelplane.composer import Inputs, Result
from modelplane.function import FunctionRunner
from modelplane.structs import dict_to_struct
from tests.compose.results import condition as condition
from tests.compose.through import composed_deployment
from tests.fleet.builders import H100, deployment, engine, fleet, inference_cluster, member, serving
from tests.fleet.xrd import errors

Obj = dict[str, Any]


def replicas_of(result: Result) -> dict[str, Obj]:
    return {
        k: d.resource for k, d in result.resources.items() if d.resource["kind"] == "ModelReplica"
    }


def existing(result: Result, status: str = "True") -> dict[str, Obj]:
    """The composed replicas as Crossplane would observe them next time."""
    return {k: serving(mr, status, revision=True) for k, mr in replicas_of(result).items()}


def test_each_placed_replica_is_a_model_replica_that_passes_its_xrd() -> None:
    md = deployment(replicas=2)
    mrs = replicas_of(composed_deployment(md, fleet("east", "west"), unrouted=True))
    assert sorted(mr["spec"]["clusterName"] for mr in mrs.values()) == ["east", "west"]
    for mr in mrs.values():
        assert errors("modelreplicas", mr) == []


def test_a_gang_and_a_prefill_decode_replica_pass_the_model_replica_xrd() -> None:
    worker = member("Worker")
    worker["worker"] = {"nodes": 1}
    leader = member("Leader")
    gang = deployment("gang", engine("main", leader, worker))
    epp = {"template": {"spec": {"containers": [{"name": "epp", "image": "epp:v1"}]}}}
    pd = deployment(
        "pd",
        engine("prefill", phase="Prefill"),
        engine("decode", phase="Decode"),
        serving={"mode": "PrefillDecode", "router": "EndpointPicker", "endpointPicker": epp},
    )
    for md in (gang, pd):
        mrs = replicas_of(composed_deployment(md, fleet("east"), unrouted=True))
        assert len(mrs) == 1
        assert [errors("modelreplicas", mr) for mr in mrs.values()] == [[]]


def test_every_cluster_and_class_is_required_and_only_the_deployments_own_replicas() -> None:
    # What other deployments hold, each cluster publishes (status.allocation).
    reqs = composed_deployment(deployment(), fleet("east"), unrouted=True).requirements
    assert (reqs[CLUSTERS].kind, reqs[CLUSTERS].match_name) == ("InferenceCluster", None)
    assert not reqs[CLUSTERS].match_labels
    assert (reqs[CLASSES].kind, reqs[CLASSES].match_name) == ("InferenceClass", None)
    assert reqs[REPLICAS].kind == "ModelReplica"
    assert reqs[REPLICAS].match_labels == {"modelplane.ai/deployment": "qwen"}
    assert reqs[REPLICAS].namespace == "ml"


def test_until_the_fleet_is_read_existing_replicas_are_carried_forward() -> None:
    md = deployment()
    observed = existing(composed_deployment(md, fleet("east"), unrouted=True))
    result = compose_deployment(Inputs(composite=md, observed=observed))
    assert set(result.resources) == set(observed)
    assert set(result.requirements) == {CLUSTERS, CLASSES, REPLICAS}
    assert condition(result, "ReplicasScheduled").status == "Unknown"


def test_all_replicas_placed_is_reported_with_where() -> None:
    result = composed_deployment(deployment(replicas=2), fleet("east", "west"), unrouted=True)
    cond = condition(result, "ReplicasScheduled")
    assert (cond.status, cond.reason) == ("True", "AllReplicasScheduled")
    assert cond.message == "2 of 2 replicas placed: east (0), west (1)"
    assert result.status["replicas"] == {"total": 2, "ready": 0}


def test_a_shortfall_is_reported_per_cluster_and_places_what_fits() -> None:
    md = deployment("qwen", engine("main", member(gpus=8), copies=2), replicas=3)
    result = composed_deployment(md, fleet("east", "west", nodes=2), unrouted=True)
    assert len(replicas_of(result)) == 2
    cond = condition(result, "ReplicasScheduled")
    assert (cond.status, cond.reason) == ("False", "InsufficientCapacity")
    assert cond.message.startswith("2 of 3 replicas placed: east (0), west (1); ")
    assert "east:" in cond.message and "west:" in cond.message
    assert result.status["replicas"]["total"] == 2


def test_serving_counts_replicas_whose_model_serving_is_true() -> None:
    md = deployment(replicas=2)
    first = composed_deployment(md, fleet("east", "west"), unrouted=True)
    observed = existing(first)
    east = next(k for k, mr in observed.items() if mr["spec"]["clusterName"] == "east")
    observed[east] = serving(observed[east], "False", revision=True)
    result = composed_deployment(md, fleet("east", "west"), observed, unrouted=True)
    assert result.status["replicas"] == {"total": 2, "ready": 1}
    cond = condition(result, "ReplicasServing")
    assert (cond.status, cond.reason) == ("False", "ReplicasNotServing")
    assert cond.message.startswith("1 of 2 replicas serving; ")
    assert "NoReadyCopy" in cond.message


def test_all_serving_is_true_and_ready_replicas_are_marked_ready() -> None:
    md = deployment(replicas=2)
    observed = existing(composed_deployment(md, fleet("east", "west"), unrouted=True))
    result = composed_deployment(md, fleet("east", "west"), observed, unrouted=True)
    cond = condition(result, "ReplicasServing")
    assert (cond.status, cond.reason, cond.message) == (
        "True",
        "AllReplicasServing",
        "2 of 2 replicas serving",
    )
    # (Their ModelEndpoints, new in this call, are ready once observed: test_endpoints.py.)
    assert {d.ready for k, d in result.resources.items() if k in replicas_of(result)} == {"True"}


def test_a_retained_replica_keeps_its_name_and_takes_template_edits_in_place() -> None:
    md = deployment()
    observed = existing(composed_deployment(md, fleet("east", "west"), unrouted=True))
    edited = copy.deepcopy(md)
    container = edited["spec"]["template"]["spec"]["engines"][0]["members"][0]["template"]["spec"][
        "containers"
    ][0]
    container["image"] = "vllm/vllm-openai:v0.12.0"
    result = composed_deployment(edited, fleet("east", "west"), observed, unrouted=True)
    assert set(replicas_of(result)) == set(observed)
    (key,) = observed
    mr = replicas_of(result)[key]
    assert mr["metadata"]["name"] == observed[key]["metadata"]["name"]
    stamped = mr["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0]
    assert stamped["image"] == "vllm/vllm-openai:v0.12.0"


def test_a_bad_selector_keeps_every_replica_unchanged_and_names_the_field() -> None:
    md = deployment()
    observed = existing(composed_deployment(md, fleet("east"), unrouted=True))
    broken = copy.deepcopy(md)
    request = broken["spec"]["template"]["spec"]["engines"][0]["members"][0]["nodeSelector"]
    request["devices"][0]["selectors"] = [{"cel": "device.driver =="}]
    result = composed_deployment(broken, fleet("east"), observed, unrouted=True)
    (key,) = observed
    assert result.resources[key].resource["spec"] == observed[key]["spec"]
    cond = condition(result, "ReplicasScheduled")
    assert (cond.status, cond.reason) == ("False", "InvalidSelector")
    assert (
        "spec.template.spec.engines[0].members[0].nodeSelector.devices[0].selectors[0].cel"
        in cond.message
    )
    assert "existing replicas are kept unchanged" in cond.message
    assert [e.severity for e in result.events] == ["Warning"]
    assert condition(result, "ReplicasServing").status == "True"
    assert result.resources[key].ready == "True"


def test_a_drained_replica_keeps_serving_until_its_replacement_serves() -> None:
    md = deployment()
    observed = existing(composed_deployment(md, fleet("east", "west"), unrouted=True))
    (old,) = observed
    drain = {"east": [{"key": "maintenance", "effect": "NoExecute"}]}
    drained = fleet("east", "west", taints=drain)
    moving = composed_deployment(md, drained, observed, unrouted=True)
    mrs = replicas_of(moving)
    assert old in mrs
    new = next(k for k in mrs if k != old)
    assert mrs[new]["spec"]["clusterName"] == "west"
    assert (
        "kept serving until its replacement serves"
        in condition(moving, "ReplicasScheduled").message
    )

    both = {old: observed[old], new: serving(mrs[new], revision=True)}
    done = composed_deployment(md, drained, both, unrouted=True)
    assert set(replicas_of(done)) == {new}


def test_a_shortfall_over_a_large_fleet_groups_clusters_that_share_a_reason() -> None:
    names = [f"c{i:02}" for i in range(12)]
    md = deployment("qwen", engine("main", member(gpus=8), copies=2))
    cond = condition(
        composed_deployment(md, fleet(*names, nodes=1), unrouted=True), "ReplicasScheduled"
    )
    assert cond.status == "False"
    # One line per cluster would bury the reason; a thousand would not fit a condition.
    assert cond.message.endswith(
        "c00, c01, c02 and 9 more clusters: pool h100 has 1 node, engine main needs 2"
    )


def test_serving_during_a_move_says_which_replicas_are_only_kept_until_replaced() -> None:
    md = deployment()
    observed = existing(composed_deployment(md, fleet("east", "west"), unrouted=True))
    drained = fleet("east", "west", taints={"east": [{"key": "m", "effect": "NoExecute"}]})
    moving = composed_deployment(md, drained, observed, unrouted=True)
    cond = condition(moving, "ReplicasServing")
    # "1 of 1 replicas serving" alone reads as success beside status False.
    assert cond.status == "False"
    assert cond.message.startswith(
        "1 of 1 replicas serving, 1 moving (kept serving until its replacement serves)"
    )


def test_a_shortfall_with_no_eligible_cluster_is_not_called_insufficient_capacity() -> None:
    md = deployment(selector={"tier": "typo"})
    cond = condition(
        composed_deployment(md, fleet("east", "west"), unrouted=True), "ReplicasScheduled"
    )
    assert (cond.status, cond.reason) == ("False", "NoEligibleCluster")
    assert "east: labels do not match clusterSelector tier=typo" in cond.message


def test_a_replica_on_a_deleted_cluster_is_kept_until_its_replacement_serves() -> None:
    # Deleted (asked for by name, nothing came back): make before break, as for a drain.
    md = deployment()
    observed = existing(composed_deployment(md, fleet("east", "west"), unrouted=True))
    (old,) = observed
    moving = composed_deployment(md, fleet("west"), observed, gone=("east",), unrouted=True)
    mrs = replicas_of(moving)
    assert old in mrs
    [new] = [k for k, mr in mrs.items() if mr["spec"]["clusterName"] == "west"]

    both = {old: observed[old], new: serving(mrs[new], revision=True)}
    done = composed_deployment(md, fleet("west"), both, gone=("east",), unrouted=True)
    assert set(replicas_of(done)) == {new}


def test_scale_down_removes_a_serving_replica_once_enough_others_serve() -> None:
    md = deployment(replicas=2)
    observed = existing(composed_deployment(md, fleet("east", "west"), unrouted=True))
    smaller = copy.deepcopy(md)
    smaller["spec"]["replicas"] = 1
    result = composed_deployment(smaller, fleet("east", "west"), observed, unrouted=True)
    assert len(replicas_of(result)) == 1
    assert result.status["replicas"] == {"total": 1, "ready": 1}


def test_same_named_deployments_in_two_namespaces_do_not_adopt_each_others_replicas() -> None:
    def whole_node(namespace: str) -> Obj:
        return deployment("qwen", engine("main", member(gpus=8)), namespace=namespace)

    theirs = existing(
        composed_deployment(whole_node("team-b"), fleet("east", nodes=1), unrouted=True)
    )
    ours = composed_deployment(
        whole_node("team-a"), fleet("east", nodes=1), replicas=list(theirs.values()), unrouted=True
    )
    assert replicas_of(ours) == {}
    cond = condition(ours, "ReplicasScheduled")
    assert (cond.status, cond.reason) == ("False", "InsufficientCapacity")


def test_the_same_inputs_give_byte_identical_responses() -> None:
    md = deployment(replicas=3)
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.CopyFrom(dict_to_struct(md))
    for name, items in ((CLUSTERS, fleet("c", "a", "b")), (CLASSES, [H100]), (REPLICAS, [])):
        resources = req.required_resources[name]  # present even when it matched nothing
        for obj in items:
            resources.items.add().resource.CopyFrom(dict_to_struct(obj))
    first = FunctionRunner(default_registry()).run(req)
    second = FunctionRunner(default_registry()).run(req)
    assert first.SerializeToString(deterministic=True) == second.SerializeToString(
        deterministic=True
    )
    assert len(first.desired.resources) == 3
    assert not [r for r in first.results if r.severity == fnv1.SEVERITY_FATAL]


def test_through_run_function_a_later_created_replica_on_an_overcommitted_node_moves() -> None:
    # The same rule as the scheduler's, with the fleet read as lazy views of the request.
    clusters = fleet("east", "west", nodes=1)
    gpus8 = engine("main", member(gpus=8))
    mine = deployment("qwen", gpus8)
    theirs = deployment("other", gpus8)
    placed = {}
    for md, when in ((mine, "2026-01-01T00:00:01Z"), (theirs, "2026-01-01T00:00:00Z")):
        [mr] = replicas_of(composed_deployment(md, clusters[:1], unrouted=True)).values()
        placed[md["metadata"]["name"]] = serving(
            {**mr, "metadata": {**mr["metadata"], "creationTimestamp": when}}, revision=True
        )
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.CopyFrom(dict_to_struct(mine))
    req.observed.resources["replica-0-east"].resource.CopyFrom(dict_to_struct(placed["qwen"]))
    for name, items in ((CLUSTERS, clusters), (CLASSES, [H100]), (REPLICAS, placed.values())):
        resources = req.required_resources[name]
        for obj in items:
            resources.items.add().resource.CopyFrom(dict_to_struct(obj))
    rsp = FunctionRunner(default_registry()).run(req)
    replicas = sorted(k for k in rsp.desired.resources if k.startswith("replica-"))
    assert replicas == ["replica-0-east", "replica-0-west"]
    [scheduled] = [c for c in rsp.conditions if c.type == "ReplicasScheduled"]
    assert "east is overcommitted" in scheduled.message


def test_a_deployment_without_a_template_fails_cleanly_naming_the_field() -> None:
    md = deployment()
    del md["spec"]["template"]
    result = composed_deployment(md, fleet("east"), unrouted=True)
    assert result.fatal == "ModelDeployment spec.template.spec is required"


def test_an_engine_without_members_fails_cleanly_naming_the_field() -> None:
    md = deployment()
    del md["spec"]["template"]["spec"]["engines"][0]["members"]
    result = composed_deployment(md, fleet("east"), unrouted=True)
    assert result.fatal == (
        "ModelDeployment spec.template.spec.engines[0].members must list at least one member"
    )


def test_a_deployment_name_longer_than_a_label_value_fails_cleanly() -> None:
    md = deployment("q" * 64)
    result = composed_deployment(md, fleet("east"), unrouted=True)
    assert result.fatal is not None
    assert result.fatal.startswith(f"ModelDeployment name '{'q' * 64}' is longer than 63")
    assert composed_deployment(deployment("q" * 63), fleet("east"), unrouted=True).fatal is None


def test_a_cluster_whose_name_cannot_be_a_label_value_hosts_nothing() -> None:
    long = inference_cluster("c" * 64, {"h100": ("h100", 2)}, classes=[H100])
    mrs = replicas_of(
        composed_deployment(deployment(replicas=2), [long, *fleet("east")], unrouted=True)
    )
    assert {mr["spec"]["clusterName"] for mr in mrs.values()} == {"east"}


def test_a_replica_re_placed_where_it_was_keeps_its_name() -> None:
    # Renaming the engine re-places the replica; it fits where it was, so the same
    # ModelReplica is updated in place, whatever its name was derived from when created.
    md = deployment()
    observed = existing(composed_deployment(md, fleet("east"), unrouted=True))
    (key,) = observed
    observed[key]["metadata"]["name"] = "named-by-an-older-version"
    renamed = copy.deepcopy(md)
    renamed["spec"]["template"]["spec"]["engines"][0]["name"] = "serve"
    result = composed_deployment(renamed, fleet("east"), observed, unrouted=True)
    assert {k: mr["metadata"]["name"] for k, mr in replicas_of(result).items()} == {
        key: "named-by-an-older-version"
    }
