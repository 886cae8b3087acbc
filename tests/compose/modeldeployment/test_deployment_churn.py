"""Day-two churn on a ModelDeployment, through the FunctionRunner: a pod restarting, a rolling
update, a cluster whose status is not written yet, a cluster that really is gone. Its endpoints
follow whether each replica can take traffic, and a replica leaves only on evidence."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.modeldeployment.composer import CLASSES, CLUSTERS, REPLICAS
from modelplane.compose.modeldeployment.drain import HOLDS, ROUTES
from tests.compose.through import Response, run
from tests.fleet.builders import (
    H100,
    deployment,
    fleet,
    reported,
    with_condition,
)

Obj = dict[str, Any]


def reconcile(md: Obj, clusters: list[Obj], observed: dict[str, Obj]) -> Response:
    mine = [o for o in observed.values() if o["kind"] == "ModelReplica"]
    return run(md, observed, {CLUSTERS: clusters, CLASSES: [H100], REPLICAS: mine})


def as_observed(rsp: Response, serving: str = "True", ready: str = "True") -> dict[str, Obj]:
    """What a reconcile composed, as the next one observes it: every replica's ModelServing and
    Ready as given (its status describing the stamp it carries)."""
    assert rsp.fatal is None, rsp.fatal
    out: dict[str, Obj] = {}
    for key, obj in rsp.resources.items():
        obj = copy.deepcopy(obj)
        if obj["kind"] == "ModelReplica":
            obj = reported(obj, up=serving == "True")
            obj = with_condition(with_condition(obj, "ModelServing", serving), "Ready", ready)
        out[key] = obj
    return out


def endpoints(rsp: Response) -> list[str]:
    return sorted(k for k, o in rsp.resources.items() if o["kind"] == "ModelEndpoint")


def settled(md: Obj, clusters: list[Obj]) -> dict[str, Obj]:
    """Replicas and endpoints composed and observed serving."""
    observed = as_observed(reconcile(md, clusters, {}))
    return as_observed(reconcile(md, clusters, observed))


def test_a_serving_replica_keeps_its_endpoint_while_a_pod_restarts() -> None:
    md = deployment("qwen")
    observed = settled(md, fleet("east"))
    assert endpoints(reconcile(md, fleet("east"), observed)) == ["endpoint-0-east"]
    restarting = {
        k: with_condition(o, "Ready", "False") if o["kind"] == "ModelReplica" else o
        for k, o in observed.items()
    }
    assert endpoints(reconcile(md, fleet("east"), restarting)) == ["endpoint-0-east"]


def test_a_replica_serving_one_of_two_copies_gets_its_endpoint() -> None:
    md = deployment("qwen")
    md["spec"]["template"]["spec"]["engines"][0]["copies"] = 2
    first = reconcile(md, fleet("east"), {})
    rolling = as_observed(first, serving="True", ready="False")
    assert endpoints(reconcile(md, fleet("east"), rolling)) == ["endpoint-0-east"]


def test_a_replica_whose_status_is_not_written_yet_keeps_its_endpoint() -> None:
    md = deployment("qwen")
    observed = settled(md, fleet("east"))
    observed["replica-0-east"].pop("status")
    assert endpoints(reconcile(md, fleet("east"), observed)) == ["endpoint-0-east"]


def test_a_replica_that_stops_serving_loses_its_endpoint() -> None:
    md = deployment("qwen")
    observed = settled(md, fleet("east"))
    observed["replica-0-east"] = with_condition(observed["replica-0-east"], "ModelServing", "False")
    assert endpoints(reconcile(md, fleet("east"), observed)) == []


def test_a_cluster_with_only_crossplanes_conditions_keeps_its_endpoints() -> None:
    md = deployment("qwen")
    observed = settled(md, fleet("east"))
    [east] = fleet("east")
    east["status"] = {"conditions": [{"type": "Synced", "status": "True", "reason": "Success"}]}
    assert endpoints(reconcile(md, [east], observed)) == ["endpoint-0-east"]


def test_a_cluster_whose_gateway_is_not_ready_loses_its_endpoints() -> None:
    md = deployment("qwen")
    observed = settled(md, fleet("east"))
    [east] = fleet("east")
    del east["status"]["gateway"]["address"]
    east = with_condition(east, "GatewayReady", "False", "GatewayNotProgrammed")
    assert endpoints(reconcile(md, [east], observed)) == []


def test_a_replica_on_a_cluster_positively_gone_moves_make_before_break() -> None:
    md = deployment("qwen", replicas=2)
    observed = settled(md, fleet("a", "b"))
    # b is missing from the list and, asked for by name, nothing comes back.
    required = {CLUSTERS: fleet("a", "c"), CLASSES: [H100], "cluster/b": []}
    mine = [o for o in observed.values() if o["kind"] == "ModelReplica"]
    moving = run(md, observed, {**required, REPLICAS: mine})
    replicas = sorted(k for k, o in moving.resources.items() if o["kind"] == "ModelReplica")
    assert replicas == ["replica-0-a", "replica-1-b", "replica-1-c"]
    assert moving.status["replicas"] == {"total": 2, "ready": 2, "moving": 1}
    assert moving.condition("ReplicasServing")[2].startswith("2 of 2 replicas serving, 1 moving")

    # The replacement serves: the old replica's endpoint goes first, and nothing is moving.
    after = as_observed(moving)
    mine = [o for o in after.values() if o["kind"] == "ModelReplica"]
    draining = run(md, after, {**required, REPLICAS: mine, ROUTES: [], HOLDS: []})
    replicas = sorted(k for k, o in draining.resources.items() if o["kind"] == "ModelReplica")
    assert replicas == ["replica-0-a", "replica-1-b", "replica-1-c"]
    assert "endpoint-1-b" not in draining.resources
    assert draining.status["replicas"] == {"total": 2, "ready": 2, "draining": 1}

    # Its endpoint deleted and no route naming its pool: the old replica goes.
    gone = as_observed(draining)
    done = run(md, gone, {**required, REPLICAS: mine, ROUTES: [], HOLDS: []})
    replicas = sorted(k for k, o in done.resources.items() if o["kind"] == "ModelReplica")
    assert replicas == ["replica-0-a", "replica-1-c"]
    assert done.status["replicas"] == {"total": 2, "ready": 2}


def test_a_cluster_a_lagging_list_left_out_keeps_its_replica_in_place() -> None:
    md = deployment("qwen", replicas=2)
    observed = settled(md, fleet("a", "b"))
    mine = [o for o in observed.values() if o["kind"] == "ModelReplica"]
    required = {CLUSTERS: fleet("a", "c"), CLASSES: [H100], REPLICAS: mine}
    rsp = run(md, observed, {**required, "cluster/b": fleet("b")})
    replicas = sorted(k for k, o in rsp.resources.items() if o["kind"] == "ModelReplica")
    assert replicas == ["replica-0-a", "replica-1-b"]
    assert rsp.status["replicas"] == {"total": 2, "ready": 2}
