"""The ModelService composition: its endpoints selected in its own namespace only, routes on every
gateway that serves it and on every cluster holding its replicas, weights honoured, a 503 (not a
404) while nothing is ready, and conditions read from the observed routes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from modelplane.compose.modelservice.composer import (
    GATEWAYS,
    compose_service,
    endpoints_requirement,
)
from modelplane.compose.shared.frontdoor import (
    ENDPOINT_HEADER,
    POOL_HEADER,
    cluster_backend_name,
    unavailable_filter_name,
)
from modelplane.composer import Inputs, Result
from tests.compose.modelservice.kit import (
    again,
    cluster,
    condition,
    external_endpoint,
    gateway,
    invalid,
    manifests,
    observed,
    replica_endpoint,
    service,
    service_inputs,
)

Obj = dict[str, Any]
STABLE = {"modelplane.ai/deployment": "stable"}
CANARY = {"modelplane.ai/deployment": "canary"}
PROVIDER = {"modelplane.ai/external-provider": "together"}


def canary(ready: bool = True) -> Inputs:
    """90/10: two stable replicas on east, one canary on west."""
    ms = service("qwen", "ml", (90, STABLE), (10, CANARY))
    stable = [replica_endpoint(f"stable-{i}", "east", labels=STABLE, ready=ready) for i in (0, 1)]
    return service_inputs(
        ms, [stable, [replica_endpoint("canary-0", "west", labels=CANARY, ready=ready)]]
    )


def recomposed(i: Inputs) -> Result:
    return again(compose_service, i, compose_service(i))


def rule(result: Result, key: str, index: int = 0) -> Obj:
    return manifests(result)[key]["spec"]["rules"][index]


def weights(refs: list[Obj]) -> dict[str, int]:
    return {r["name"]: r["weight"] for r in refs}


# --- selection ----------------------------------------------------------------------------------


def test_each_entry_selects_endpoints_in_the_services_own_namespace_only() -> None:
    result = compose_service(Inputs(composite=service("qwen", "ml", (1, STABLE), (1, CANARY))))
    for i, labels in enumerate((STABLE, CANARY)):
        requirement = result.requirements[endpoints_requirement(i)]
        assert (requirement.kind, requirement.namespace) == ("ModelEndpoint", "ml")
        assert requirement.match_labels == labels


def test_another_namespaces_endpoint_with_the_same_labels_gets_no_traffic() -> None:
    theirs = replica_endpoint("stable-0", "west", namespace="other-team", labels=STABLE)
    ours = replica_endpoint("stable-0", "east", labels=STABLE)
    result = compose_service(service_inputs(service("qwen", "ml", (1, STABLE)), [[theirs, ours]]))
    assert sorted(k for k in result.resources if k.startswith("fleet/")) == ["fleet/east"]
    assert result.status["endpoints"] == {"matched": 1, "ready": 1}


def test_an_endpoint_two_entries_select_belongs_to_the_first() -> None:
    shared = replica_endpoint("both", "east", labels=STABLE)
    result = compose_service(
        service_inputs(service("qwen", "ml", (3, {}), (1, STABLE)), [[shared], [shared]])
    )
    assert result.status["endpoints"] == {"matched": 1, "ready": 1}
    assert (
        "entry 1 (weight 1): 0 matched, 0 ready" in condition(result, "EndpointsResolved").message
    )


# --- the routes ---------------------------------------------------------------------------------


def lanes(refs: list[Obj]) -> list[tuple[str, int, str]]:
    """(Backend, weight, pool header set) per backendRef."""
    return [
        (
            r["name"],
            r["weight"],
            next(
                (
                    h["value"]
                    for f in r.get("filters") or []
                    for h in f["requestHeaderModifier"].get("set") or []
                    if h["name"] == POOL_HEADER
                ),
                "",
            ),
        )
        for r in refs
    ]


def test_the_front_route_keeps_the_path_and_sends_each_replica_its_share_over_the_fleet_hop() -> (
    None
):
    result = compose_service(canary())
    front = manifests(result)["front/main"]
    assert front["metadata"]["namespace"] == "modelplane-system"
    assert front["spec"]["hostnames"] == ["main.example.com"]
    assert front["spec"]["parentRefs"] == [
        {
            "group": "gateway.networking.k8s.io",
            "kind": "Gateway",
            "name": "main-front",
            "namespace": "modelplane-system",
            "sectionName": "https",
        }
    ]
    r = rule(result, "front/main")
    assert r["matches"] == [{"path": {"type": "PathPrefix", "value": "/ml/qwen/"}}]
    assert "filters" not in r  # the path reaches the cluster as the client sent it
    east, west = cluster_backend_name("main", "east"), cluster_backend_name("main", "west")
    assert lanes(r["backendRefs"]) == [
        (east, 9, "stable-0-pool"),
        (east, 9, "stable-1-pool"),
        (west, 2, "canary-0-pool"),
    ]
    assert {(b["group"], b["kind"]) for b in r["backendRefs"]} == {
        ("gateway.envoyproxy.io", "Backend")
    }
    assert r["timeouts"] == {"request": "0s"}


def test_the_fleet_route_strips_the_prefix_and_names_one_pool_per_rule_chosen_by_header() -> None:
    result = compose_service(canary())
    east = manifests(result)["fleet/east"]
    assert result.resources["fleet/east"].resource["spec"]["providerConfigRef"]["name"] == "pc-east"
    assert east["metadata"] == {
        "name": "qwen-fleet",
        "namespace": "ml",
        "labels": {"app.kubernetes.io/managed-by": "modelplane"},
    }
    assert east["spec"]["parentRefs"] == [
        {
            "group": "gateway.networking.k8s.io",
            "kind": "Gateway",
            "name": "inference-gateway",
            "namespace": "modelplane-system",
            "sectionName": "fleet",
        }
    ]
    rules = east["spec"]["rules"]
    for r in rules:
        assert r["filters"] == [
            {
                "type": "URLRewrite",
                "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}},
            }
        ]
    assert [(r["matches"], r["backendRefs"]) for r in rules] == [
        (
            [
                {
                    "path": {"type": "PathPrefix", "value": "/ml/qwen/"},
                    "headers": [{"type": "Exact", "name": POOL_HEADER, "value": pool}],
                }
            ],
            [{"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": pool}],
        )
        for pool in ("stable-0-pool", "stable-1-pool")
    ]


def test_a_timeout_applies_to_every_hop() -> None:
    ms = service("qwen", "ml", (1, STABLE), timeout="5m")
    result = compose_service(service_inputs(ms, [[replica_endpoint("s0", "east", labels=STABLE)]]))
    assert {rule(result, k)["timeouts"]["request"] for k in ("front/main", "fleet/east")} == {"5m"}


def test_an_entry_with_nothing_ready_gives_its_share_to_the_others() -> None:
    i = canary()
    i.required[endpoints_requirement(1)][0].pop("status")
    result = compose_service(i)
    assert {r["name"] for r in rule(result, "front/main")["backendRefs"]} == {
        cluster_backend_name("main", "east")
    }
    assert "fleet/west" not in result.resources
    assert "its share goes to the other entries" in condition(result, "EndpointsResolved").message


def test_sixteen_replicas_on_one_cluster_get_sixteen_lanes_and_sixteen_single_pool_rules() -> None:
    many = [replica_endpoint(f"s{i:02}", "east", labels=STABLE) for i in range(16)]
    result = compose_service(service_inputs(service("qwen", "ml", (1, STABLE)), [many]))
    front = lanes(rule(result, "front/main")["backendRefs"])
    assert [(w, pool) for _, w, pool in front] == [(1, f"s{i:02}-pool") for i in range(16)]
    rules = manifests(result)["fleet/east"]["spec"]["rules"]
    assert [[b["name"] for b in r["backendRefs"]] for r in rules] == [
        [f"s{i:02}-pool"] for i in range(16)
    ]
    assert invalid(result) == {}


def test_past_16_lanes_the_smallest_are_left_out_and_named() -> None:
    fleet = [cluster("edge"), *(cluster(f"c{i:02}") for i in range(17))]
    ms = service("qwen", "ml", (1, STABLE), (1, CANARY))
    big = [replica_endpoint(f"a{i:02}", f"c{i:02}", labels=STABLE) for i in range(16)]
    small = [replica_endpoint("b", "c16", labels=CANARY)]
    # 16 lanes of 1/32 each and one of 1/2: one of the 1/32 lanes goes.
    result = recomposed(service_inputs(ms, [big, small], fleet=fleet))
    assert len(rule(result, "front/main")["backendRefs"]) == 16
    routing = condition(result, "RoutingReady")
    assert (routing.status, routing.reason) == ("False", "TooManyBackends")
    assert "cluster c15" in routing.message


# --- nothing ready --------------------------------------------------------------------------------


def test_with_no_ready_endpoint_the_route_stays_and_answers_503_with_a_clear_body() -> None:
    result = compose_service(canary(ready=False))
    r = rule(result, "front/main")
    # Its one lane is the sentinel lane, answered on the gateway's own cluster by the filter.
    [ref] = r["backendRefs"]
    assert ref["name"] == cluster_backend_name("main", "edge")
    assert "filters" not in r
    [sentinel] = rule(result, "unavailable-route/main")["filters"]
    assert sentinel["extensionRef"]["name"] == unavailable_filter_name("main", "ml", "qwen")
    response = manifests(result)["unavailable/main"]["spec"]["directResponse"]
    assert (response["statusCode"], response["contentType"]) == (503, "application/json")
    body = json.loads(response["body"]["inline"])
    assert body["error"]["message"] == "ModelService ml/qwen has no ready endpoint; retry later"
    assert not [k for k in result.resources if k.startswith("fleet/")]


def test_with_no_ready_endpoint_the_503_tells_callers_when_to_retry() -> None:
    response = manifests(compose_service(canary(ready=False)))["unavailable/main"]
    header = response["spec"]["directResponse"]["header"]
    assert header == {"set": [{"name": "Retry-After", "value": "30"}]}


def test_with_no_ready_endpoint_the_service_is_not_ready_even_once_its_route_is_programmed() -> (
    None
):
    result = recomposed(canary(ready=False))
    assert result.resources["front/main"].ready == "False"
    resolved, routing = condition(result, "EndpointsResolved"), condition(result, "RoutingReady")
    assert (resolved.status, resolved.reason) == ("False", "NoReadyEndpoints")
    assert resolved.message.startswith("3 matched in namespace ml, 0 ready")
    assert (routing.status, routing.reason) == ("False", "NoReadyEndpoints")
    assert routing.message == "the routes on gateway main answer 503 until an endpoint is ready"
    assert result.status["gateways"] == [
        {"name": "main", "routingReady": False, "address": "https://main.example.com/ml/qwen"}
    ]


def test_no_matching_endpoint_keeps_the_route_says_so_and_warns() -> None:
    result = compose_service(service_inputs(service("qwen", "ml", (1, STABLE)), [[]]))
    assert "front/main" in result.resources
    resolved = condition(result, "EndpointsResolved")
    assert (resolved.status, resolved.reason) == ("False", "NoEndpoints")
    assert "modelplane.ai/deployment=stable" in resolved.message
    assert [e.severity for e in result.events] == ["Warning"]


# --- external endpoints ---------------------------------------------------------------------


def overflow() -> Inputs:
    ms = service("kimi", "ml", (9, STABLE), (1, PROVIDER))
    auth = {"secretRef": {"name": "key"}}
    provider = external_endpoint(
        "together", "https://api.groq.com/openai/v1", labels=PROVIDER, rewrite="/openai/", auth=auth
    )
    return service_inputs(ms, [[replica_endpoint("s0", "east", labels=STABLE)], [provider]])


def test_an_external_endpoints_lane_goes_through_the_gateways_own_cluster_by_header() -> None:
    refs = rule(compose_service(overflow()), "front/main")["backendRefs"]
    by_name = {r["name"]: r for r in refs}
    edge = by_name[cluster_backend_name("main", "edge")]
    assert edge["weight"] == 1
    assert edge["filters"] == [
        {
            "type": "RequestHeaderModifier",
            "requestHeaderModifier": {
                "set": [{"name": ENDPOINT_HEADER, "value": "together"}],
                "remove": [POOL_HEADER],
            },
        }
    ]
    east = by_name[cluster_backend_name("main", "east")]
    assert east["weight"] == 9
    assert east["filters"][0]["requestHeaderModifier"] == {
        "set": [{"name": POOL_HEADER, "value": "s0-pool"}],
        "remove": [ENDPOINT_HEADER],
    }


def test_the_egress_route_rewrites_to_the_providers_path_and_host_with_its_credential() -> None:
    result = compose_service(overflow())
    egress = manifests(result)["egress/edge/together"]
    assert result.resources["egress/edge/together"].resource["spec"]["providerConfigRef"][
        "name"
    ] == ("pc-edge")
    assert egress["metadata"]["namespace"] == "ml"
    assert egress["spec"]["parentRefs"][0]["sectionName"] == "fleet"
    [r] = egress["spec"]["rules"]
    assert r["matches"] == [
        {
            "path": {"type": "PathPrefix", "value": "/ml/kimi/"},
            "headers": [{"type": "Exact", "name": ENDPOINT_HEADER, "value": "together"}],
        }
    ]
    assert r["filters"] == [
        {
            "type": "RequestHeaderModifier",
            "requestHeaderModifier": {"remove": [ENDPOINT_HEADER, POOL_HEADER]},
        },
        {
            "type": "URLRewrite",
            "urlRewrite": {
                "path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/openai/"},
                "hostname": "api.groq.com",
            },
        },
        {
            "type": "ExtensionRef",
            "extensionRef": {
                "group": "gateway.envoyproxy.io",
                "kind": "HTTPRouteFilter",
                "name": "together-credential",
            },
        },
    ]
    assert r["backendRefs"] == [
        {"group": "gateway.envoyproxy.io", "kind": "Backend", "name": "together-external"}
    ]


def test_an_external_endpoint_is_routed_from_every_gateways_cluster_once() -> None:
    gateways = [gateway("a", "edge"), gateway("b", "edge"), gateway("c", "west")]
    result = compose_service(
        service_inputs(overflow().composite, list(_selected(overflow()).values()), gateways)
    )
    assert sorted(k for k in result.resources if k.startswith("egress/")) == [
        "egress/edge/together",
        "egress/west/together",
    ]


def _selected(i: Inputs) -> dict[str, list[Obj]]:
    return {k: v for k, v in i.required.items() if k.startswith("endpoints-")}


def test_an_external_endpoint_without_a_backend_yet_is_left_out() -> None:
    i = overflow()
    i.required[endpoints_requirement(1)][0].pop("status")
    result = compose_service(i)
    assert not [k for k in result.resources if k.startswith("egress/")]
    assert len(rule(result, "front/main")["backendRefs"]) == 1


def test_an_endpoint_naming_what_no_gateway_may_reach_is_left_out_whatever_it_publishes() -> None:
    # An endpoint admitted under an older definition may still publish a backend.
    i = overflow()
    i.required[endpoints_requirement(1)][0]["spec"]["url"] = "http://169.254.169.254/latest/"
    result = compose_service(i)
    assert not [k for k in result.resources if k.startswith("egress/")]
    assert len(rule(result, "front/main")["backendRefs"]) == 1


# --- gateways -----------------------------------------------------------------------------------


def test_a_gateways_service_selector_decides_whether_it_serves_the_service() -> None:
    gateways = [
        gateway("us", "edge", selector={"region": "us"}),
        gateway("eu", "west", selector={"region": "eu"}),
        gateway("all", "east"),
    ]
    ms = service("qwen", "ml", (1, STABLE), labels={"region": "eu"})
    result = compose_service(
        service_inputs(ms, [[replica_endpoint("s0", "east", labels=STABLE)]], gateways)
    )
    assert sorted(k for k in result.resources if k.startswith("front/")) == [
        "front/all",
        "front/eu",
    ]


def test_no_gateway_serving_the_service_is_said() -> None:
    result = compose_service(service_inputs(service("qwen", "ml", (1, STABLE)), [[]], gateways=[]))
    routing = condition(result, "RoutingReady")
    assert (routing.status, routing.reason) == ("False", "NoGateway")


def test_a_gateway_whose_cluster_cannot_be_written_is_named() -> None:
    fleet = [cluster("edge", provider=False), cluster("east")]
    result = recomposed(
        service_inputs(
            service("qwen", "ml", (1, STABLE)),
            [[replica_endpoint("s", "east", labels=STABLE)]],
            fleet=fleet,
        )
    )
    routing = condition(result, "RoutingReady")
    assert routing.reason == "NoGateway"
    assert "main: its cluster edge publishes no providerConfigRef" in routing.message


# --- conditions and status read from the observed routes ---------------------------------------


def test_routing_is_configuring_until_every_route_is_observed_programmed() -> None:
    first = compose_service(canary())
    routing = condition(first, "RoutingReady")
    assert (routing.status, routing.reason) == ("False", "Configuring")
    assert routing.message == (
        "not accepted yet: route on gateway main; fleet route on cluster east; "
        "fleet route on cluster west"
    )
    assert "address" not in first.status


def test_once_programmed_on_every_gateway_the_service_is_ready_with_an_address_per_gateway() -> (
    None
):
    gateways = [
        gateway("b", "edge", address="198.51.100.2"),
        gateway("a", "west", address="203.0.113.1"),
    ]
    i = canary()
    i = service_inputs(i.composite, list(_selected(i).values()), gateways)
    result = recomposed(i)
    routing = condition(result, "RoutingReady")
    assert (routing.status, routing.reason) == ("True", "Accepted")
    assert routing.message == (
        "accepted, every backend resolved, on gateways a, b, to cluster east, cluster west "
        "(the gateways do not report their proxies' configuration)"
    )
    assert {k: v for k, v in result.status.items() if k not in ("entries", "activation")} == {
        "endpoints": {"matched": 3, "ready": 3},
        "gateways": [
            {"name": "a", "routingReady": True, "address": "https://a.example.com/ml/qwen"},
            {"name": "b", "routingReady": True, "address": "https://b.example.com/ml/qwen"},
        ],
        "address": "https://a.example.com/ml/qwen",
    }
    resolved = condition(result, "EndpointsResolved")
    assert (resolved.status, resolved.reason) == ("True", "Resolved")
    assert resolved.message == (
        "3 matched in namespace ml, 3 ready: entry 0 (weight 90): 2 matched, 2 ready; "
        "entry 1 (weight 10): 1 matched, 1 ready"
    )
    assert {d.ready for d in result.resources.values()} == {"True"}


def test_a_route_whose_gateway_did_not_resolve_its_backends_is_named() -> None:
    i = canary()
    first = compose_service(i)
    seen = observed(first)
    manifest = seen["fleet/west"]["status"]["atProvider"]["manifest"]
    for parent in manifest["status"]["parents"]:
        for c in parent["conditions"]:
            if c["type"] == "ResolvedRefs":
                c["status"] = "False"
    seen["fleet/west"]["status"]["conditions"][0]["status"] = "False"
    result = compose_service(Inputs(composite=i.composite, required=i.required, observed=seen))
    routing = condition(result, "RoutingReady")
    assert (routing.status, routing.message) == (
        "False",
        "not accepted yet: fleet route on cluster west",
    )
    assert result.status["gateways"][0]["routingReady"] is False


def test_until_endpoints_and_gateways_are_read_everything_is_kept_as_it_was() -> None:
    done = recomposed(canary())
    published = {**canary().composite, "status": done.status}
    held = compose_service(
        Inputs(composite=published, observed={k: d.resource for k, d in done.resources.items()})
    )
    assert set(held.resources) == set(done.resources)
    assert held.status == done.status
    assert condition(held, "RoutingReady").status == "Unknown"


# --- validity and determinism --------------------------------------------------------------------


@pytest.mark.parametrize("case", ["canary", "nothing-ready", "overflow"])
def test_every_composed_object_passes_its_schema(case: str) -> None:
    i = {"canary": canary(), "nothing-ready": canary(ready=False), "overflow": overflow()}[case]
    assert invalid(compose_service(i)) == {}


def test_long_names_still_give_dns_labels_that_pass_their_schemas() -> None:
    long = "x" * 63
    ms = service(long, "n" * 63, (1, STABLE))
    endpoint = replica_endpoint("r" * 63, "east", namespace="n" * 63, labels=STABLE)
    gw = gateway("g" * 63, "edge", hostname="h" * 60 + ".example.com")
    assert invalid(compose_service(service_inputs(ms, [[endpoint]], [gw]))) == {}


def test_the_same_inputs_compose_the_same_output() -> None:
    assert compose_service(overflow()) == compose_service(overflow())


def test_a_gateway_whose_cluster_stops_being_writable_keeps_its_routes_as_they_are() -> None:
    i = overflow()
    done = recomposed(i)
    fleet = [cluster("edge", provider=False), cluster("east"), cluster("west")]
    later = service_inputs(i.composite, list(_selected(i).values()), fleet=fleet)
    seen = {k: d.resource for k, d in done.resources.items()}
    result = compose_service(
        Inputs(composite=later.composite, required=later.required, observed=seen)
    )
    for key in ("front/main", "unavailable/main", "egress/edge/together"):
        assert result.resources[key].resource["spec"] == done.resources[key].resource["spec"], key
    assert condition(result, "RoutingReady").message == (
        "no InferenceGateway can serve this service now: "
        "main: its cluster edge publishes no providerConfigRef"
    )


def test_a_clusters_route_goes_only_after_the_front_routes_stop_sending_it_traffic() -> None:
    i = canary()
    done = recomposed(i)
    i.required[endpoints_requirement(1)].clear()  # the canary's endpoint deleted: asked for by
    i.required["endpoint/ml/canary-0"] = []  # name, nothing comes back
    seen = {k: d.resource for k, d in done.resources.items()}
    first = compose_service(Inputs(composite=i.composite, required=i.required, observed=seen))
    west = cluster_backend_name("main", "west")
    assert west not in weights(rule(first, "front/main")["backendRefs"])
    assert first.resources["fleet/west"].resource == done.resources["fleet/west"].resource
    then = again(compose_service, i, first)
    assert "fleet/west" not in then.resources


def test_with_no_gateway_listed_the_routes_on_gateways_are_kept_as_they_are() -> None:
    i = overflow()
    done = recomposed(i)
    i.required[GATEWAYS].clear()
    seen = {k: d.resource for k, d in done.resources.items()}
    result = compose_service(Inputs(composite=i.composite, required=i.required, observed=seen))
    for key in ("front/main", "unavailable/main", "egress/edge/together"):
        assert result.resources[key].resource == done.resources[key].resource, key
