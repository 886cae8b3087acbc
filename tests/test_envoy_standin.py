"""The e2e tier's stand-in for the front gateway's Envoy (e2e/envoy.py) answers as the rules it
cites: held here to what a ModelService composes, so the e2e test of scale to zero judges the
real routes through a stand-in that reads them right."""

from __future__ import annotations

from typing import Any

from e2e.envoy import FrontDoor, Stats, respond
from modelplane.compose.modelservice.composer import compose_service
from modelplane.compose.shared.frontdoor import FLEET_LISTENER, FRONT_LISTENER
from modelplane.compose.shared.scaletozero import ACTIVATION_SERIES, rule_cluster
from tests.compose.modelservice.kit import manifests, replica_endpoint, service, service_inputs

Obj = dict[str, Any]

PATH = "/ml/qwen/v1/completions"


def composed(selected: list[Obj]) -> tuple[list[Obj], dict[str, Obj]]:
    objects = manifests(compose_service(service_inputs(service("qwen", "ml"), [selected])))
    routes = [o for o in objects.values() if o["kind"] == "HTTPRoute"]
    filters = {o["metadata"]["name"]: o for o in objects.values() if o["kind"] == "HTTPRouteFilter"}
    return routes, filters


def front_rule_cluster(routes: list[Obj]) -> str:
    [front] = [r for r in routes if r["spec"]["parentRefs"][0].get("sectionName") == FRONT_LISTENER]
    return rule_cluster(front["metadata"]["namespace"], front["metadata"]["name"], 0)


def route(name: str, section: str, prefix: str, **rule: Any) -> Obj:
    return {
        "metadata": {"name": name, "namespace": "gw"},
        "spec": {
            "parentRefs": [{"name": "g", "sectionName": section}],
            "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": prefix}}], **rule}],
        },
    }


def test_a_serving_lane_answers_and_counts_the_front_rules_cluster() -> None:
    routes, filters = composed([replica_endpoint("r0", "east")])
    answer = respond(routes, filters, FRONT_LISTENER, PATH, {})
    assert answer.status == 200
    assert front_rule_cluster(routes) in answer.counted


def test_at_zero_the_path_form_is_answered_503_and_counted() -> None:
    routes, filters = composed([])
    answer = respond(routes, filters, FRONT_LISTENER, PATH, {})
    assert answer.status == 503
    assert "Retry-After" in answer.headers
    assert front_rule_cluster(routes) in answer.counted


def test_a_direct_response_counts_no_cluster() -> None:
    answering = {"name": "answer", "spec": {"directResponse": {"statusCode": 503}}}
    ref = {"type": "ExtensionRef", "extensionRef": {"name": "answer"}}
    routes = [route("r", FRONT_LISTENER, "/ml/qwen/", filters=[ref])]
    answer = respond(routes, {"answer": answering}, FRONT_LISTENER, PATH, {})
    assert (answer.status, answer.counted) == (503, ())


def test_the_longest_prefix_takes_the_request() -> None:
    routes = [
        route("short", FLEET_LISTENER, "/ml/", backendRefs=[{"name": "a"}]),
        route("long", FLEET_LISTENER, "/ml/qwen/", backendRefs=[{"name": "b"}]),
    ]
    answer = respond(routes, {}, FLEET_LISTENER, PATH, {})
    assert answer.counted == (rule_cluster("gw", "long", 0),)


def test_a_rule_whose_header_match_fails_is_not_taken() -> None:
    rule = route("r", FLEET_LISTENER, "/ml/qwen/", backendRefs=[{"name": "a"}])
    rule["spec"]["rules"][0]["matches"][0]["headers"] = [{"name": "x-h", "value": "1"}]
    assert respond([rule], {}, FLEET_LISTENER, PATH, {}).status == 404
    assert respond([rule], {}, FLEET_LISTENER, PATH, {"x-h": "1"}).status == 200


def test_a_rule_with_only_weight_zero_refs_answers_500() -> None:
    routes = [route("r", FLEET_LISTENER, "/ml/qwen/", backendRefs=[{"name": "a", "weight": 0}])]
    assert respond(routes, {}, FLEET_LISTENER, PATH, {}).status == 500


def test_the_counters_are_exported_as_envoys_cluster_series() -> None:
    door = FrontDoor(cluster=None)  # type: ignore[arg-type]  # no cluster is read here
    door.stats["httproute/gw/r/rule/0"] = 2
    text = Stats(door).exposition()
    assert f'{ACTIVATION_SERIES}{{envoy_cluster_name="httproute/gw/r/rule/0"}} 2' in text
