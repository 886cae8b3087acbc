"""ModelServing: True exactly when every engine has a ready copy and routing is in place."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane import simulate
from modelplane.compose.modelreplica import routing, status
from modelplane.compose.modelreplica.context import ReplicaContext
from tests.compose.modelreplica.routing_fixtures import (
    context,
    gang,
    prefill_decode,
    replica,
    standalone,
    workload,
)

Obj = dict[str, Any]


def desired(ctx: ReplicaContext, kinds: dict[str, str] | None = None) -> dict[str, Obj]:
    objs = {
        f"workload-{e['name']}": workload(ctx, e, (kinds or {}).get(e["name"], "Deployment"))
        for e in ctx.engines
    }
    objs.update(routing.compose_routing(ctx))
    return objs


def model_serving(replica_obj: Obj, observed: dict[str, Obj]) -> status.Serving:
    return status.model_serving(context(replica_obj, observed=observed))


def observed_with(
    replica_obj: Obj, ready: dict[str, int], *, kinds: dict[str, str] | None = None
) -> dict[str, Obj]:
    """Every routing object ready; each engine's workload with its own number of ready copies."""
    ctx = context(replica_obj)
    objs = desired(ctx, kinds)
    observed = simulate.simulate_observed(
        {k: v for k, v in objs.items() if not k.startswith("workload-")}, 1
    )
    for engine, n in ready.items():
        observed[f"workload-{engine}"] = simulate.observe(objs[f"workload-{engine}"], n)
    return observed


PD = prefill_decode()  # prefill: 1 copy, decode: 3 copies


# --- the truth table ------------------------------------------------------------------------


def test_no_workload_observed_is_deploying() -> None:
    c = model_serving(PD, {}).condition
    assert (c.type, c.status, c.reason) == ("ModelServing", "False", "Deploying")
    assert c.message == "deploying on eks-l4: prefill: not yet deployed, decode: not yet deployed"


def test_one_workload_not_yet_observed_is_still_deploying() -> None:
    observed = observed_with(PD, {"prefill": 1})
    c = model_serving(PD, observed).condition
    assert (c.status, c.reason) == ("False", "Deploying")
    assert "prefill: 1/1 copies ready, decode: not yet deployed" in c.message


def test_a_workload_the_cluster_refused_says_why() -> None:
    # provider-kubernetes reports a failed apply (a missing CRD, a webhook's rejection) as
    # Synced=False on the Object; the remote object never appears.
    observed = observed_with(PD, {"prefill": 1})
    refused = "cannot create object: no matches for kind LeaderWorkerSet"
    synced = {"type": "Synced", "status": "False", "reason": "ReconcileError", "message": refused}
    observed["workload-decode"] = {"status": {"conditions": [synced]}}
    c = model_serving(PD, observed).condition
    assert (c.status, c.reason) == ("False", "Deploying")
    assert f"decode: not deployed: {refused}" in c.message


def test_an_engine_with_no_ready_copy_blocks_serving_and_is_named() -> None:
    c = model_serving(PD, observed_with(PD, {"prefill": 1, "decode": 0})).condition
    assert (c.status, c.reason) == ("False", "NoReadyCopy")
    assert (
        c.message == "decode has no ready copy: prefill: 1/1 copies ready, decode: 0/3 copies ready"
    )


def test_every_engine_without_a_ready_copy_is_named() -> None:
    c = model_serving(PD, observed_with(PD, {"prefill": 0, "decode": 0})).condition
    assert c.message.startswith("prefill, decode have no ready copy: ")


def test_every_engine_ready_but_the_picker_not_available_is_routing_not_ready() -> None:
    observed = observed_with(PD, {"prefill": 1, "decode": 1})
    observed["epp-deployment"] = simulate.observe(
        routing.compose_routing(context(PD))["epp-deployment"], 0
    )
    c = model_serving(PD, observed).condition
    assert (c.status, c.reason) == ("False", "RoutingNotReady")
    assert (
        c.message
        == "endpoint picker not available: prefill: 1/1 copies ready, decode: 1/3 copies ready"
    )


@pytest.mark.parametrize(
    ("missing", "words"),
    [
        ("inference-pool", "InferencePool not created"),
        ("http-route", "HTTPRoute not accepted by the gateway"),
        ("epp-service", "endpoint picker Service not created"),
        ("epp-role", "endpoint picker Role not created"),
    ],
)
def test_any_missing_part_of_the_routing_path_blocks_serving(missing: str, words: str) -> None:
    observed = observed_with(PD, {"prefill": 1, "decode": 3})
    del observed[missing]
    c = model_serving(PD, observed).condition
    assert (c.status, c.reason) == ("False", "RoutingNotReady")
    assert c.message.startswith(words)


def test_a_route_the_gateway_has_not_accepted_blocks_serving() -> None:
    observed = observed_with(PD, {"prefill": 1, "decode": 3})
    route = observed["http-route"]
    route["status"]["atProvider"]["manifest"].pop("status")
    route["status"]["conditions"][0]["status"] = "False"
    assert model_serving(PD, observed).condition.reason == "RoutingNotReady"


def test_one_ready_copy_of_every_engine_with_routing_in_place_is_serving() -> None:
    c = model_serving(PD, observed_with(PD, {"prefill": 1, "decode": 1})).condition
    assert (c.status, c.reason) == ("True", "Serving")
    assert c.message == (
        "serving at /ml-team/qwen3-8b-eks-l4-0/: "
        "prefill: 1/1 copies ready, decode: 1/3 copies ready"
    )


def test_all_copies_ready_is_serving() -> None:
    assert (
        model_serving(PD, observed_with(PD, {"prefill": 1, "decode": 3})).condition.status == "True"
    )


def test_an_object_that_exists_but_is_not_ready_does_not_count() -> None:
    observed = observed_with(PD, {"prefill": 1, "decode": 1})
    observed["epp-deployment"] = {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
    }
    assert model_serving(PD, observed).condition.reason == "RoutingNotReady"


@pytest.mark.parametrize(
    ("engine", "kind"),
    [
        (standalone("e", copies=2), "Deployment"),
        (gang("e", copies=2), "LeaderWorkerSet"),
        (gang("e", copies=2), "PodCliqueSet"),
    ],
)
def test_ready_copies_are_read_from_each_workload_kinds_status(engine: Obj, kind: str) -> None:
    r = replica(engines=[engine])
    for n, expected in ((0, "False"), (1, "True"), (2, "True")):
        c = model_serving(r, observed_with(r, {"e": n}, kinds={"e": kind})).condition
        assert c.status == expected, (kind, n)
        assert f"e: {n}/2 copies ready" in c.message


@pytest.mark.parametrize(
    ("manifest", "copies"),
    [
        ({"kind": "Deployment", "status": {"readyReplicas": 2, "availableReplicas": 1}}, 2),
        ({"kind": "Deployment", "status": {}}, 0),
        ({"kind": "Deployment"}, 0),
        ({"kind": "LeaderWorkerSet", "status": {"readyReplicas": 3}}, 3),
        ({"kind": "PodCliqueSet", "status": {"availableReplicas": 1}}, 1),
        ({"kind": "PodCliqueScalingGroup", "status": {"availableReplicas": 3}}, 3),
        ({"kind": "ConfigMap", "status": {"readyReplicas": 1}}, 0),
    ],
)
def test_ready_copies(manifest: Obj, copies: int) -> None:
    assert status.ready_copies(manifest) == copies


# --- events ---------------------------------------------------------------------------------


def previously(state: str | None) -> Obj:
    conditions = [] if state is None else [{"type": "ModelServing", "status": state, "reason": "x"}]
    return prefill_decode(
        status={"conditions": [{"type": "Ready", "status": "False"}, *conditions]}
    )


def test_starting_to_serve_is_an_event() -> None:
    r = previously("False")
    [event] = model_serving(r, observed_with(r, {"prefill": 1, "decode": 1})).events
    assert (event.severity, event.reason) == ("Normal", "Serving")
    assert event.message.startswith("Serving: serving at /ml-team/qwen3-8b-eks-l4-0/")


def test_serving_on_the_first_observation_is_an_event() -> None:
    r = previously(None)
    assert len(model_serving(r, observed_with(r, {"prefill": 1, "decode": 1})).events) == 1


def test_stopping_serving_is_a_warning_naming_the_blocker() -> None:
    r = previously("True")
    [event] = model_serving(r, observed_with(r, {"prefill": 1, "decode": 0})).events
    assert (event.severity, event.reason) == ("Warning", "NoReadyCopy")
    assert "decode has no ready copy" in event.message


@pytest.mark.parametrize(("before", "ready"), [("True", 1), ("False", 0), (None, 0)])
def test_no_event_while_the_condition_holds(before: str | None, ready: int) -> None:
    r = previously(before)
    assert model_serving(r, observed_with(r, {"prefill": ready, "decode": ready})).events == []
