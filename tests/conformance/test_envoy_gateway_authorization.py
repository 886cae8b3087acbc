"""Envoy Gateway v1.8.1 (envoyproxy/gateway, tag v1.8.1, 097ab899b9d0): what it does with a
ModelService's ``spec.callers``, which callers may use a model at the front door
(docs/design/shared-front-door.md, "Step 3 as built").

Behaviours relied on, each read at that tag:

- ``api/v1alpha1/authorization_types.go``: a rule's ``principal.headers`` matches "user identity
  extracted from custom headers", a header matching when one of its ``values`` matches exactly
  (at most 256 values); rules are evaluated in order, the first match applies; ``defaultAction``
  applies when none matches (Deny when unset). ``internal/gatewayapi/securitypolicy.go``
  (``Principal.Headers`` copied to the IR) and ``internal/xds/translator/authorization.go``
  (``buildHeadersPredicate``: the values of a header ORed, every header ANDed) build Envoy's RBAC
  matcher from it; a denied request is answered 403 by Envoy's RBAC filter.
- ``internal/xds/translator/httpfilters.go`` ``newOrderedHTTPFilter``: api_key_auth (order 6)
  runs before the RBAC filter (301), so the header the authorization reads is the identity the
  API-key filter set (a forged one is removed as requests arrive: the gateway's
  ClientTrafficPolicy, tests/conformance/test_envoy_gateway_api_key.py).
- A SecurityPolicy on a route replaces the gateway's on that route unless it sets
  ``mergeType`` (``api/v1alpha1/securitypolicy_types.go``: "If unset, no merging occurs, and
  only the most specific configuration takes effect"; ``Replace`` is refused).
  ``internal/gatewayapi/securitypolicy.go`` ``processSecurityPolicyForRoute``: with
  ``mergeType`` the route's policy is merged (``mergeSecurityPolicy``, ``utils.Merge``) into
  the policy of the listener its route is attached to (found by Gateway and ``sectionName``),
  else the Gateway's; ``buildSecurityPolicyOwners`` keeps the parent as the owner of
  ``apiKeyAuth.credentialRefs`` (its Secrets resolved as before). So a service's authorization
  is added on its routes and the gateway's API-key authentication stays on them.
- The same for BackendTrafficPolicy (``internal/gatewayapi/backendtrafficpolicy.go``
  ``mergeBackendTrafficPolicy`` and ``translateBackendTrafficPolicyForRouteWithMerge``: with
  only the gateway's policy holding a ``rateLimit``, its rules keep their names, so a
  caller's shared budget still spans every route). The merge is ``utils.Merge``
  (``internal/utils/merge.go``: Kubernetes' strategic merge patch over the Go type), and
  ``BackendTrafficPolicySpec.ResponseOverride`` carries no ``patchStrategy`` tag
  (``api/v1alpha1/backendtrafficpolicy_types.go``): the route's list replaces the gateway's, so
  the service's policy repeats the gateway's 429 override.
- ``api/v1alpha1/shared_types.go`` ``ResponseOverride``: ``source: Local`` overrides only
  Envoy-generated responses (``internal/xds/translator/custom_response.go`` ANDs the status
  match with a local-reply predicate), so an engine's or a provider's own 403 passes
  unchanged; ``CustomResponse.Body`` "supports Envoy command operators"
  (``buildResponseAction``: the body is a ``SubstitutionFormatString`` text format), so
  ``%REQ(x-modelplane-caller)%`` is the refused caller.

Not run here: Envoy does not run in the e2e tier. What the proxy answers is read from the
sources above.
"""

from __future__ import annotations

import json
from typing import Any

from modelplane.compose.inferencegateway.callers import CALLER_HEADER, front_listener
from modelplane.compose.modelservice import callers
from modelplane.compose.modelservice.composer import (
    CLUSTERS,
    GATEWAYS,
    compose_service,
    endpoints_requirement,
)
from modelplane.compose.shared.frontdoor import FRONT_LISTENER, budget_spent
from modelplane.composer import Inputs
from tests.compose.modelservice.kit import (
    again,
    cluster,
    gateway,
    manifests,
    replica_endpoint,
    service,
)

Obj = dict[str, Any]
AUTH = {"modelplane.ai/callers": "true"}


def composed(names: list[str]) -> dict[str, Obj]:
    ig = gateway(address="203.0.113.1")
    ig["spec"]["auth"] = {"callerSecretSelector": {"matchLabels": AUTH}}
    ms = service("qwen", "ml")
    ms["spec"]["callers"] = {"names": names}
    required = {
        GATEWAYS: [ig],
        CLUSTERS: [cluster("edge", pools=False), cluster("east")],
        endpoints_requirement(0): [
            replica_endpoint("qwen-east", "east", labels={"modelplane.ai/deployment": "qwen"})
        ],
    }
    first = Inputs(composite=ms, required=required)
    # The routes wait for the caller policy to be applied: the second reconcile holds both.
    return manifests(again(compose_service, first, compose_service(first)))


def test_the_principal_is_the_identity_header_the_api_key_filter_sets() -> None:
    rules = composed(["ads"])["callers/main"]["spec"]["authorization"]["rules"]
    assert [h["name"] for r in rules for h in r["principal"]["headers"]] == [CALLER_HEADER]


def test_no_header_match_holds_more_values_than_envoy_gateway_accepts() -> None:
    rules = composed([f"c{i}" for i in range(600)])["callers/main"]["spec"]["authorization"]
    assert max(len(h["values"]) for r in rules["rules"] for h in r["principal"]["headers"]) == 256


def test_what_no_rule_allows_is_denied_explicitly() -> None:
    authorization = composed(["ads"])["callers/main"]["spec"]["authorization"]
    assert authorization["defaultAction"] == "Deny"
    assert {r["action"] for r in authorization["rules"]} == {"Allow"}


def test_both_route_policies_merge_rather_than_replace_the_gateways() -> None:
    out = composed(["ads"])
    assert {out[k]["spec"].get("mergeType") for k in ("callers/main", "denied/main")} == {
        "StrategicMerge"
    }


def test_the_gateway_policy_is_on_the_listener_the_service_routes_attach_to() -> None:
    """Merged into the listener's policy, the API-key one, found by the routes' sectionName."""
    out = composed(["ads"])
    assert [t["sectionName"] for t in front_listener("main")] == [FRONT_LISTENER]
    for key in ("front/main", "models/main"):
        assert {p["sectionName"] for p in out[key]["spec"]["parentRefs"]} == {FRONT_LISTENER}


def test_the_route_policies_sit_beside_the_routes_they_target() -> None:
    out = composed(["ads"])
    namespace = out["front/main"]["metadata"]["namespace"]
    for key in ("callers/main", "denied/main"):
        assert out[key]["metadata"]["namespace"] == namespace  # targetRefs are local


def test_only_envoys_own_403_is_overridden_and_it_names_the_caller() -> None:
    override = composed(["ads"])["denied/main"]["spec"]["responseOverride"][0]
    assert override["source"] == "Local"
    message = json.loads(override["response"]["body"]["inline"])["error"]["message"]
    assert f"%REQ({callers.CALLER_HEADER})%" in message


def test_the_route_override_list_repeats_the_gateways_since_merging_replaces_it() -> None:
    overrides = composed(["ads"])["denied/main"]["spec"]["responseOverride"]
    assert budget_spent() in overrides
