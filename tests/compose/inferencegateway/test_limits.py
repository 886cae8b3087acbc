"""Budgets per caller at an InferenceGateway: ``spec.limits`` composes one Envoy Gateway
BackendTrafficPolicy on the front listener whose global rate-limit rules count each selected
caller apart, in requests or in the tokens Envoy AI Gateway reports."""

from __future__ import annotations

from typing import Any

from modelplane.compose.inferencegateway.callers import HEADER_GUARD, POLICY
from modelplane.compose.inferencegateway.limits import LIMITS, MAX_MATCH, caller_patterns
from modelplane.composer import Result
from tests.compose.inferencegateway.test_callers import ADS, SEARCH, authed, compose, secret
from tests.compose.modelservice.kit import condition, invalid, manifests, observed

Obj = dict[str, Any]
CALLER = {"name": "x-modelplane-caller", "type": "Distinct"}
TEAM_ADS = secret("ads", labels={"modelplane.ai/callers": "true", "team": "ads"}, ads="a2V5Mw==")


def limited(*entries: Obj) -> Obj:
    gw = authed()
    gw["spec"]["limits"] = list(entries)
    return gw


def policy_rules(result: Result) -> list[Obj]:
    return manifests(result)[LIMITS]["spec"]["rateLimit"]["global"]["rules"]


def test_a_gateway_without_limits_composes_no_rate_limit_policy() -> None:
    assert LIMITS not in compose(authed(), [SEARCH]).resources


def test_limits_compose_one_policy_on_the_front_listener() -> None:
    policy = manifests(compose(limited({"requestsPerMinute": 60}), [SEARCH]))[LIMITS]
    assert policy["kind"] == "BackendTrafficPolicy"
    assert policy["metadata"]["namespace"] == "modelplane-system"
    assert policy["spec"]["targetRefs"] == [
        {
            "group": "gateway.networking.k8s.io",
            "kind": "Gateway",
            "name": "main-front",
            "sectionName": "https",
        }
    ]


def test_a_request_rate_for_every_caller_counts_each_caller_apart_across_routes() -> None:
    assert policy_rules(compose(limited({"requestsPerMinute": 60}), [SEARCH])) == [
        {
            "clientSelectors": [{"headers": [CALLER]}],
            "limit": {"requests": 60, "unit": "Minute"},
            "shared": True,
            "xRateLimitHeaders": "DraftVersion03",
        }
    ]


def test_token_rates_are_checked_on_the_request_and_charged_from_the_ai_gateways_metadata() -> None:
    [rule] = policy_rules(compose(limited({"tokensPerMinute": {"total": 2000000}}), [SEARCH]))
    assert rule["limit"] == {"requests": 2000000, "unit": "Minute"}
    assert rule["cost"] == {
        "request": {"from": "Number", "number": 0},
        "response": {
            "from": "Metadata",
            "metadata": {"namespace": "io.envoy.ai_gateway", "key": "llm_total_token"},
        },
    }


def test_each_rate_of_an_entry_is_a_rule_of_its_own() -> None:
    entry = {"requestsPerMinute": 5, "tokensPerMinute": {"input": 10, "output": 20}}
    found = policy_rules(compose(limited(entry), [SEARCH]))
    assert [r["limit"]["requests"] for r in found] == [5, 10, 20]
    assert [
        r.get("cost", {}).get("response", {}).get("metadata", {}).get("key") for r in found
    ] == [
        None,
        "llm_input_token",
        "llm_output_token",
    ]


def test_every_rule_pins_the_rate_limit_headers_the_429_names_its_limit_from() -> None:
    entry = {
        "callers": {"names": ["search-prod"]},
        "requestsPerMinute": 5,
        "tokensPerMinute": {"input": 1, "output": 2, "total": 3},
        "perModel": True,
    }
    found = policy_rules(compose(limited(entry, {"requestsPerMinute": 7}), [SEARCH]))
    assert len(found) == 5
    assert {r.get("xRateLimitHeaders") for r in found} == {"DraftVersion03"}


def test_named_callers_are_matched_exactly_and_still_counted_apart() -> None:
    entry = {"callers": {"names": ["search-prod", "ads.batch"]}, "requestsPerMinute": 5}
    [rule] = policy_rules(compose(limited(entry), [SEARCH]))
    assert rule["clientSelectors"] == [
        {
            "headers": [
                CALLER,
                {
                    "name": "x-modelplane-caller",
                    "type": "RegularExpression",
                    "value": "^(ads\\.batch|search-prod)$",
                },
            ]
        }
    ]


def test_callers_selected_by_label_are_the_entries_of_the_matching_secrets() -> None:
    entry = {"callers": {"selector": {"matchLabels": {"team": "ads"}}}, "requestsPerMinute": 5}
    [rule] = policy_rules(compose(limited(entry), [SEARCH, TEAM_ADS]))
    assert rule["clientSelectors"][0]["headers"][1]["value"] == "^(ads)$"


def test_an_entry_selecting_nobody_makes_no_rule() -> None:
    entry = {"callers": {"selector": {"matchLabels": {"team": "none"}}}, "requestsPerMinute": 5}
    assert policy_rules(compose(limited(entry, {"requestsPerMinute": 9}), [SEARCH])) == [
        {
            "clientSelectors": [{"headers": [CALLER]}],
            "limit": {"requests": 9, "unit": "Minute"},
            "shared": True,
            "xRateLimitHeaders": "DraftVersion03",
        }
    ]


def test_a_budget_per_model_counts_each_model_of_each_caller_apart() -> None:
    [rule] = policy_rules(compose(limited({"requestsPerMinute": 5, "perModel": True}), [SEARCH]))
    assert rule["clientSelectors"] == [
        {"headers": [CALLER, {"name": "x-ai-eg-model", "type": "Distinct"}]}
    ]


def test_a_budget_per_model_removes_the_model_header_callers_send() -> None:
    guard = manifests(compose(limited({"requestsPerMinute": 5, "perModel": True}), [SEARCH]))
    assert guard[HEADER_GUARD]["spec"]["headers"]["earlyRequestHeaders"]["remove"][:2] == [
        "x-modelplane-caller",
        "x-ai-eg-model",
    ]


def test_a_long_caller_list_is_split_so_no_match_exceeds_envoy_gateways_limit() -> None:
    names = [f"caller-{n:03d}-{'x' * 40}" for n in range(60)]
    patterns = caller_patterns(names)
    assert len(patterns) > 1
    assert all(len(p) <= MAX_MATCH for p in patterns)
    assert sorted(n for p in patterns for n in p[2:-2].split("|")) == names


def test_too_many_rules_for_one_policy_are_refused_naming_the_field() -> None:
    many = {"callers": {"names": [f"c{n}-{'x' * 200}" for n in range(64)]}}
    entries = [{**many, "requestsPerMinute": 1, "tokensPerMinute": {"total": 1}}] * 16
    result = compose(limited(*entries), [SEARCH])
    assert result.fatal
    assert "spec.limits makes" in result.fatal and "more than the 256" in result.fatal


def test_limits_without_auth_are_refused() -> None:
    gw = limited({"requestsPerMinute": 5})
    del gw["spec"]["auth"]
    result = compose(gw)
    assert "spec.limits requires spec.auth" in (result.fatal or "")


def test_while_the_secrets_are_read_the_policy_is_kept_as_it_was() -> None:
    gw = limited({"requestsPerMinute": 5})
    first = compose(gw, [SEARCH, ADS])
    held = compose(gw, None, observed(first))
    assert held.resources[LIMITS].resource == first.resources[LIMITS].resource


def test_the_gateway_is_ready_only_once_the_budgets_are_applied() -> None:
    gw = limited({"requestsPerMinute": 5})
    first = compose(gw, [SEARCH])
    seen = observed(first)
    seen.pop(LIMITS)
    waiting = compose(gw, [SEARCH], seen)
    assert condition(waiting, "GatewayReady").status == "False"
    settled = compose(gw, [SEARCH], observed(first))
    assert condition(settled, "GatewayReady").status == "True"


def test_the_policy_is_admitted_by_the_pinned_crds() -> None:
    entry = {
        "callers": {"names": ["search-prod"]},
        "requestsPerMinute": 5,
        "tokensPerMinute": {"input": 1, "output": 2, "total": 3},
        "perModel": True,
    }
    result = compose(limited(entry, {"requestsPerMinute": 7}), [SEARCH, ADS])
    keys = (LIMITS, HEADER_GUARD, POLICY)
    assert invalid(Result(resources={k: result.resources[k] for k in keys})) == {}


def test_an_entry_with_no_rate_is_refused_naming_it() -> None:
    result = compose(limited({"requestsPerMinute": 5}, {"perModel": True}), [SEARCH])
    assert "spec.limits[1] has neither requestsPerMinute nor tokensPerMinute" in (
        result.fatal or ""
    )
