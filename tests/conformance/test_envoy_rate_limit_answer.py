"""Whether the 429 a spent budget is answered with can name the limit that was hit: it can,
in its body, at the versions Envoy Gateway v1.8.1 (envoyproxy/gateway, tag v1.8.1,
097ab899b9d0) runs: Envoy ``distroless-v1.38.1`` and envoyproxy/ratelimit ``ff287602``
(api/v1alpha1/shared_types.go ``DefaultEnvoyProxyImage``, ``DefaultRateLimitImage``).

What the refused reply carries:

- Envoy Gateway internal/xds/translator/ratelimit.go ``createRateLimitFilter``: the global
  rate-limit filter has ``enable_x_ratelimit_headers: DRAFT_VERSION_03`` unless the listener's
  ClientTrafficPolicy sets ``headers.disableRateLimitHeaders`` (then ``OFF``); that is the
  listener's HTTP filter, the default of every descriptor. ``buildRouteRateLimits`` sets each
  rule's own ``x_ratelimit_option`` (an entry of the route's ``RateLimitPerRoute.rate_limits``,
  testdata/out/xds-ir/ratelimit-per-rule-headers.routes.yaml) with ``toEnvoyXRateLimitOption``:
  ``DraftVersion03`` is ``DRAFT_VERSION_03``, ``Disabled`` is ``OFF``, unset or any other value
  ``UNSPECIFIED`` (the filter's setting); a rule's response-cost entry
  (``apply_on_stream_done``) copies the same option. internal/gatewayapi/backendtrafficpolicy.go
  ``buildRateLimitRule`` carries ``xRateLimitHeaders`` into the IR unchanged;
  api/v1alpha1/ratelimit_types.go: "When set, this overrides the global DisableRateLimitHeaders
  setting in ClientTrafficPolicy for this rule". (The CRD's enum is ``Off``, ``DraftVersion03``
  while the Go constant for off is ``Disabled``, so a rule's ``Off`` is admitted and translated
  to UNSPECIFIED; ``DraftVersion03`` is spelled alike on both sides.)
- Envoy source/extensions/filters/http/ratelimit/ratelimit_headers.cc (1.38 revision)
  ``enableXRateLimitHeaders(descriptors, index, default_enabled)``: a descriptor's
  ``x_ratelimit_option`` decides (on only for ``DRAFT_VERSION_03``); ``UNSPECIFIED`` falls back
  to the filter's setting. ``populateHeaders(descriptors, enabled, statuses, headers)`` writes
  the headers when the status with the least remaining is on, and lists only the statuses that
  are on; test/.../ratelimit/ratelimit_headers_test.cc runs each case with the filter off too
  (``enabled=false``), where a ``DRAFT_VERSION_03`` descriptor still gets its headers.
  test/extensions/filters/common/ratelimit_config/ratelimit_config_test.cc: the per-route
  ``rate_limits`` path puts each entry's ``x_ratelimit_option`` on its descriptor. The 1.38
  ``Filter::complete`` call site was not among the stored sources; that it passes the filter's
  setting as ``enabled`` is read from ``populateHeaders``'s signature and that test.
- Envoy source/extensions/filters/http/ratelimit/ratelimit.cc ``Filter::complete``: over the
  limit it calls ``sendLocalReply(429, ..., modify_headers)`` whose ``modify_headers`` copies
  the ``x-ratelimit-*`` headers onto the reply (``populateResponseHeaders``);
  source/common/http/utility.cc ``prepareLocalReply`` applies ``modify_headers`` before the
  reply's headers are encoded through the filter chain (filter_manager.cc
  ``sendLocalReplyViaFilterChain``), so the custom-response filter sees them.
- Envoy ratelimit_headers.cc ``XRateLimitHeaderUtils::populateHeaders`` (the revision with
  per-descriptor ``x_ratelimit_option``, Envoy 1.38): ``x-ratelimit-limit`` is the quota of the
  descriptor status with the least remaining, then ``, <quota>;w=<window seconds>`` for every
  status (``;name="<name>"`` appended only when the limit has a name);
  ``x-ratelimit-reset`` is that status's ``duration_until_reset`` in seconds.
- envoyproxy/ratelimit ff287602: src/limiter/base_limiter.go
  ``generateResponseDescriptorStatus`` returns ``current_limit``, ``limit_remaining`` (0 once
  over) and ``duration_until_reset`` (``utils.CalculateReset`` of the unit);
  src/config/config_impl.go ``NewRateLimit`` names the limit with the config's ``name``,
  which src/config/config_xds.go ``rateLimitPolicyPbToYaml`` takes from the xDS
  ``RateLimitPolicy.name``. Envoy Gateway's ``buildRateLimitServiceDescriptors`` sets only
  ``requests_per_unit`` and ``unit`` (and ``shadow_mode``): no name, so the header carries
  digits, ", ", ";w=" only, and nothing that could break a JSON string.

What the override can read:

- Envoy Gateway internal/xds/translator/custom_response.go ``buildResponseAction``: the body
  is a ``SubstitutionFormatString`` text format; ``header.set`` values go verbatim into
  ``response_headers_to_add`` (route.go ``buildXdsAddedHeaders``).
- Envoy source/extensions/http/custom_response/local_response_policy/local_response_policy.cc
  ``LocalResponsePolicy::encodeHeaders``: ``formatBody`` formats the body with the headers of
  the reply being replaced as the response headers, then sends a new local reply whose
  ``response_headers_to_add`` are evaluated by ``evaluateHeaders(headers, stream_info)``;
  source/common/router/header_parser.h says of that overload "Response headers will always be
  empty". So the body can name the limit; a header of the override cannot (nor can
  ``Retry-After`` carry the exact reset), and the refused reply's own ``x-ratelimit-*``
  headers do not reach the caller.
- Envoy source/common/formatter/http_specific_formatter.cc: ``RESP`` is "Same as
  RESPONSE_HEADER" (``ResponseHeaderFormatter`` reads the context's response headers); an
  absent header formats as no value, which a text format writes as ``-``.

What is not possible: naming the ``spec.limits`` entry. Envoy Gateway v1.8.1's
``RateLimitRule`` has no name (the CRD below) and sets none on the descriptor, and
``responseOverride`` matches status codes only (``match.statusCodes``), so one 429 answer
serves every rule. The body names the spent budget by its quota and window instead.

Envoy sources were read at stored revisions of envoyproxy/envoy carrying the 1.38 features
named above, not at the v1.38.1 tag itself; Envoy Gateway and ratelimit at the pinned tags.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from modelplane.compose.inferencegateway.callers import CALLERS
from modelplane.compose.inferencegateway.composer import CLUSTERS, compose_gateway
from modelplane.compose.inferencegateway.limits import LIMITS
from modelplane.compose.shared.frontdoor import RETRY_AFTER, budget_spent
from modelplane.composer import Inputs
from tests.compose.modelservice.kit import cluster, gateway, manifests

Obj = dict[str, Any]
CRDS = Path(__file__).resolve().parents[1] / "upstream" / "crds"
OPERATOR = re.compile(r"%([A-Z_]+)\(([^)]*)\)%")
LABELS = {"modelplane.ai/callers": "true"}
CALLER_SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "search", "namespace": "crossplane-system", "labels": LABELS},
    "type": "Opaque",
    "data": {"search-prod": "a2V5"},
}
WINDOW = {"Second": 1, "Minute": 60, "Hour": 3600, "Day": 86400}
"""ratelimit_headers.cc ``convertRateLimitUnit``: the window in seconds of each unit."""
X_RATELIMIT_OPTION = {"DraftVersion03": "DRAFT_VERSION_03", "Disabled": "OFF"}
"""ratelimit.go ``toEnvoyXRateLimitOption``: a rule's ``x_ratelimit_option`` per
``xRateLimitHeaders`` value; unset and any other value are ``UNSPECIFIED``."""


def headers_sent(rule: Obj, listener_disables: bool) -> bool:
    """Whether Envoy writes the ``x-ratelimit-*`` headers of ``rule``'s descriptor
    (ratelimit_headers.cc ``enableXRateLimitHeaders``; the filter's own setting is
    ``createRateLimitFilter``'s)."""
    option = X_RATELIMIT_OPTION.get(rule.get("xRateLimitHeaders", ""), "UNSPECIFIED")
    if option == "UNSPECIFIED":
        return not listener_disables
    return option == "DRAFT_VERSION_03"


def x_ratelimit_limit(statuses: list[tuple[int, str, int]]) -> str:
    """Envoy's ``x-ratelimit-limit`` for descriptor statuses ``(quota, unit, remaining)`` with no
    name (``XRateLimitHeaderUtils::populateHeaders``)."""
    least = min(statuses, key=lambda s: s[2])  # the first of the least remaining
    return str(least[0]) + "".join(f", {q};w={WINDOW[u]}" for q, u, _ in statuses)


def answered(body: str, headers: dict[str, str]) -> str:
    """The body as Envoy formats it with the refused reply's ``headers``: each ``%RESP(h)%``
    becomes the header's value, or ``-`` when it is absent."""

    def value(found: re.Match[str]) -> str:
        assert found.group(1) in ("RESP", "RESPONSE_HEADER"), found.group(0)
        return headers.get(found.group(2).lower(), "-")

    return OPERATOR.sub(value, body)


def body() -> str:
    inline: str = budget_spent()["response"]["body"]["inline"]
    return inline


def composed(*entries: Obj) -> dict[str, Obj]:
    ig = gateway()
    ig["spec"]["auth"] = {"callerSecretSelector": {"matchLabels": LABELS}}
    ig["spec"]["limits"] = list(entries)
    required = {CLUSTERS: [cluster("edge", pools=False)], CALLERS: [CALLER_SECRET]}
    return manifests(compose_gateway(Inputs(composite=ig, required=required)))


def crd_spec(name: str) -> Obj:
    crd = yaml.safe_load((CRDS / name).read_text())
    spec: Obj = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return spec


def test_the_body_reads_the_refused_replys_limit_and_reset_headers() -> None:
    operators = {m.group(0) for m in OPERATOR.finditer(body())}
    assert operators == {"%RESP(X-RATELIMIT-LIMIT)%", "%RESP(X-RATELIMIT-RESET)%"}


def test_every_percent_sign_in_the_body_belongs_to_an_operator() -> None:
    # A stray % is taken for the start of an operator and the policy is refused by Envoy.
    assert "%" not in OPERATOR.sub("", body())


def test_the_answer_names_the_quota_and_window_of_the_spent_budget() -> None:
    limit = x_ratelimit_limit([(600, "Minute", 412), (2000000, "Minute", 0)])
    assert limit == "2000000, 600;w=60, 2000000;w=60"
    sent = json.loads(answered(body(), {"x-ratelimit-limit": limit, "x-ratelimit-reset": "17"}))
    message = sent["error"]["message"]
    assert "limit 2000000, 600;w=60, 2000000;w=60 " in message
    assert "resets in 17 seconds" in message


def test_the_answer_is_json_even_without_the_rate_limit_headers() -> None:
    # A refused reply without them (a status with no current limit) leaves each operator "-".
    sent = json.loads(answered(body(), {}))
    assert sent["error"]["code"] == 429
    assert "limit - " in sent["error"]["message"]


def test_retry_after_is_a_literal_as_the_override_headers_see_no_response_headers() -> None:
    [header] = budget_spent()["response"]["header"]["set"]
    assert header == {"name": "Retry-After", "value": RETRY_AFTER}
    assert OPERATOR.search(header["value"]) is None


def test_every_composed_rule_sends_the_headers_where_the_listener_disables_them() -> None:
    # A ClientTrafficPolicy of the platform's own may set headers.disableRateLimitHeaders on the
    # front listener; the rule's option overrides it, so the body still names the limit.
    policy = composed({"requestsPerMinute": 5, "tokensPerMinute": {"total": 9}})[LIMITS]
    rules = policy["spec"]["rateLimit"]["global"]["rules"]
    assert rules
    assert all(headers_sent(rule, listener_disables=True) for rule in rules)


def test_the_pinned_crd_spells_the_per_rule_option_as_the_translator_reads_it() -> None:
    spec = crd_spec("gateway.envoyproxy.io_backendtrafficpolicies.yaml")["properties"]
    rule = spec["rateLimit"]["properties"]["global"]["properties"]["rules"]["items"]
    admitted = set(rule["properties"]["xRateLimitHeaders"]["enum"])
    assert admitted == {"Off", "DraftVersion03"}
    # Only DraftVersion03 is both admitted and translated; "Off" reaches Envoy as UNSPECIFIED.
    assert admitted & set(X_RATELIMIT_OPTION) == {"DraftVersion03"}


def test_no_composed_client_policy_disables_the_rate_limit_headers() -> None:
    client = [
        m
        for m in composed({"requestsPerMinute": 5}).values()
        if m.get("kind") == "ClientTrafficPolicy"
    ]
    assert client  # the caller guard is on the same listener
    for policy in client:
        assert not policy["spec"].get("headers", {}).get("disableRateLimitHeaders")


def test_a_rule_has_no_name_and_an_override_matches_status_codes_only() -> None:
    # Why the answer names the budget by quota and window, not by its spec.limits entry.
    spec = crd_spec("gateway.envoyproxy.io_backendtrafficpolicies.yaml")["properties"]
    rule = spec["rateLimit"]["properties"]["global"]["properties"]["rules"]["items"]
    assert "name" not in rule["properties"]
    match = spec["responseOverride"]["items"]["properties"]["match"]
    assert set(match["properties"]) == {"statusCodes"}
