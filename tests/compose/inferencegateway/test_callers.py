"""Callers who authenticate at an InferenceGateway: the Secrets its ``spec.auth`` selects copied
to its cluster as they are, one API-key SecurityPolicy on the front listener, and the identity
header removed from every request as it arrives."""

from __future__ import annotations

from typing import Any

from modelplane.compose.inferencegateway.callers import (
    CALLER_BY_NAME,
    CALLERS,
    HEADER_GUARD,
    POLICY,
    copy_name,
)
from modelplane.compose.inferencegateway.catalog import SERVICES
from modelplane.compose.inferencegateway.composer import CLUSTERS, compose_gateway
from modelplane.compose.inferencegateway.frontlua import FRONT_LUA
from modelplane.compose.shared.frontdoor import CONTROL_NAMESPACE
from modelplane.composer import Inputs, Requirement, Result
from tests.compose.modelservice.kit import (
    cluster,
    condition,
    gateway,
    invalid,
    manifests,
    observed,
)

Obj = dict[str, Any]
FLEET = [cluster("edge", pools=False), cluster("east")]
LABELS = {"modelplane.ai/callers": "true"}


def authed(key_header: str | None = None, **labels: str) -> Obj:
    gw = gateway()
    auth: Obj = {"callerSecretSelector": {"matchLabels": labels or LABELS}}
    if key_header:
        auth["keyHeader"] = key_header
    gw["spec"]["auth"] = auth
    return gw


def secret(name: str, labels: dict[str, str] | None = None, type_: str | None = None, **data: str):
    obj: Obj = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": name,
            "namespace": CONTROL_NAMESPACE,
            "labels": LABELS if labels is None else labels,
        },
        "data": dict(data),
    }
    if type_:
        obj["type"] = type_
    return obj


SEARCH = secret("search", **{"search-prod": "a2V5MQ==", "search-dev": "a2V5Mg=="})
ADS = secret("ads", ads="a2V5Mw==")


def compose(
    ig: Obj,
    secrets: list[Obj] | None = None,
    seen: dict | None = None,
    services: tuple[Obj, ...] | None = (),
    **more: list[Obj],
) -> Result:
    """One reconcile; ``services``: the ModelServices listed (None: not read yet)."""
    required: dict[str, list[Obj]] = {CLUSTERS: FLEET, **more}
    if secrets is not None:
        required[CALLERS] = secrets
    if services is not None:
        required[SERVICES] = list(services)
    return compose_gateway(Inputs(composite=ig, required=required, observed=seen or {}))


def caller_keys(result: Result) -> list[str]:
    """The caller copies and policies (the front listener's Lua, under its older name, aside)."""
    return sorted(k for k in result.resources if k.startswith("caller") and k != FRONT_LUA)


def test_a_gateway_without_auth_reads_no_secrets_and_composes_no_caller_or_key_policy() -> None:
    # Its header guard is composed all the same (test_header_guard.py).
    result = compose(gateway())
    assert CALLERS not in result.requirements
    assert caller_keys(result) == [HEADER_GUARD]


def test_auth_lists_the_secrets_its_selector_matches_in_the_control_namespace() -> None:
    result = compose(authed())
    assert result.requirements[CALLERS] == Requirement(
        "v1", "Secret", match_labels=LABELS, namespace=CONTROL_NAMESPACE
    )


def test_until_the_secrets_are_read_the_gateway_is_not_ready_and_composes_no_caller() -> None:
    result = compose(authed())
    assert caller_keys(result) == []
    ready = condition(result, "GatewayReady")
    assert ready.status == "False"
    assert "reading the caller Secrets" in ready.message


def test_each_selected_secret_is_copied_to_the_gateways_cluster_without_its_data() -> None:
    result = compose(authed(), [SEARCH, ADS])
    assert caller_keys(result) == [
        "caller-header-guard",
        "caller-policy",
        "caller/ads",
        "caller/search",
    ]
    copy = result.resources["caller/search"].resource
    assert manifests(result)["caller/search"] == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": copy_name("main", "search"),
            "namespace": "modelplane-system",
            "labels": {"app.kubernetes.io/managed-by": "modelplane"},
        },
        "type": "Opaque",
    }
    assert copy["spec"]["references"] == [
        {
            "patchesFrom": {
                "apiVersion": "v1",
                "kind": "Secret",
                "name": "search",
                "namespace": CONTROL_NAMESPACE,
                "fieldPath": f"data[{caller}]",
            },
            "toFieldPath": f"data[{caller}]",
        }
        for caller in ("search-dev", "search-prod")
    ]


def test_one_security_policy_authenticates_every_route_of_the_front_listener() -> None:
    result = compose(authed(), [SEARCH, ADS])
    policy = manifests(result)[POLICY]
    copies = [manifests(result)[k]["metadata"]["name"] for k in ("caller/ads", "caller/search")]
    assert policy["kind"] == "SecurityPolicy"
    assert policy["metadata"]["namespace"] == "modelplane-system"
    assert policy["spec"] == {
        "targetRefs": [
            {
                "group": "gateway.networking.k8s.io",
                "kind": "Gateway",
                "name": "main-front",
                "sectionName": "https",
            }
        ],
        "apiKeyAuth": {
            "credentialRefs": [{"group": "", "kind": "Secret", "name": c} for c in copies],
            "extractFrom": [{"headers": ["authorization"]}],
            "forwardClientIDHeader": "x-modelplane-caller",
            "sanitize": True,
        },
    }


def test_the_key_is_read_from_the_header_auth_names() -> None:
    policy = manifests(compose(authed("X-API-Key"), [SEARCH]))[POLICY]
    assert policy["spec"]["apiKeyAuth"]["extractFrom"] == [{"headers": ["x-api-key"]}]


def test_the_identity_header_is_removed_from_every_request_before_any_filter() -> None:
    guard = manifests(compose(authed(), [SEARCH]))[HEADER_GUARD]
    assert guard["kind"] == "ClientTrafficPolicy"
    assert guard["spec"]["targetRefs"][0]["name"] == "main-front"
    assert guard["spec"]["targetRefs"][0]["sectionName"] == "https"
    assert guard["spec"]["headers"]["earlyRequestHeaders"]["remove"][0] == "x-modelplane-caller"


def test_every_caller_object_is_admitted_by_the_pinned_crds() -> None:
    result = compose(authed(), [SEARCH, ADS])
    assert invalid(Result(resources={k: result.resources[k] for k in caller_keys(result)})) == {}


def test_a_secret_without_the_selectors_labels_is_not_copied() -> None:
    result = compose(authed(), [SEARCH, secret("other", labels={"team": "x"}, x="eA==")])
    assert "caller/other" not in result.resources


def test_no_selected_secret_still_composes_the_policy_so_nobody_gets_in() -> None:
    result = compose(authed(), [])
    assert manifests(result)[POLICY]["spec"]["apiKeyAuth"]["credentialRefs"] == []


def test_the_gateway_is_ready_only_once_the_caller_policies_are_applied() -> None:
    first = compose(authed(), [SEARCH])
    assert condition(first, "GatewayReady").status == "False"
    assert "waiting for the caller policies" in condition(first, "GatewayReady").message
    settled = compose(authed(), [SEARCH], observed(first))
    ready = condition(settled, "GatewayReady")
    assert ready.status == "True", ready.message
    assert ready.message.endswith("callers from 1 Secret: search")


def test_a_copy_the_list_no_longer_holds_is_asked_for_by_name_and_kept() -> None:
    first = compose(authed(), [SEARCH, ADS])
    result = compose(authed(), [SEARCH], observed(first))
    assert result.requirements[f"{CALLER_BY_NAME}/{CONTROL_NAMESPACE}/ads"] == Requirement(
        "v1", "Secret", match_name="ads", namespace=CONTROL_NAMESPACE
    )
    assert result.resources["caller/ads"].resource == first.resources["caller/ads"].resource
    assert manifests(result)[POLICY] == manifests(first)[POLICY]


def test_a_copy_whose_secret_is_gone_is_removed() -> None:
    first = compose(authed(), [SEARCH, ADS])
    gone = {f"{CALLER_BY_NAME}/{CONTROL_NAMESPACE}/ads": []}
    result = compose(authed(), [SEARCH], observed(first), **gone)
    assert "caller/ads" not in result.resources
    assert len(manifests(result)[POLICY]["spec"]["apiKeyAuth"]["credentialRefs"]) == 1


def test_a_copy_whose_secret_lost_the_labels_is_removed_revoking_its_callers() -> None:
    first = compose(authed(), [SEARCH, ADS])
    relabelled = {f"{CALLER_BY_NAME}/{CONTROL_NAMESPACE}/ads": [secret("ads", labels={}, a="eA==")]}
    result = compose(authed(), [SEARCH], observed(first), **relabelled)
    assert "caller/ads" not in result.resources


def test_a_copy_whose_secret_is_back_by_name_with_the_labels_is_kept_the_list_lagged() -> None:
    first = compose(authed(), [SEARCH, ADS])
    lagged = {f"{CALLER_BY_NAME}/{CONTROL_NAMESPACE}/ads": [ADS]}
    result = compose(authed(), [SEARCH], observed(first), **lagged)
    assert "caller/ads" in result.resources


def test_copies_are_kept_as_they_are_while_the_secrets_are_not_read() -> None:
    first = compose(authed(), [SEARCH])
    result = compose(authed(), None, observed(first))
    assert caller_keys(result) == caller_keys(first)


def test_selecting_the_fleet_ca_secret_is_refused_naming_it() -> None:
    result = compose(authed(), [secret("modelplane-fleet-ca", type_="kubernetes.io/tls")])
    assert result.fatal is not None
    assert "spec.auth.callerSecretSelector matches Secret modelplane-fleet-ca" in result.fatal
    assert "the fleet CA Secret" in result.fatal


def test_a_secret_of_another_type_is_refused_naming_it() -> None:
    result = compose(authed(), [secret("web", type_="kubernetes.io/tls", **{"tls.key": "eA=="})])
    assert result.fatal is not None
    assert "matches Secret web of type kubernetes.io/tls" in result.fatal


def test_one_identity_in_two_secrets_is_refused_naming_both() -> None:
    result = compose(authed(), [SEARCH, secret("copy", **{"search-prod": "eA=="})])
    assert result.fatal is not None
    assert "matches Secrets copy and search, both holding caller 'search-prod'" in result.fatal


def test_an_empty_selector_is_refused_at_composition_too() -> None:
    ig = authed()
    ig["spec"]["auth"]["callerSecretSelector"]["matchLabels"] = {}
    result = compose(ig, [SEARCH])
    assert result.fatal is not None
    assert "spec.auth.callerSecretSelector.matchLabels must name at least one label" in result.fatal
