"""``GET /v1/models`` per caller at a gateway with ``spec.auth``: the front listener's Lua answers
each caller with only the ModelServices it may use, before Envoy AI Gateway's own list (every
model, to everyone) is reached. The scripts run here in LuaJIT on a stand-in stream handle
(tests/envoy_lua.py)."""

from __future__ import annotations

import json
from typing import Any

from modelplane.compose.inferencegateway.catalog import (
    SERVICES,
    anthropic_list,
    models_by_caller,
    openai_list,
)
from modelplane.compose.inferencegateway.frontlua import FRONT_LUA
from modelplane.composer import Requirement, Result
from tests.compose.inferencegateway.test_callers import ADS, SEARCH, authed, compose
from tests.compose.modelservice.kit import gateway, invalid, manifests, observed, service
from tests.envoy_lua import on_request

Obj = dict[str, Any]
CREATED = "2026-11-02T10:00:00Z"
CREATED_UNIX = 1793613600


def svc(name: str, namespace: str, callers: Obj | None = None, **labels: str) -> Obj:
    obj = service(name, namespace, labels=labels or None)
    obj["metadata"]["creationTimestamp"] = CREATED
    if callers is not None:
        obj["spec"]["callers"] = callers
    return obj


OPEN = svc("chat", "search")
ADS_ONLY = svc("ranker", "ads", {"names": ["ads"]})
SEARCH_TEAM = svc("embed", "search", {"selector": {"matchLabels": {"team": "search"}}})
TEAM_SEARCH = {**SEARCH, "metadata": {**SEARCH["metadata"]}}
TEAM_SEARCH["metadata"]["labels"] = {**SEARCH["metadata"]["labels"], "team": "search"}


def catalog_script(result: Result) -> str:
    return str(manifests(result)[FRONT_LUA]["spec"]["lua"][-1]["inline"])


def listed(script: str, caller: str | None, path: str = "/v1/models") -> list[str]:
    headers = {":method": "GET", ":path": path}
    if caller is not None:
        headers["x-modelplane-caller"] = caller
    outcome = on_request(script, headers)
    assert (outcome.status, outcome.content_type) == ("200", "application/json")
    return [m["id"] for m in json.loads(outcome.body or "")["data"]]


def test_auth_lists_every_service_the_gateway_selects_in_every_namespace() -> None:
    gw = authed()
    gw["spec"]["serviceSelector"] = {"matchLabels": {"region": "eu"}}
    assert compose(gw, [SEARCH]).requirements[SERVICES] == Requirement(
        "modelplane.ai/v1alpha1", "ModelService", match_labels={"region": "eu"}
    )


def test_a_gateway_without_auth_lists_no_services_and_leaves_v1_models_to_the_ai_gateway() -> None:
    result = compose(gateway())
    assert SERVICES not in result.requirements
    assert FRONT_LUA not in result.resources


def test_until_the_services_are_listed_no_catalog_is_composed() -> None:
    assert FRONT_LUA not in compose(authed(), [SEARCH], services=None).resources


def test_until_the_services_are_listed_again_the_catalog_is_kept_as_it_was() -> None:
    first = compose(authed(), [SEARCH], services=(OPEN,))
    held = compose(authed(), [SEARCH], observed(first), services=None)
    assert held.resources[FRONT_LUA].resource == first.resources[FRONT_LUA].resource


def test_a_service_without_callers_is_listed_to_every_caller() -> None:
    script = catalog_script(compose(authed(), [SEARCH, ADS], services=(OPEN,)))
    assert listed(script, "search-prod") == ["search/chat"]
    assert listed(script, "ads") == ["search/chat"]


def test_a_service_naming_callers_is_listed_only_to_them() -> None:
    script = catalog_script(compose(authed(), [SEARCH, ADS], services=(OPEN, ADS_ONLY)))
    assert listed(script, "ads") == ["ads/ranker", "search/chat"]
    assert listed(script, "search-dev") == ["search/chat"]


def test_a_service_selecting_callers_by_label_is_listed_to_the_secrets_it_matches() -> None:
    script = catalog_script(compose(authed(), [TEAM_SEARCH, ADS], services=(SEARCH_TEAM,)))
    assert listed(script, "search-prod") == ["search/embed"]
    assert listed(script, "ads") == []


def test_a_service_being_deleted_is_not_listed() -> None:
    going = svc("old", "search")
    going["metadata"]["deletionTimestamp"] = "2026-12-01T00:00:00Z"
    script = catalog_script(compose(authed(), [SEARCH], services=(going, OPEN)))
    assert listed(script, "search-prod") == ["search/chat"]


def test_a_request_with_no_identity_is_answered_an_empty_list() -> None:
    # None reaches the script: api_key_auth refuses it first. Were it to, it learns nothing.
    script = catalog_script(compose(authed(), [SEARCH], services=(OPEN,)))
    assert listed(script, None) == []
    assert listed(script, "someone-else") == []


def test_the_anthropic_list_is_answered_per_caller_too() -> None:
    script = catalog_script(compose(authed(), [SEARCH, ADS], services=(OPEN, ADS_ONLY)))
    assert listed(script, "search-prod", "/anthropic/v1/models") == ["search/chat"]


def test_a_query_string_does_not_let_a_request_past_the_catalog() -> None:
    # The AI Gateway strips the query before matching its paths (internal/extproc/server.go).
    script = catalog_script(compose(authed(), [SEARCH, ADS], services=(ADS_ONLY,)))
    assert listed(script, "search-prod", "/v1/models?limit=5") == []


def test_every_other_request_passes_the_catalog_untouched() -> None:
    script = catalog_script(compose(authed(), [SEARCH], services=(OPEN,)))
    request = {":method": "POST", ":path": "/v1/chat/completions", "x-modelplane-caller": "ads"}
    outcome = on_request(script, request)
    assert outcome.status is None
    assert outcome.headers == request


def test_the_openai_list_has_the_ai_gateways_shape() -> None:
    # openai.ModelList and openai.Model (v1.1.0 internal/apischema/openai/openai.go), as Go's
    # encoding/json writes them: fields in declaration order.
    [models] = models_by_caller([OPEN], {"ads": {}}).values()
    assert openai_list(models) == (
        f'{{"data":[{{"id":"search/chat","created":{CREATED_UNIX},"object":"model",'
        '"owned_by":"search"}],"object":"list"}'
    )


def test_the_anthropic_list_has_the_ai_gateways_shape() -> None:
    # anthropic.ModelList and anthropic.Model (internal/apischema/anthropic/anthropic.go): first
    # and last id omitted when empty, created_at in RFC 3339.
    [models] = models_by_caller([OPEN], {"ads": {}}).values()
    assert anthropic_list(models) == (
        '{"data":[{"id":"search/chat","type":"model","display_name":"search/chat",'
        f'"created_at":"{CREATED}"}}],"first_id":"search/chat","has_more":false,'
        '"last_id":"search/chat"}'
    )
    assert anthropic_list([]) == '{"data":[],"has_more":false}'


def test_callers_who_may_use_the_same_models_share_one_body() -> None:
    script = catalog_script(compose(authed(), [SEARCH, ADS], services=(OPEN, ADS_ONLY)))
    assert script.count('"id":"search/chat"') == 2 * 2  # two bodies, each in two shapes


def test_the_catalog_runs_after_priority_in_the_same_policy() -> None:
    gw = authed()
    gw["spec"]["priority"] = [{"value": 1}]
    lua = manifests(compose(gw, [SEARCH], services=(OPEN,)))[FRONT_LUA]["spec"]["lua"]
    assert ["x-modelplane-priority" in entry["inline"] for entry in lua] == [True, False]


def test_the_catalog_policy_is_admitted_by_the_pinned_crds() -> None:
    result = compose(authed(), [SEARCH, ADS], services=(OPEN, ADS_ONLY, SEARCH_TEAM))
    assert invalid(Result(resources={FRONT_LUA: result.resources[FRONT_LUA]})) == {}
