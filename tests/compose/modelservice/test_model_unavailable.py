"""By model name, a service with no ready lane (or every lane parked) answers 503 with the path
form's body, not Envoy Gateway's 500: its model rule gets a sentinel lane to the gateway's own
cluster's fleet listener, where a route answers it with the 503 filter (``unavailable.py``;
tests/conformance/test_envoy_ai_gateway_unavailable.py cites the upstream behaviours)."""

from __future__ import annotations

from typing import Any

from modelplane.compose.modelservice.composer import compose_service
from modelplane.compose.modelservice.unavailable import SENTINEL_HEADER, SENTINEL_VALUE
from modelplane.compose.shared.frontdoor import (
    ENDPOINT_HEADER,
    FLEET_LISTENER,
    POOL_HEADER,
    cluster_backend_name,
)
from modelplane.composer import Inputs, Result
from tests.compose.modelservice.kit import (
    invalid,
    manifests,
    observed,
    replica_endpoint,
    service,
    service_inputs,
)
from tests.compose.modelservice.test_models import STABLE, model_rule, overflow

Obj = dict[str, Any]
BACKEND = "unavailable-backend/main"
ROUTE = "unavailable-route/main"


def sentinel_refs(result: Result) -> list[Obj]:
    name = manifests(result)[BACKEND]["metadata"]["name"]
    return [r for r in model_rule(result)["backendRefs"] if r["name"] == name]


def parked() -> Inputs:
    """Every entry at weight 0, a replica ready behind each."""
    ms = service("qwen", "ml", (0, STABLE))
    return service_inputs(ms, [[replica_endpoint("stable-east", "east", labels=STABLE)]])


def test_with_nothing_ready_the_model_rule_takes_the_sentinel_lane() -> None:
    [ref] = sentinel_refs(compose_service(overflow(ready=False)))
    assert ref["weight"] == 1
    assert ref["headerMutation"] == {
        "set": [{"name": SENTINEL_HEADER, "value": SENTINEL_VALUE}],
        "remove": [POOL_HEADER, ENDPOINT_HEADER],
    }


def test_the_sentinel_lane_reaches_the_gateways_own_cluster_with_the_services_prefix() -> None:
    backend = manifests(compose_service(overflow(ready=False)))[BACKEND]["spec"]
    assert backend["schema"] == {"name": "OpenAI", "prefix": "/ml/qwen/v1"}
    assert backend["backendRef"] == {
        "group": "gateway.envoyproxy.io",
        "kind": "Backend",
        "name": cluster_backend_name("main", "edge"),  # the gateway is hosted on edge
    }


def test_the_sentinel_route_answers_with_the_services_503_filter() -> None:
    composed = manifests(compose_service(overflow(ready=False)))
    route, answer = composed[ROUTE], composed["unavailable/main"]
    [rule] = route["spec"]["rules"]
    [ref] = [f["extensionRef"] for f in rule["filters"]]
    assert ref["name"] == answer["metadata"]["name"]
    assert "backendRefs" not in rule
    assert route["metadata"]["namespace"] == answer["metadata"]["namespace"]


def test_the_sentinel_route_matches_the_service_prefix_and_the_sentinel_header() -> None:
    route = manifests(compose_service(overflow(ready=False)))[ROUTE]
    [match] = route["spec"]["rules"][0]["matches"]
    assert match["path"] == {"type": "PathPrefix", "value": "/ml/qwen/"}
    assert match["headers"] == [{"type": "Exact", "name": SENTINEL_HEADER, "value": SENTINEL_VALUE}]
    [parent] = route["spec"]["parentRefs"]
    assert parent["sectionName"] == FLEET_LISTENER


def test_with_every_lane_parked_the_sentinel_lane_is_the_only_weighted_one() -> None:
    rule = model_rule(compose_service(parked()))
    assert [r["weight"] for r in rule["backendRefs"]][-1] == 1
    assert sum(r["weight"] for r in rule["backendRefs"]) == 1


def test_a_serving_model_rule_has_no_sentinel_lane_and_nothing_answers_503() -> None:
    result = compose_service(overflow())
    assert not {BACKEND, ROUTE} & set(result.resources)


def test_the_sentinel_stays_until_the_observed_model_route_lets_go() -> None:
    idle = compose_service(overflow(ready=False))
    ready = overflow()
    result = compose_service(
        Inputs(composite=ready.composite, required=ready.required, observed=observed(idle))
    )
    assert {BACKEND, ROUTE} <= set(result.resources)
    sentinel = manifests(idle)[BACKEND]["metadata"]["name"]
    assert sentinel not in [r["name"] for r in model_rule(result)["backendRefs"]]
    settled = compose_service(
        Inputs(composite=ready.composite, required=ready.required, observed=observed(result))
    )
    assert not {BACKEND, ROUTE} & set(settled.resources)


def test_the_sentinel_objects_validate_against_the_pinned_crds() -> None:
    result = compose_service(overflow(ready=False))
    assert invalid(result) == {}
