"""Envoy Gateway v1.8.1 (097ab899b9d0) and the Envoy it runs (v1.38.1, its default image,
api/v1alpha1/shared_types.go ``DefaultEnvoyProxyImage``): how a gateway with ``spec.auth``
authenticates callers, forwards their identity and keeps the key and a forged identity from
every backend.

- The credential Secret (envoyproxy/gateway v1.8.1 api/v1alpha1/api_key_auth_types.go
  ``APIKeyAuth``): Opaque, "each API key is stored in the key representing the client id";
  internal/gatewayapi/securitypolicy.go ``buildAPIKeyAuth`` reads every entry of every
  ``credentialRefs`` Secret as (client id, key), skipping a client id already seen (the first
  wins, silently: Modelplane refuses one identity in two Secrets) and failing the policy on one
  key held by two clients.
- A policy that fails to translate does not open the route: ``translateSecurityPolicyForRoute``
  / ``...ForGateway`` in the same file set a 500 direct response on every route it covers
  ("Return a 500 direct response to avoid unauthorized access").
- ``extractFrom``, ``forwardClientIDHeader`` and ``sanitize`` become the filter's key sources and
  ``Forwarding{Header, HideCredentials}`` (internal/xds/translator/api_key_auth.go
  ``buildAPIKeyAuthFilterConfig``); the filter is configured per route, disabled at the HCM
  (``buildHCMAPIKeyAuthFilter`` ``Disabled: true``, ``patchRoute``), so it runs on exactly the
  routes the policy covers.
- Envoy's filter (envoyproxy/envoy source/extensions/filters/http/api_key_auth/api_key_auth.cc,
  read at the stored revision 03503b340e0e; the behaviour below is the one Envoy Gateway
  v1.8.1 documents in site/content/en/latest/tasks/security/apikey-auth.md): a header source
  whose value starts with ``Bearer `` has it dropped before the lookup, so ``Authorization:
  Bearer <key>`` and a bare key both authenticate and the Secret holds the bare key; a missing
  or unknown key is answered 401 before any backend; the client id is written with
  ``headers.setCopy`` (a header the request already carries is replaced, never appended to);
  with ``hide_credentials`` every key source is removed (``KeySources::removeKey``).
- Where the identity header is removed: an HTTPRoute ``RequestHeaderModifier`` becomes the xDS
  route's ``request_headers_to_remove`` (internal/xds/translator/route.go), which Envoy's router
  applies when it forwards, after every HTTP filter (Envoy Gateway v1.8.1
  site/content/en/latest/tasks/traffic/http-request-headers.md: the filter "will only modify
  headers before the request is sent from Envoy to the upstream"): a route filter removing
  ``x-modelplane-caller`` would remove the identity the api_key_auth filter set. A
  ClientTrafficPolicy's ``headers.earlyRequestHeaders`` (api/v1alpha1/clienttrafficpolicy_types.go:
  "before envoy performs routing, tracing and built-in header manipulation";
  internal/xds/translator/listener.go ``buildEarlyHeaderMutation``, the HCM's
  ``early_header_mutation_extensions``) runs before the filter chain: Modelplane removes the
  header there, and the filter's ``setCopy`` would replace a forged one anyway.
- Policies attach to one listener by ``sectionName`` (internal/gatewayapi/securitypolicy.go
  ``validateGatewayListenerSectionName``), so the ACME listener of a gateway whose certificate
  comes from an issuer stays open to the HTTP-01 solver.
"""

from __future__ import annotations

from typing import Any

from modelplane.compose.inferencegateway.callers import CALLERS, HEADER_GUARD, POLICY
from modelplane.compose.inferencegateway.composer import CLUSTERS, compose_gateway
from modelplane.composer import Inputs
from tests.compose.modelservice.kit import cluster, gateway, manifests

Obj = dict[str, Any]
LABELS = {"modelplane.ai/callers": "true"}
CALLER_SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "search", "namespace": "crossplane-system", "labels": LABELS},
    "type": "Opaque",
    "data": {"search-prod": "a2V5"},
}


def composed(key_header: str | None = None) -> dict[str, Obj]:
    ig = gateway()
    ig["spec"]["auth"] = {"callerSecretSelector": {"matchLabels": LABELS}}
    if key_header:
        ig["spec"]["auth"]["keyHeader"] = key_header
    required = {CLUSTERS: [cluster("edge", pools=False)], CALLERS: [CALLER_SECRET]}
    return manifests(compose_gateway(Inputs(composite=ig, required=required)))


def test_the_copied_secret_is_opaque_with_one_entry_per_caller() -> None:
    copy = composed()["caller/search"]
    assert copy["type"] == "Opaque"
    assert "data" not in copy


def test_the_key_is_read_from_one_header_where_envoy_drops_a_bearer_prefix() -> None:
    api_key = composed()[POLICY]["spec"]["apiKeyAuth"]
    assert api_key["extractFrom"] == [{"headers": ["authorization"]}]


def test_the_identity_is_forwarded_and_the_key_removed_before_any_backend() -> None:
    api_key = composed()[POLICY]["spec"]["apiKeyAuth"]
    assert api_key["forwardClientIDHeader"] == "x-modelplane-caller"
    assert api_key["sanitize"] is True


def test_the_policy_covers_the_https_listener_only() -> None:
    [target] = composed()[POLICY]["spec"]["targetRefs"]
    assert (target["kind"], target["sectionName"]) == ("Gateway", "https")


def test_a_forged_identity_is_removed_before_the_filter_chain_not_by_a_route() -> None:
    guard = composed()[HEADER_GUARD]
    assert guard["kind"] == "ClientTrafficPolicy"
    assert "x-modelplane-caller" in guard["spec"]["headers"]["earlyRequestHeaders"]["remove"]
    assert [t["sectionName"] for t in guard["spec"]["targetRefs"]] == ["https"]
