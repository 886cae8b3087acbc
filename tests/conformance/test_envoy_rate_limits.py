"""Envoy Gateway v1.8.1 (097ab899b9d0) and Envoy AI Gateway v1.1.0: how a gateway's
``spec.limits`` become budgets per caller.

- The rule API (envoyproxy/gateway v1.8.1 api/v1alpha1/ratelimit_types.go): ``GlobalRateLimit``
  holds at most 256 ``rules``; a ``RateLimitSelectCondition`` matches headers, a ``HeaderMatch``
  of type ``Distinct`` "matches any and all possible unique values ... each unique value will
  receive its own rate limit bucket" (no ``value``), other types match ``value`` (at most 1024
  characters); ``limit`` is ``{requests, unit}``; ``cost.request`` / ``cost.response`` take a
  ``Number`` or ``Metadata{namespace, key}``.
- Buckets per route unless shared: "If the policy targets a Gateway, the rule applies to each
  Route of the Gateway ... each Route has its own rate limit counters" (``RateLimitRule``
  ``ClientSelectors``); ``shared: true`` makes "a common bucket ... shared across all policy
  targets". internal/xds/translator/ratelimit.go ``buildRouteRateLimits`` keys a shared rule's
  descriptor by the rule name instead of the route's. Modelplane sets ``shared`` on every rule:
  a caller's budget spans every ModelService routed on the gateway.
- Header matches become descriptors (``buildHeaderMatchRateLimitActions``): ``Distinct`` a
  ``request_headers`` action keyed by the header's value, other types a ``header_value_match``;
  two matches on one header (a ``Distinct`` and the caller list's ``RegularExpression``) are two
  actions with their own descriptor keys, so the bucket is per caller and only listed callers
  count.
- Costs (internal/gatewayapi/backendtrafficpolicy.go ``translateRateLimitCost``): ``Metadata``
  becomes the hits addend ``%DYNAMIC_METADATA(<namespace>:<key>)%``; a response cost is a
  second rate limit with ``ApplyOnStreamDone: true`` (ratelimit.go), charged when the stream
  ends. Envoy AI Gateway v1.1.0 api/v1alpha1/ai_gateway_route.go ``LLMRequestCosts``: "Setting
  the request cost to zero allows to only check the rate limit budget, and not consume the
  budget on the request path"; the response cost reads the metadata the AI Gateway filter
  stores in namespace ``io.envoy.ai_gateway`` (api/v1alpha1/shared_types.go
  ``AIGatewayFilterMetadataNamespace``), which internal/extproc/processor_impl.go writes at the
  end of the response body from the route's ``llmRequestCosts`` (or the GatewayConfig's
  ``globalLLMRequestCosts``, api/v1alpha1/gateway_config.go), each cost under its
  ``metadataKey`` with type ``InputToken``, ``OutputToken`` or ``TotalToken``.
- Order of filters (internal/xds/translator/httpfilters.go ``newOrderedHTTPFilter``): api_key_auth
  (6) and ext_proc (100+, the AI Gateway's, which sets ``x-ai-eg-model`` from the body) run
  before the global rate limit (303): the rate limit sees the caller the key authenticated and
  the model the body named.
- Enabling: ``buildGlobalRateLimit`` refuses a global rule unless the EnvoyGateway config has a
  rate-limit backend ("enable Ratelimit in the EnvoyGateway config to configure global
  rateLimit"); api/v1alpha1/envoygateway_types.go ``RateLimit{Backend{Type: Redis, Redis{URL}}}``,
  set through the gateway-helm chart's ``config.envoyGateway.rateLimit``
  (site/content/en/latest/tasks/traffic/global-rate-limit.md).
- The 429 (ratelimit.go ``buildRateLimitFilter``): ``x-ratelimit-*`` headers of draft 03 unless
  the listener disables them, ``x-envoy-ratelimited`` only with Envoy headers enabled. No
  ``Retry-After`` is configured at this version.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from modelplane.compose.inferencegateway.callers import CALLER_HEADER, CALLERS
from modelplane.compose.inferencegateway.composer import CLUSTERS, compose_gateway
from modelplane.compose.inferencegateway.limits import (
    COST_NAMESPACE,
    LIMITS,
    MAX_MATCH,
    MAX_RULES,
    MODEL_HEADER,
    TOKEN_KEYS,
)
from modelplane.composer import Inputs
from tests.compose.modelservice.kit import cluster, gateway, manifests

Obj = dict[str, Any]
CRDS = Path(__file__).resolve().parents[1] / "upstream" / "crds"
LABELS = {"modelplane.ai/callers": "true"}
CALLER_SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "search", "namespace": "crossplane-system", "labels": LABELS},
    "type": "Opaque",
    "data": {"search-prod": "a2V5"},
}


def crd_spec(name: str) -> Obj:
    crd = yaml.safe_load((CRDS / name).read_text())
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]


def rules(*entries: Obj) -> list[Obj]:
    ig = gateway()
    ig["spec"]["auth"] = {"callerSecretSelector": {"matchLabels": LABELS}}
    ig["spec"]["limits"] = list(entries)
    required = {CLUSTERS: [cluster("edge", pools=False)], CALLERS: [CALLER_SECRET]}
    policy = manifests(compose_gateway(Inputs(composite=ig, required=required)))[LIMITS]
    return policy["spec"]["rateLimit"]["global"]["rules"]


def test_the_bounds_split_by_are_the_pinned_crds() -> None:
    global_ = crd_spec("gateway.envoyproxy.io_backendtrafficpolicies.yaml")["properties"][
        "rateLimit"
    ]["properties"]["global"]["properties"]["rules"]
    header = global_["items"]["properties"]["clientSelectors"]["items"]["properties"]["headers"]
    assert global_["maxItems"] == MAX_RULES
    assert header["items"]["properties"]["value"]["maxLength"] == MAX_MATCH


def test_the_token_cost_types_are_the_ai_gateways() -> None:
    route = crd_spec("aigateway.envoyproxy.io_aigatewayroutes.yaml")
    cost_type = route["properties"]["llmRequestCosts"]["items"]["properties"]["type"]
    assert {t for _, t in TOKEN_KEYS.values()} <= set(cost_type["enum"])


def test_every_rule_is_shared_so_a_budget_spans_every_route_of_the_gateway() -> None:
    found = rules({"requestsPerMinute": 5, "tokensPerMinute": {"total": 9}})
    assert [r["shared"] for r in found] == [True, True]


def test_each_caller_is_a_bucket_of_its_own() -> None:
    [rule] = rules({"requestsPerMinute": 5})
    assert rule["clientSelectors"][0]["headers"] == [{"name": CALLER_HEADER, "type": "Distinct"}]


def test_a_token_budget_is_checked_on_the_request_and_spent_from_the_ai_gateways_metadata() -> None:
    [rule] = rules({"tokensPerMinute": {"output": 9}})
    assert rule["cost"]["request"] == {"from": "Number", "number": 0}
    assert rule["cost"]["response"]["metadata"] == {
        "namespace": COST_NAMESPACE,
        "key": TOKEN_KEYS["output"][0],
    }
    assert COST_NAMESPACE == "io.envoy.ai_gateway"


def test_a_budget_per_model_buckets_by_the_header_the_ai_gateway_sets() -> None:
    [rule] = rules({"requestsPerMinute": 5, "perModel": True})
    assert {"name": MODEL_HEADER, "type": "Distinct"} in rule["clientSelectors"][0]["headers"]
    assert MODEL_HEADER == "x-ai-eg-model"  # v1.1.0 api/v1alpha1/shared_types.go AIModelHeaderKey
