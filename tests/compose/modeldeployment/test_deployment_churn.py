"""Day-two churn on a ModelDeployment, through the FunctionRunner: a pod restarting, a rolling
update, a cluster whose status is not written yet, a cluster that really is gone. Its endpoints
follow whether each replica can take traffic, and a replica leaves only on evidence."""

from __future__ import annotations

import copy
from typing import Any

from tests.compose.through import Response, reconcile_deployment
from tests.fleet.builders import deployment, fleet, reported, with_condition

Obj = dict[str, Any]


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


def serving_with_endpoints(md: Obj, clusters: list[Obj]) -> dict[str, Obj]:
    """Replicas and endpoints composed and observed serving."""
    observed = as_observed(reconcile_deployment(md, clusters, {}))
    return as_observed(reconcile_deployment(md, clusters, observed))


def test_a_serving_replica_keeps_its_endpoint_while_a_pod_restarts() -> None:
    md = deployment("qwen")
    observed = serving_with_endpoints(md, fleet("east"))
    assert endpoints(reconcile_deployment(md, fleet("east"), observed)) == ["endpoint-0-east"]
    restarting = {
        k: with_condition(o, "Ready", "False") if o["kind"] == "ModelReplica" else o
        for k, o in observed.items()
    }
    assert endpoints(reconcile_deployment(md, fleet("east"), restarting)) == ["endpoint-0-east"]


def test_a_replica_serving_one_of_two_copies_gets_its_endpoint() -> None:
    md = deployment("qwen")
    md["spec"]["template"]["spec"]["engines"][0]["copies"] = 2
    first = reconcile_deployment(md, fleet("east"), {})
    rolling = as_observed(first, serving="True", ready="False")
    assert endpoints(reconcile_deployment(md, fleet("east"), rolling)) == ["endpoint-0-east"]


def test_a_replica_whose_status_is_not_written_yet_keeps_its_endpoint() -> None:
    md = deployment("qwen")
    observed = serving_with_endpoints(md, fleet("east"))
    observed["replica-0-east"].pop("status")
    assert endpoints(reconcile_deployment(md, fleet("east"), observed)) == ["endpoint-0-east"]


def test_a_replica_that_stops_serving_loses_its_endpoint() -> None:
    md = deployment("qwen")
    observed = serving_with_endpoints(md, fleet("east"))
    observed["replica-0-east"] = with_condition(observed["replica-0-east"], "ModelServing", "False")
    assert endpoints(reconcile_deployment(md, fleet("east"), observed)) == []


def test_a_cluster_with_only_crossplanes_conditions_keeps_its_endpoints() -> None:
    md = deployment("qwen")
    observed = serving_with_endpoints(md, fleet("east"))
    [east] = fleet("east")
    east["status"] = {"conditions": [{"type": "Synced", "status": "True", "reason": "Success"}]}
    assert endpoints(reconcile_deployment(md, [east], observed)) == ["endpoint-0-east"]


def test_a_cluster_whose_gateway_is_not_ready_loses_its_endpoints() -> None:
    md = deployment("qwen")
    observed = serving_with_endpoints(md, fleet("east"))
    [east] = fleet("east")
    del east["status"]["gateway"]["address"]
    east = with_condition(east, "GatewayReady", "False", "GatewayNotProgrammed")
    assert endpoints(reconcile_deployment(md, [east], observed)) == []


def test_a_replica_on_a_cluster_positively_gone_moves_make_before_break() -> None:
    md = deployment("qwen", replicas=2)
    observed = serving_with_endpoints(md, fleet("a", "b"))
    # b is missing from the list and, asked for by name, nothing comes back.
    moving = reconcile_deployment(md, fleet("a", "c"), observed, gone=("b",))
    replicas = sorted(k for k, o in moving.resources.items() if o["kind"] == "ModelReplica")
    assert replicas == ["replica-0-a", "replica-1-b", "replica-1-c"]
    assert moving.status["replicas"] == {"total": 2, "ready": 2, "moving": 1}
    assert moving.condition("ReplicasServing")[2].startswith("2 of 2 replicas serving, 1 moving")

    # The replacement serves: the old replica's endpoint goes first, and nothing is moving.
    after = as_observed(moving)
    draining = reconcile_deployment(md, fleet("a", "c"), after, gone=("b",), unrouted=True)
    replicas = sorted(k for k, o in draining.resources.items() if o["kind"] == "ModelReplica")
    assert replicas == ["replica-0-a", "replica-1-b", "replica-1-c"]
    assert "endpoint-1-b" not in draining.resources
    assert draining.status["replicas"] == {"total": 2, "ready": 2, "draining": 1}

    # Its endpoint deleted and no route naming its pool: the old replica goes.
    gone = as_observed(draining)
    mine = [o for o in after.values() if o["kind"] == "ModelReplica"]
    done = reconcile_deployment(
        md, fleet("a", "c"), gone, replicas=mine, gone=("b",), unrouted=True
    )
    replicas = sorted(k for k, o in done.resources.items() if o["kind"] == "ModelReplica")
    assert replicas == ["replica-0-a", "replica-1-c"]
    assert done.status["replicas"] == {"total": 2, "ready": 2}


def test_a_cluster_a_lagging_list_left_out_keeps_its_replica_in_place() -> None:
    md = deployment("qwen", replicas=2)
    observed = serving_with_endpoints(md, fleet("a", "b"))
    rsp = reconcile_deployment(md, fleet("a", "c"), observed, **{"cluster/b": fleet("b")})
    replicas = sorted(k for k, o in rsp.resources.items() if o["kind"] == "ModelReplica")
    assert replicas == ["replica-0-a", "replica-1-b"]
    assert rsp.status["replicas"] == {"total": 2, "ready": 2}
