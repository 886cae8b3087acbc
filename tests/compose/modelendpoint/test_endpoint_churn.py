"""A ModelEndpoint keeps the routing it published on no evidence, through the FunctionRunner: a
replica endpoint whose cluster's gateway status is not written yet, an external endpoint whose
backend is not ready yet on one more cluster, a gateway missing from the list (asked for by name
before its cluster's objects go). A ModelService routes by what it publishes."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from modelplane.simulate import simulate_observed
from tests.compose.modelservice.kit import cluster, external_endpoint, gateway, replica_endpoint
from tests.compose.through import run
from tests.fleet.builders import with_condition

Obj = dict[str, Any]


def published(endpoint: Obj) -> Obj:
    out = copy.deepcopy(endpoint)
    out["status"] = {"routing": {"backendName": "r0-pool", "clusterName": "c0"}}
    return out


def test_a_replica_endpoint_keeps_its_routing_while_its_cluster_has_no_gateway_status() -> None:
    endpoint = published(replica_endpoint("r0", "c0", ready=False))
    c0 = cluster("c0")
    del c0["status"]["gateway"]["address"]
    rsp = run(endpoint, {}, {"cluster": [c0]})
    assert rsp.status["routing"]["backendName"] == "r0-pool"
    assert rsp.condition("RoutingReady")[:2] == ("True", "ClusterReachable")


def test_a_replica_endpoint_whose_cluster_gateway_is_not_ready_stops_routing() -> None:
    endpoint = published(replica_endpoint("r0", "c0", ready=False))
    c0 = cluster("c0")
    del c0["status"]["gateway"]["address"]
    c0 = with_condition(c0, "GatewayReady", "False", "GatewayNotProgrammed")
    rsp = run(endpoint, {}, {"cluster": [c0]})
    assert "routing" not in rsp.status
    assert rsp.condition("RoutingReady")[:2] == ("False", "WaitingForGateway")


def test_an_external_endpoint_keeps_its_backend_name_while_a_new_gateway_is_set_up() -> None:
    clusters = [cluster("edge", pools=False), cluster("c1")]
    first = {"inference-gateways": [gateway("g0", "edge")], "inference-clusters": clusters}
    endpoint = external_endpoint("x", ready=False)
    observed: dict[str, Obj] = {}
    for _ in range(2):
        rsp = run(endpoint, observed, first)
        observed = simulate_observed(copy.deepcopy(rsp.resources), 1)
    endpoint["status"] = {"routing": rsp.status["routing"]}
    more = {**first, "inference-gateways": [gateway("g0", "edge"), gateway("g1", "c1")]}
    rsp = run(endpoint, observed, more)
    assert rsp.status["routing"] == endpoint["status"]["routing"]
    assert rsp.condition("RoutingReady")[:2] == ("False", "WaitingForBackend")


def two_hosts() -> dict[str, list[Obj] | None]:
    """Gateways on two clusters: g0 on edge, g1 on c1."""
    return {
        "inference-gateways": [gateway("g0", "edge"), gateway("g1", "c1")],
        "inference-clusters": [cluster("edge", pools=False), cluster("c1")],
    }


def settled_on_two_hosts() -> tuple[Obj, dict[str, Obj]]:
    endpoint = external_endpoint("x", ready=False)
    observed: dict[str, Obj] = {}
    for _ in range(2):
        rsp = run(endpoint, observed, two_hosts())
        observed = simulate_observed(copy.deepcopy(rsp.resources), 1)
    endpoint["status"] = {"routing": rsp.status["routing"]}
    return endpoint, observed


def on_c1(keys: Iterable[str]) -> list[str]:
    return sorted(k for k in keys if k.endswith("/c1"))


def test_a_gateway_missing_from_a_list_that_lists_others_is_asked_for_by_name() -> None:
    endpoint, observed = settled_on_two_hosts()
    required = {**two_hosts(), "inference-gateways": [gateway("g0", "edge")]}
    rsp = run(endpoint, observed, required)
    assert rsp.by_name["gateway/g1"] == ("InferenceGateway", "g1", None)
    assert on_c1(rsp.resources) == on_c1(observed)
    assert rsp.status["routing"] == endpoint["status"]["routing"]
    assert rsp.condition("RoutingReady")[:2] == ("Unknown", "Waiting")


def test_a_gateway_found_by_name_keeps_its_cluster_s_objects_and_the_routing() -> None:
    endpoint, observed = settled_on_two_hosts()
    required = {**two_hosts(), "inference-gateways": [gateway("g0", "edge")]}
    required["gateway/g1"] = [gateway("g1", "c1")]
    rsp = run(endpoint, observed, required)
    assert on_c1(rsp.resources) == on_c1(observed)
    assert rsp.condition("RoutingReady")[:2] == ("True", "BackendConfigured")


def test_a_gateway_gone_by_name_takes_its_cluster_s_objects_with_it() -> None:
    endpoint, observed = settled_on_two_hosts()
    required = {**two_hosts(), "inference-gateways": [gateway("g0", "edge")]}
    required["gateway/g1"] = []
    rsp = run(endpoint, observed, required)
    assert on_c1(rsp.resources) == []
    assert any(k.endswith("/edge") for k in rsp.resources)
    assert rsp.condition("RoutingReady")[:2] == ("True", "BackendConfigured")


def test_every_gateway_gone_by_name_after_an_empty_list_takes_every_object() -> None:
    endpoint, observed = settled_on_two_hosts()
    required = {**two_hosts(), "inference-gateways": [], "gateway/g0": [], "gateway/g1": []}
    rsp = run(endpoint, observed, required)
    assert rsp.resources == {}
    assert rsp.condition("RoutingReady")[:2] == ("False", "NoGateway")
