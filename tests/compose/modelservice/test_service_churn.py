"""A ModelService under ambiguous lists, through the FunctionRunner: a backend leaves its route
only on evidence (its endpoint listed and not ready, asked for by name and gone, or found no
longer selected), never because a list came back empty or short or a status is not written."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.modelservice.composer import endpoints_requirement
from modelplane.simulate import simulate_observed
from tests.compose.through import Response, reconcile, run, settled
from tests.fleet.builders import with_condition

from .kit import cluster, external_endpoint, gateway, replica_endpoint, service

Obj = dict[str, Any]
STABLE = {"track": "stable"}
PAID = {"track": "paid"}
MS = service("qwen", "ml", (9, STABLE), (1, PAID))


def truth() -> dict[str, list[Obj] | None]:
    """Two replicas on east, one on west, and a paid external provider taking a tenth."""
    return {
        "inference-gateways": [gateway("main", "edge")],
        "inference-clusters": [cluster("edge", pools=False), cluster("east"), cluster("west")],
        endpoints_requirement(0): [
            replica_endpoint("r0", "east", labels=STABLE),
            replica_endpoint("r1", "east", labels=STABLE),
            replica_endpoint("r2", "west", labels=STABLE),
        ],
        endpoints_requirement(1): [external_endpoint("paid", labels=PAID)],
    }


def steady() -> dict[str, Obj]:
    """What the service composes once it has reconciled twice, observed ready."""
    observed = settled(MS, truth())
    return simulate_observed(copy.deepcopy(reconcile(MS, observed, truth()).resources), 1)


def backends(rsp: Response) -> dict[str, list[str]]:
    """Each route's backendRef names, by composition resource name."""
    assert rsp.fatal is None, rsp.fatal
    out = {}
    for key, obj in sorted(rsp.resources.items()):
        manifest = obj["spec"].get("forProvider", {}).get("manifest", {})
        if manifest.get("kind") == "HTTPRoute":
            out[key] = sorted(
                ref["name"]
                for rule in manifest["spec"]["rules"]
                for ref in rule.get("backendRefs", [])
            )
    return out


def before() -> dict[str, list[str]]:
    return backends(run(MS, steady(), truth()))


def test_an_empty_endpoint_list_asks_by_name_and_rewrites_no_route_meanwhile() -> None:
    required = truth()
    required[endpoints_requirement(0)] = []
    rsp = run(MS, steady(), required)
    assert backends(rsp) == before()
    assert rsp.condition("EndpointsResolved")[0] == "Unknown"


def test_endpoints_found_by_name_after_an_empty_list_keep_their_backends() -> None:
    required = truth()
    listed = required[endpoints_requirement(0)] or []
    required[endpoints_requirement(0)] = []
    for endpoint in listed:
        required[f"endpoint/ml/{endpoint['metadata']['name']}"] = [endpoint]
    assert backends(run(MS, steady(), required)) == before()


def test_one_endpoint_missing_from_a_list_that_holds_others_keeps_its_backend() -> None:
    required = truth()
    [r0, r1, r2] = required[endpoints_requirement(0)] or []
    required[endpoints_requirement(0)] = [r0, r1]
    required["endpoint/ml/r2"] = [r2]
    assert backends(run(MS, steady(), required)) == before()


def test_endpoints_listed_without_status_keep_their_backends() -> None:
    required = truth()
    required[endpoints_requirement(0)] = [
        {k: v for k, v in e.items() if k != "status"}
        for e in required[endpoints_requirement(0)] or []
    ]
    assert backends(run(MS, steady(), required)) == before()


def test_a_cluster_listed_without_status_keeps_its_lane() -> None:
    required = truth()
    clusters = required["inference-clusters"] or []
    required["inference-clusters"] = [
        {k: v for k, v in c.items() if k != "status"} if c["metadata"]["name"] == "west" else c
        for c in clusters
    ]
    assert backends(run(MS, steady(), required)) == before()


def test_an_endpoint_listed_not_ready_leaves_the_route() -> None:
    required = truth()
    [r0, r1, r2] = required[endpoints_requirement(0)] or []
    r2 = with_condition({**r2, "status": {}}, "RoutingReady", "False", "WaitingForGateway")
    required[endpoints_requirement(0)] = [r0, r1, r2]
    after = backends(run(MS, steady(), required))
    assert after["front/main"] != before()["front/main"]
    assert len(after["front/main"]) == len(before()["front/main"]) - 1


def test_an_endpoint_gone_by_name_leaves_the_route() -> None:
    required = truth()
    [r0, r1, _] = required[endpoints_requirement(0)] or []
    required[endpoints_requirement(0)] = [r0, r1]
    required["endpoint/ml/r2"] = []
    after = backends(run(MS, steady(), required))
    assert len(after["front/main"]) == len(before()["front/main"]) - 1


def test_an_endpoint_found_no_longer_selected_leaves_the_route() -> None:
    required = truth()
    [r0, r1, r2] = required[endpoints_requirement(0)] or []
    required[endpoints_requirement(0)] = [r0, r1]
    required["endpoint/ml/r2"] = [{**r2, "metadata": {**r2["metadata"], "labels": {}}}]
    after = backends(run(MS, steady(), required))
    assert len(after["front/main"]) == len(before()["front/main"]) - 1


def two_gateways() -> dict[str, list[Obj] | None]:
    required = truth()
    required["inference-gateways"] = [gateway("main", "edge"), gateway("side", "edge")]
    return required


def settled_on_two() -> dict[str, Obj]:
    observed: dict[str, Obj] = {}
    for _ in range(2):
        rsp = run(MS, observed, two_gateways())
        observed = simulate_observed(copy.deepcopy(rsp.resources), 1)
    return observed


def test_a_gateway_missing_from_a_list_that_holds_others_keeps_its_routes() -> None:
    observed = settled_on_two()
    required = two_gateways()
    required["inference-gateways"] = [gateway("main", "edge")]
    assert "front/side" in run(MS, observed, required).resources
    required["gateway/side"] = [gateway("side", "edge")]
    assert "front/side" in run(MS, observed, required).resources


def test_a_gateway_gone_by_name_loses_its_routes() -> None:
    observed = settled_on_two()
    required = two_gateways()
    required["inference-gateways"] = [gateway("main", "edge")]
    required["gateway/side"] = []
    rsp = run(MS, observed, required)
    assert "front/side" not in rsp.resources and "front/main" in rsp.resources


def test_lanes_kept_for_endpoints_listed_without_status_are_named_in_the_status() -> None:
    required = truth()
    required[endpoints_requirement(0)] = [
        {k: v for k, v in e.items() if k != "status"} if e["metadata"]["name"] == "r2" else e
        for e in required[endpoints_requirement(0)] or []
    ]
    rsp = run(MS, steady(), required)
    status, reason, message = rsp.condition("EndpointsResolved")
    assert (status, reason) == ("True", "CarriedForward")
    assert "r2 (publishes no status.routing.backendName yet)" in message
    assert "r0 (" not in message and "r1 (" not in message


def test_lanes_kept_on_a_cluster_listed_without_status_are_named_in_the_status() -> None:
    required = truth()
    required["inference-clusters"] = [
        {k: v for k, v in c.items() if k != "status"} if c["metadata"]["name"] == "west" else c
        for c in required["inference-clusters"] or []
    ]
    rsp = run(MS, steady(), required)
    status, reason, message = rsp.condition("EndpointsResolved")
    assert (status, reason) == ("True", "CarriedForward")
    assert "r2 (its cluster west publishes no providerConfigRef)" in message


def without_west() -> dict[str, list[Obj] | None]:
    """The truth with west missing from the cluster list (a lagging list, or west deleted)."""
    required = truth()
    required["inference-clusters"] = [
        c for c in required["inference-clusters"] or [] if c["metadata"]["name"] != "west"
    ]
    return required


def test_a_cluster_not_listed_is_asked_for_by_name_and_no_route_changes_meanwhile() -> None:
    rsp = run(MS, steady(), without_west())
    assert backends(rsp) == before()
    status, _, message = rsp.condition("EndpointsResolved")
    assert status == "Unknown" and "InferenceCluster west by name" in message


def test_a_cluster_not_listed_but_found_by_name_keeps_its_lanes() -> None:
    required = without_west()
    required["cluster/west"] = [cluster("west")]
    rsp = run(MS, steady(), required)
    assert backends(rsp) == before()
    assert rsp.condition("EndpointsResolved")[:2] == ("True", "Resolved")


def test_a_cluster_gone_by_name_loses_its_lanes_and_fleet_route() -> None:
    required = without_west()
    required["cluster/west"] = []
    after = backends(run(MS, steady(), required))
    assert len(after["front/main"]) == len(before()["front/main"]) - 1
    assert "fleet/west" not in after


def test_a_cluster_gone_by_name_is_named_in_the_status() -> None:
    required = without_west()
    required["cluster/west"] = []
    message = run(MS, steady(), required).condition("EndpointsResolved")[2]
    assert "r2: its cluster west is deleted (asked for by name, not found)" in message


def test_a_service_serving_on_carried_lanes_stays_as_ready_as_its_routes_say() -> None:
    stale = truth()
    stale[endpoints_requirement(0)] = [
        {k: v for k, v in e.items() if k != "status"} for e in stale[endpoints_requirement(0)] or []
    ]
    observed = steady()
    carried, resolved = run(MS, observed, stale), run(MS, observed, truth())
    assert carried.condition("RoutingReady") == resolved.condition("RoutingReady")
    assert carried.composite_ready == resolved.composite_ready
    assert resolved.condition("EndpointsResolved")[:2] == ("True", "Resolved")
