"""Priorities per caller at an InferenceGateway: ``spec.priority`` composes one Envoy Gateway
EnvoyExtensionPolicy on the front listener whose Lua script stamps each request with its
caller's priority and, as the endpoint picker's fairness id, its identity; the listener's
ClientTrafficPolicy removes those headers, and the picker's objective headers, on arrival."""

from __future__ import annotations

from typing import Any

from modelplane.compose.inferencegateway.callers import HEADER_GUARD, POLICY
from modelplane.compose.inferencegateway.frontlua import FRONT_LUA
from modelplane.compose.inferencegateway.priority import caller_priorities
from modelplane.composer import Result
from tests.compose.inferencegateway.test_callers import ADS, SEARCH, authed, compose, secret
from tests.compose.modelservice.kit import condition, invalid, manifests, observed

Obj = dict[str, Any]
TEAM_ADS = secret("ads", labels={"modelplane.ai/callers": "true", "team": "ads"}, ads="a2V5Mw==")
IDENTITIES = {
    "search-prod": {"team": "search"},
    "search-dev": {"team": "search"},
    "ads": {"team": "ads"},
}


def prioritised(*entries: Obj) -> Obj:
    gw = authed()
    gw["spec"]["priority"] = list(entries)
    return gw


def lua(result: Result) -> str:
    # The priority script runs first; the model catalog's follows it (test_catalog.py).
    entry, _catalog = manifests(result)[FRONT_LUA]["spec"]["lua"]
    assert entry["type"] == "Inline"
    return str(entry["inline"])


def removed_on_arrival(result: Result) -> list[str]:
    return manifests(result)[HEADER_GUARD]["spec"]["headers"]["earlyRequestHeaders"]["remove"]


def test_a_gateway_without_priority_runs_no_priority_script() -> None:
    [entry] = manifests(compose(authed(), [SEARCH]))[FRONT_LUA]["spec"]["lua"]
    assert "x-modelplane-priority" not in entry["inline"]


def test_a_gateway_without_priority_still_removes_the_priority_and_pickers_on_arrival() -> None:
    # Its callers would otherwise name their own flow, and through the fleet hop their own
    # objective.
    assert removed_on_arrival(compose(authed(), [SEARCH])) == [
        "x-modelplane-caller",
        "x-modelplane-priority",
        "x-llm-d-inference-objective",
        "x-gateway-inference-objective",
        "x-llm-d-inference-fairness-id",
        "x-gateway-inference-fairness-id",
    ]


def test_priority_composes_one_extension_policy_on_the_front_listener() -> None:
    policy = manifests(compose(prioritised({"value": 1}), [SEARCH]))[FRONT_LUA]
    assert policy["kind"] == "EnvoyExtensionPolicy"
    assert policy["metadata"]["namespace"] == "modelplane-system"
    assert policy["spec"]["targetRefs"] == [
        {
            "group": "gateway.networking.k8s.io",
            "kind": "Gateway",
            "name": "main-front",
            "sectionName": "https",
        }
    ]


def test_each_caller_takes_the_value_of_the_first_entry_selecting_it() -> None:
    spec = {
        "priority": [
            {"callers": {"names": ["search-prod"]}, "value": 5},
            {"callers": {"selector": {"matchLabels": {"team": "search"}}}, "value": 2},
            {"value": -1},
        ]
    }
    assert caller_priorities(spec, IDENTITIES) == {"search-prod": 5, "search-dev": 2, "ads": -1}


def test_a_caller_no_entry_selects_has_no_priority() -> None:
    spec = {"priority": [{"callers": {"names": ["ads"]}, "value": 3}]}
    assert caller_priorities(spec, IDENTITIES) == {"ads": 3}


def test_the_script_maps_each_caller_to_its_priority() -> None:
    gw = prioritised({"callers": {"selector": {"matchLabels": {"team": "ads"}}}, "value": 4})
    script = lua(compose(gw, [SEARCH, TEAM_ADS]))
    assert '  ["ads"] = "4",\n' in script
    assert "search-prod" not in script


def test_the_script_reads_the_identity_the_api_key_filter_set() -> None:
    assert 'headers:get("x-modelplane-caller")' in lua(compose(prioritised({"value": 1}), [SEARCH]))


def test_the_script_sets_or_removes_the_priority_header_so_a_forged_one_never_passes() -> None:
    script = lua(compose(prioritised({"value": 1}), [SEARCH]))
    assert 'headers:replace("x-modelplane-priority", priority)' in script
    assert 'headers:remove("x-modelplane-priority")' in script


def test_the_script_sets_the_callers_identity_as_the_fairness_id_under_both_names() -> None:
    script = lua(compose(prioritised({"value": 1}), [SEARCH]))
    fairness = '{"x-llm-d-inference-fairness-id", "x-gateway-inference-fairness-id"}'
    assert f"local FAIRNESS = {fairness}" in script
    assert "headers:replace(name, caller)" in script
    assert "headers:remove(name)" in script


def test_the_script_runs_on_requests_as_envoy_gateways_validator_requires() -> None:
    # internal/gatewayapi/luavalidator (v1.8.1): envoy_on_request or envoy_on_response.
    assert "function envoy_on_request(handle)" in lua(compose(prioritised({"value": 1}), [SEARCH]))


def test_priority_removes_its_header_and_the_pickers_on_arrival() -> None:
    assert removed_on_arrival(compose(prioritised({"value": 1}), [SEARCH])) == [
        "x-modelplane-caller",
        "x-modelplane-priority",
        "x-llm-d-inference-objective",
        "x-gateway-inference-objective",
        "x-llm-d-inference-fairness-id",
        "x-gateway-inference-fairness-id",
    ]


def test_priority_without_auth_is_refused_naming_both_fields() -> None:
    gw = prioritised({"value": 1})
    del gw["spec"]["auth"]
    assert "spec.priority requires spec.auth" in (compose(gw).fatal or "")


def test_while_the_secrets_are_read_the_policy_is_kept_as_it_was() -> None:
    gw = prioritised({"callers": {"names": ["ads"]}, "value": 3})
    first = compose(gw, [SEARCH, ADS])
    held = compose(gw, None, observed(first))
    assert held.resources[FRONT_LUA].resource == first.resources[FRONT_LUA].resource


def test_the_gateway_does_not_wait_for_the_priority_policy() -> None:
    # The guard already removes every header the policy sets: until it applies, each caller has
    # priority 0 and the default flow, and nobody gets in who should not.
    gw = prioritised({"value": 1})
    seen = observed(compose(gw, [SEARCH]))
    seen.pop(FRONT_LUA)
    assert condition(compose(gw, [SEARCH], seen), "GatewayReady").status == "True"


def test_the_policy_is_admitted_by_the_pinned_crds() -> None:
    gw = prioritised({"callers": {"names": ["ads"]}, "value": -5}, {"value": 5})
    result = compose(gw, [SEARCH, ADS])
    keys = (FRONT_LUA, HEADER_GUARD, POLICY)
    assert invalid(Result(resources={k: result.resources[k] for k in keys})) == {}
