"""Which callers may use a ModelService: on each gateway serving it, a SecurityPolicy on its path
route and its model route allowing only its callers (by name, and the entries of the caller
Secrets its selector matches), merged into the gateway's API-key policy, and a 403 body saying
who was refused and why (docs/design/shared-front-door.md, "Step 3 as built")."""

from __future__ import annotations

import json
from typing import Any

from modelplane.compose.inferencegateway import callers as gateway_callers
from modelplane.compose.modelservice.callers import CALLER_HEADER
from modelplane.compose.modelservice.composer import (
    CLUSTERS,
    GATEWAYS,
    compose_service,
    endpoints_requirement,
)
from modelplane.compose.modelservice.models import model_route_name
from modelplane.compose.registry import default_registry
from modelplane.compose.shared.frontdoor import budget_spent, front_route_name
from modelplane.composer import Inputs, Requirement
from tests.compose.modelservice.kit import (
    again,
    cluster,
    gateway,
    invalid,
    manifests,
    observed,
    replica_endpoint,
    service,
)

Obj = dict[str, Any]
AUTH = {"modelplane.ai/callers": "true"}
FLEET = [cluster("edge", pools=False), cluster("east")]
SECRETS = "caller-secrets/main"


def authenticating(name: str = "main") -> Obj:
    ig = gateway(name, address="203.0.113.1")
    ig["spec"]["auth"] = {"callerSecretSelector": {"matchLabels": AUTH}}
    return ig


def caller_secret(name: str, labels: dict[str, str], *identities: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": "crossplane-system", "labels": AUTH | labels},
        "type": "Opaque",
        "data": {i: "a2V5" for i in identities},
    }


def inputs(
    callers: Obj | None,
    gateways: list[Obj] | None = None,
    seen: dict[str, Obj] | None = None,
    **required: list[Obj],
) -> Inputs:
    ms = service("qwen", "ml")
    if callers is not None:
        ms["spec"]["callers"] = callers
    found = {
        GATEWAYS: gateways if gateways is not None else [authenticating()],
        CLUSTERS: FLEET,
        endpoints_requirement(0): [
            replica_endpoint("qwen-east", "east", labels={"modelplane.ai/deployment": "qwen"})
        ],
    }
    found.update({k.replace("_", "-").replace("-main", "/main"): v for k, v in required.items()})
    return Inputs(composite=ms, required=found, observed=seen or {})


def allowed(policy: Obj) -> list[str]:
    return [
        v
        for rule in policy["spec"]["authorization"].get("rules", ())
        for h in rule["principal"]["headers"]
        for v in h["values"]
    ]


def test_a_service_without_callers_composes_no_authorization() -> None:
    result = compose_service(inputs(None))
    assert not [k for k in result.resources if k.startswith(("callers/", "denied/"))]
    assert not [k for k in result.requirements if k.startswith("caller-secrets/")]


def test_only_the_named_callers_are_allowed_and_everyone_else_denied() -> None:
    policy = manifests(compose_service(inputs({"names": ["search-prod", "ads"]})))["callers/main"]
    assert policy["spec"]["authorization"]["defaultAction"] == "Deny"
    assert policy["spec"]["authorization"]["rules"] == [
        {
            "name": "callers-0",
            "action": "Allow",
            "principal": {"headers": [{"name": CALLER_HEADER, "values": ["ads", "search-prod"]}]},
        }
    ]


def test_the_authorization_guards_the_path_route_and_the_model_route() -> None:
    policy = manifests(compose_service(inputs({"names": ["ads"]})))["callers/main"]
    assert [t["name"] for t in policy["spec"]["targetRefs"]] == [
        front_route_name("main", "ml", "qwen"),
        model_route_name("main", "ml", "qwen"),
    ]
    assert {t["kind"] for t in policy["spec"]["targetRefs"]} == {"HTTPRoute"}


def test_both_policies_merge_into_the_gateways_so_authentication_and_budgets_stay() -> None:
    composed = manifests(compose_service(inputs({"names": ["ads"]})))
    assert composed["callers/main"]["spec"]["mergeType"] == "StrategicMerge"
    assert composed["denied/main"]["spec"]["mergeType"] == "StrategicMerge"


def test_the_identity_header_is_the_one_the_gateway_sets() -> None:
    assert CALLER_HEADER == gateway_callers.CALLER_HEADER


def test_the_403_body_names_the_caller_the_model_and_the_field() -> None:
    override = manifests(compose_service(inputs({"names": ["ads"]})))["denied/main"]["spec"][
        "responseOverride"
    ]
    assert override[0]["match"] == {"statusCodes": [{"type": "Value", "value": 403}]}
    assert override[0]["source"] == "Local"
    body = json.loads(override[0]["response"]["body"]["inline"])
    assert body["error"]["message"] == (
        "caller %REQ(x-modelplane-caller)% may not use model ml/qwen: it is not among the "
        "callers of ModelService ml/qwen (spec.callers)"
    )


def test_a_selector_lists_the_gateways_caller_secrets_carrying_its_labels_too() -> None:
    result = compose_service(inputs({"selector": {"matchLabels": {"team": "search"}}}))
    assert result.requirements[SECRETS] == Requirement(
        "v1", "Secret", match_labels=AUTH | {"team": "search"}, namespace="crossplane-system"
    )


def test_the_callers_of_selected_secrets_are_allowed_beside_the_names() -> None:
    secrets = [
        caller_secret("search", {"team": "search"}, "search-prod", "search-dev"),
        caller_secret("ads", {"team": "ads"}, "ads-prod"),  # a list that lags
    ]
    callers = {"names": ["ops"], "selector": {"matchLabels": {"team": "search"}}}
    policy = manifests(compose_service(inputs(callers, caller_secrets_main=secrets)))
    assert allowed(policy["callers/main"]) == ["ops", "search-dev", "search-prod"]


def test_a_policy_is_kept_as_it_was_while_the_caller_secrets_are_read() -> None:
    callers = {"selector": {"matchLabels": {"team": "search"}}}
    secrets = [caller_secret("search", {"team": "search"}, "search-prod")]
    seen = observed(compose_service(inputs(callers, caller_secrets_main=secrets)))
    unread = compose_service(inputs(callers, seen=seen))
    assert allowed(manifests(unread)["callers/main"]) == ["search-prod"]


def test_with_no_policy_yet_and_the_secrets_unread_only_the_names_are_allowed() -> None:
    callers = {"names": ["ops"], "selector": {"matchLabels": {"team": "search"}}}
    assert allowed(manifests(compose_service(inputs(callers)))["callers/main"]) == ["ops"]


def test_a_selector_contradicting_the_gateways_reads_nothing_and_allows_the_names() -> None:
    callers = {"names": ["ops"], "selector": {"matchLabels": {"modelplane.ai/callers": "no"}}}
    result = compose_service(inputs(callers))
    assert SECRETS not in result.requirements
    assert allowed(manifests(result)["callers/main"]) == ["ops"]


def test_callers_matching_nobody_leave_everyone_denied() -> None:
    callers = {"selector": {"matchLabels": {"team": "nobody"}}}
    policy = manifests(compose_service(inputs(callers, caller_secrets_main=[])))["callers/main"]
    assert policy["spec"]["authorization"] == {"defaultAction": "Deny"}


def test_more_callers_than_one_header_match_holds_are_split_over_rules() -> None:
    names = [f"c{i:03}" for i in range(300)]
    policy = manifests(compose_service(inputs({"names": names})))["callers/main"]
    rules = policy["spec"]["authorization"]["rules"]
    assert [len(r["principal"]["headers"][0]["values"]) for r in rules] == [256, 44]
    assert allowed(policy) == names


def test_callers_on_a_gateway_without_auth_are_refused_naming_both_fields() -> None:
    result = compose_service(inputs({"names": ["ads"]}, gateways=[gateway(address="203.0.113.1")]))
    assert result.fatal == (
        "ModelService ml/qwen spec.callers names who may use it, but InferenceGateway main, "
        "which serves it, has no spec.auth: nothing there tells callers apart. Add spec.auth to "
        "the gateway, or leave the service out of its spec.serviceSelector. Nothing was changed"
    )


def test_the_authorization_stays_with_the_routes_of_a_gateway_that_cannot_be_written_to() -> None:
    first = inputs({"names": ["ads"]})
    seen = observed(again(compose_service, first, compose_service(first)))  # routes wait a turn
    stuck = authenticating()
    stuck["spec"]["clusterName"] = "gone"  # not listed: the gateway is skipped
    result = compose_service(inputs({"names": ["ads"]}, gateways=[stuck], seen=seen))
    assert {"front/main", "callers/main", "denied/main"} <= set(result.resources)


def test_every_composed_object_validates_against_the_pinned_crds() -> None:
    names = [f"c{i:03}" for i in range(300)]
    first = inputs({"names": names})
    composed = again(compose_service, first, compose_service(first))  # the routes too
    assert {"front/main", "models/main", "callers/main"} <= set(composed.resources)
    assert invalid(composed) == {}
    assert invalid(compose_service(inputs({"selector": {"matchLabels": {"t": "x"}}}))) == {}


def test_the_function_reads_the_caller_secrets_as_secrets() -> None:
    kind = default_registry().required_kind("modelplane.ai/v1alpha1", "ModelService", SECRETS)
    assert kind == ("v1", "Secret")


def test_callers_naming_nobody_are_refused_by_the_function_too() -> None:
    assert compose_service(inputs({})).fatal == (
        "ModelService spec.callers takes names or selector.matchLabels (or both); omit "
        "callers to let every authenticated caller use the service"
    )


def test_the_gateways_429_answer_stays_on_the_services_routes() -> None:
    overrides = manifests(compose_service(inputs({"names": ["ads"]})))["denied/main"]["spec"][
        "responseOverride"
    ]
    assert overrides[1:] == [budget_spent()]


def test_callers_by_name_alone_read_no_secret() -> None:
    result = compose_service(inputs({"names": ["ads"]}))
    assert not [k for k in result.requirements if k.startswith("caller-secrets/")]
