"""Budgets per caller at an InferenceGateway (``spec.limits``).

One Envoy Gateway BackendTrafficPolicy on the front listener with a global ``rateLimit``: per
entry and rate, a rule whose client selector buckets requests by the ``x-modelplane-caller``
header (``Distinct``: one counter per caller), restricted to the callers the entry selects (a
regular expression of their identities) and, ``perModel``, bucketed by the model header the AI
Gateway sets from the body too. Every rule is ``shared``: a policy on a Gateway otherwise counts
each route apart, and a caller's budget spans every ModelService of the gateway.

Requests per minute are plain request counts. Tokens per minute check the budget on the request
(cost 0) and charge it when the response is complete, from the dynamic metadata Envoy AI
Gateway writes under ``io.envoy.ai_gateway`` for the ``llmRequestCosts`` of the route that
served it (the keys below: the AIGatewayRoute must declare them). Each behaviour relied on is
cited in tests/conformance/test_envoy_rate_limits.py.

The same policy answers the 429 Envoy itself sends when a budget is spent (``responseOverride``,
source ``Local``: an engine's or an external provider's own 429 passes unchanged) with a JSON
body naming the limit that was hit (its quota and window, read from the refused reply's
``x-ratelimit-*`` headers) and ``Retry-After``: tests/conformance/
test_envoy_rate_limit_backend.py and test_envoy_rate_limit_answer.py. Every rule pins those
headers on (``xRateLimitHeaders``), so a ClientTrafficPolicy of the platform's own that
disables them on the front listener does not leave the body without its limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.compose.inferencegateway.callers import (
    CALLER_HEADER,
    Callers,
    entries,
    front_policy,
    on_host,
    without_auth,
)
from modelplane.compose.shared.frontdoor import MODEL_HEADER, ClusterGateway, budget_spent
from modelplane.composer import Desired, Inputs, carry_forward
from modelplane.kube import objects
from modelplane.kube.objects import Obj

LIMITS = "caller-limits"
"""The composition resource name of the rate-limit policy."""
COST_NAMESPACE = "io.envoy.ai_gateway"
TOKEN_KEYS = {
    "input": ("llm_input_token", "InputToken"),
    "output": ("llm_output_token", "OutputToken"),
    "total": ("llm_total_token", "TotalToken"),
}
"""Per ``tokensPerMinute`` field: the metadata key the rule reads its cost from, and the
``llmRequestCosts`` type an AIGatewayRoute must store under that key."""
MAX_RULES = 256
"""Envoy Gateway v1.8.1's ``GlobalRateLimit.rules`` maxItems."""
MAX_MATCH = 1024
"""Envoy Gateway v1.8.1's ``HeaderMatch.value`` maxLength: a longer caller list is split."""
RATE_LIMIT_HEADERS = "DraftVersion03"
"""Each rule's ``xRateLimitHeaders``: Envoy sends the draft-03 ``x-ratelimit-*`` headers of
its descriptor whatever the listener's ``disableRateLimitHeaders`` says, and the 429's body
reads them."""


def guarded_headers(spec: Mapping[str, Any]) -> tuple[str, ...]:
    """Headers removed from every request as it arrives: the model header when a budget is per
    model, so that only the AI Gateway's own value (set from the body) picks the bucket."""
    return (MODEL_HEADER,) if any(e.get("perModel") for e in entries(spec, "limits")) else ()


def limits_problem(spec: Mapping[str, Any]) -> str:
    """Why ``spec.limits`` cannot be composed, or "" (the XRD refuses the same at admission)."""
    problem = without_auth(spec, "limits")
    if problem:
        return problem
    for n, entry in enumerate(entries(spec, "limits")):
        if "requestsPerMinute" not in entry and not entry.get("tokensPerMinute"):
            return (
                f"InferenceGateway spec.limits[{n}] has neither requestsPerMinute nor "
                "tokensPerMinute: an entry with no rate limits nothing. Nothing was changed"
            )
    return ""


def selected_callers(
    entry: Mapping[str, Any], identities: Mapping[str, Mapping[str, str]]
) -> list[str] | None:
    """The identities an entry budgets: those named and those whose Secret's labels match its
    selector; None when it names no callers (every caller)."""
    callers = entry.get("callers")
    if not isinstance(callers, Mapping):
        return None
    named = {str(n) for n in callers.get("names") or []}
    labels = objects.mapping(callers, "selector", "matchLabels")
    if labels:
        named |= {
            i for i, have in identities.items() if all(have.get(k) == v for k, v in labels.items())
        }
    return sorted(named)


def caller_patterns(callers: list[str]) -> list[str]:
    """RE2 patterns matching exactly ``callers``, each within Envoy Gateway's header-value length
    (identities are alphanumerics, -, _ and .: only the dot needs escaping)."""
    patterns: list[str] = []
    chunk: list[str] = []
    for caller in callers:
        escaped = caller.replace(".", "\\.")
        if chunk and len(_pattern([*chunk, escaped])) > MAX_MATCH:
            patterns.append(_pattern(chunk))
            chunk = []
        chunk.append(escaped)
    if chunk:
        patterns.append(_pattern(chunk))
    return patterns


def _pattern(escaped: list[str]) -> str:
    return f"^({'|'.join(escaped)})$"


def rules(spec: Mapping[str, Any], identities: Mapping[str, Mapping[str, str]]) -> list[Obj]:
    """The policy's rules: per entry, per group of its callers, one per rate it sets."""
    out: list[Obj] = []
    for entry in entries(spec, "limits"):
        callers = selected_callers(entry, identities)
        if callers == []:
            continue  # it selects nobody today: nothing to count
        patterns: list[str | None] = [None] if callers is None else [*caller_patterns(callers)]
        for pattern in patterns:
            selector = _selector(pattern, bool(entry.get("perModel")))
            out.extend(_entry_rules(entry, selector))
    return out


def _selector(pattern: str | None, per_model: bool) -> Obj:
    headers: list[Obj] = [{"name": CALLER_HEADER, "type": "Distinct"}]
    if pattern is not None:
        headers.append({"name": CALLER_HEADER, "type": "RegularExpression", "value": pattern})
    if per_model:
        headers.append({"name": MODEL_HEADER, "type": "Distinct"})
    return {"headers": headers}


def _entry_rules(entry: Mapping[str, Any], selector: Obj) -> list[Obj]:
    out: list[Obj] = []
    if "requestsPerMinute" in entry:
        out.append(_rule(selector, int(entry["requestsPerMinute"])))
    tokens = entry.get("tokensPerMinute") or {}
    for kind, (key, _) in TOKEN_KEYS.items():
        if kind in tokens:
            out.append(_rule(selector, int(tokens[kind]), _token_cost(key)))
    return out


def _rule(selector: Obj, per_minute: int, cost: Obj | None = None) -> Obj:
    rule: Obj = {
        "clientSelectors": [selector],
        "limit": {"requests": per_minute, "unit": "Minute"},
        "shared": True,
        "xRateLimitHeaders": RATE_LIMIT_HEADERS,
    }
    if cost:
        rule["cost"] = cost
    return rule


def _token_cost(key: str) -> Obj:
    """Checked on the request without spending (cost 0); spent when the response is complete,
    by the tokens the AI Gateway stored under ``key``."""
    return {
        "request": {"from": "Number", "number": 0},
        "response": {"from": "Metadata", "metadata": {"namespace": COST_NAMESPACE, "key": key}},
    }


def too_many_rules(found: list[Obj]) -> str:
    if len(found) <= MAX_RULES:
        return ""
    return (
        f"InferenceGateway spec.limits makes {len(found)} rate-limit rules, more than the "
        f"{MAX_RULES} one Envoy Gateway policy holds (one per entry and rate, and per "
        f"{MAX_MATCH} characters of the callers it names); select callers by fewer, broader "
        "labels. Nothing was changed"
    )


def rate_limit_policy(gateway: str, host: ClusterGateway, found: list[Obj]) -> Obj:
    """The BackendTrafficPolicy counting every caller's budget on the front listener."""
    spec = {"rateLimit": {"global": {"rules": found}}, "responseOverride": [budget_spent()]}
    return front_policy("BackendTrafficPolicy", gateway, "limits", host, spec)


def compose_limits(
    inputs: Inputs, gateway: str, host: ClusterGateway, auth: Callers
) -> tuple[dict[str, Desired], str]:
    """The rate-limit policy of a gateway with ``spec.limits`` (nothing without), or why it
    cannot be composed. While the caller Secrets are read, what was composed is kept."""
    spec = inputs.composite["spec"]
    if not entries(spec, "limits"):
        return {}, ""
    if auth.reading:
        return carry_forward({k: v for k, v in inputs.observed.items() if k == LIMITS}), ""
    found = rules(spec, auth.identities)
    problem = too_many_rules(found)
    if problem:
        return {}, problem
    policy = rate_limit_policy(gateway, host, found)
    return {LIMITS: on_host(inputs, gateway, host, LIMITS, policy)}, ""
