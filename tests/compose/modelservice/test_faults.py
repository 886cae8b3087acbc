"""Property, over the front door's composers (InferenceGateway, ModelService, ModelEndpoint) and
the endpoints a ModelDeployment composes: whatever required list is missing, empty, stale or
lagging, the response through the real FunctionRunner (observed resources arriving as read-only
views) is Fatal or keeps every observed resource the true inputs still want. Crossplane deletes
whatever a non-fatal response leaves out, and a route deleted under a failed list turns clients'
requests into 404s.

The ways a list departs from the truth are ``tests.compose.worlds``'s. What a composer asks for
by name is left unanswered here (not fetched yet); the fleet-wide property
(``tests/compose/test_teardown_property.py``) answers it, as Crossplane does.

The worlds are ``tests.compose.worlds.World``s, so they join the fleet-wide property's table of
worlds as they are.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelplane.compose.modeldeployment.composer import (
    CLASSES,
    CLUSTERS,
    REPLICAS,
    compose_deployment,
)
from modelplane.compose.modelservice.composer import endpoints_requirement
from modelplane.composer import Inputs
from tests.compose import through
from tests.compose.modelservice.kit import (
    cluster,
    edge_fleet,
    external_endpoint,
    gateway,
    replica_endpoint,
    service,
)
from tests.compose.worlds import World, degraded_required
from tests.fleet.builders import H100, deployment, inference_cluster, with_condition
from tests.properties import checks_something, examples, vacuous

Obj = dict[str, Any]


def run(composite: Obj, observed: Mapping[str, Obj], required: Mapping[str, list[Obj] | None]):
    """The response's desired resource keys, or None when it is Fatal."""
    rsp = through.run(composite, observed, required)
    return None if rsp.fatal is not None else set(rsp.resources)


# --- worlds ---------------------------------------------------------------------------------------

HOSTS = ["edge", "c0", "c1"]


@st.composite
def service_world(draw: st.DrawFn) -> World:
    clusters = edge_fleet("c0", "c1", "c2")
    gateways = [
        gateway(f"g{i}", draw(st.sampled_from(HOSTS))) for i in range(draw(st.integers(1, 2)))
    ]
    entries = draw(st.integers(1, 3))
    ms = service(
        "qwen", "ml", *[(draw(st.integers(1, 9)), {"entry": str(i)}) for i in range(entries)]
    )
    required: dict[str, list[Obj]] = {
        "inference-gateways": gateways,
        "inference-clusters": clusters,
    }
    for i in range(entries):
        found: list[Obj] = []
        for j in range(draw(st.integers(0, 3))):
            labels = {"entry": str(i)}
            if draw(st.booleans()):
                where = draw(st.sampled_from(["c0", "c1", "c2"]))
                found.append(
                    replica_endpoint(f"r{i}{j}", where, labels=labels, ready=draw(st.booleans()))
                )
            else:
                found.append(
                    external_endpoint(f"x{i}{j}", labels=labels, ready=draw(st.booleans()))
                )
        required[endpoints_requirement(i)] = found
    observed = through.settled(ms, required, copies=draw(st.integers(0, 1)))
    partial = {
        "inference-gateways",
        "inference-clusters",
        *(endpoints_requirement(i) for i in range(entries)),
    }
    return World(ms, required, observed, frozenset(partial))


@st.composite
def external_endpoint_world(draw: st.DrawFn) -> World:
    clusters = edge_fleet("c0", "c1", "c2")
    gateways = [
        gateway(f"g{i}", draw(st.sampled_from(HOSTS))) for i in range(draw(st.integers(1, 3)))
    ]
    auth = {"secretRef": {"name": "key"}} if draw(st.booleans()) else None
    url = draw(st.sampled_from(["https://api.provider.example.com/v1", "http://10.1.2.3:8000/"]))
    endpoint = external_endpoint("x", url, auth=auth, ready=False)
    required = {"inference-gateways": gateways, "inference-clusters": clusters}
    observed = through.settled(endpoint, required, copies=1)
    return World(endpoint, required, observed, frozenset(required))


def replica_endpoint_world() -> st.SearchStrategy[World]:
    endpoint = replica_endpoint("r0", "c0", ready=False)
    return st.just(World(endpoint, {"cluster": [cluster("c0")]}, {}))


@st.composite
def gateway_world(draw: st.DrawFn) -> World:
    clusters = edge_fleet("c0", "c1", "c2")
    tls = draw(st.sampled_from(["secret", "issuer"]))
    ig = gateway("g", draw(st.sampled_from(HOSTS)), secret="tls" if tls == "secret" else None)
    required = {"inference-clusters": clusters}
    observed = through.settled(ig, required, copies=1)
    return World(ig, required, observed, frozenset(required))


@st.composite
def deployment_world(draw: st.DrawFn) -> World:
    """A deployment whose replicas, observed Ready or not, have endpoints composed."""
    clusters = [inference_cluster(n, {"p": ("h100", 2)}, classes=[H100]) for n in ("a", "b")]
    md = deployment("qwen", replicas=draw(st.integers(1, 3)))
    required = {CLUSTERS: clusters, CLASSES: [H100], REPLICAS: []}
    observed: dict[str, Obj] = {}
    for _ in range(2):
        result = compose_deployment(Inputs(composite=md, required=required, observed=observed))
        observed = {
            k: with_condition(
                with_condition(copy.deepcopy(d.resource), "Ready", "True"), "ModelServing", "True"
            )
            for k, d in result.resources.items()
        }
        required = {
            **required,
            REPLICAS: [o for o in observed.values() if o["kind"] == "ModelReplica"],
        }
    for key in list(observed):
        if observed[key]["kind"] == "ModelReplica" and not draw(st.booleans()):
            observed[key] = with_condition(
                with_condition(observed[key], "Ready", "False"), "ModelServing", "False"
            )
    return World(md, required, observed, frozenset({CLUSTERS}), own=REPLICAS)


WORLDS: dict[str, Callable[[], st.SearchStrategy[World]]] = {
    "ModelService": service_world,
    "ModelEndpoint (external)": external_endpoint_world,
    "ModelEndpoint (replica)": replica_endpoint_world,
    "InferenceGateway": gateway_world,
    "ModelDeployment (endpoints)": deployment_world,
}


@pytest.mark.parametrize("kind", sorted(WORLDS))
@checks_something
@settings(
    max_examples=examples(100),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_missing_empty_stale_or_lagging_inputs_never_drop_what_is_still_wanted(
    kind: str, data: st.DataObject
) -> None:
    world = data.draw(WORLDS[kind](), label="world")
    truth = run(world.composite, world.observed, world.required)
    assert truth is not None
    wanted = truth & set(world.observed)
    got = run(world.composite, world.observed, data.draw(degraded_required(world), label="inputs"))
    if got is None:
        vacuous("the degraded inputs' response is Fatal")
        return
    if world.own is not None:
        # A deployment's replicas are the fleet-wide property's; here, an endpoint goes only
        # with its replica.
        wanted = {k for k in wanted if k.startswith("endpoint-") and f"replica-{k[9:]}" in got}
    assert not sorted(wanted - got), f"{kind} dropped {sorted(wanted - got)}"
