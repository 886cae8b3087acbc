"""The answer to a caller whose budget is spent: the limits policy overrides Envoy's own 429
with a JSON body naming the limit that was hit (its quota and window, and when it resets, read
from the refused reply's ``x-ratelimit-*`` headers) and a ``Retry-After``; an engine's or an
external provider's 429 is theirs and passes unchanged. Why the body can read those headers
and a header of the override cannot: tests/conformance/test_envoy_rate_limit_answer.py."""

from __future__ import annotations

import json
from typing import Any

from modelplane.compose.inferencegateway.limits import LIMITS
from modelplane.compose.shared.frontdoor import budget_spent
from modelplane.composer import Result
from tests.compose.inferencegateway.test_callers import SEARCH, compose
from tests.compose.inferencegateway.test_limits import limited
from tests.compose.modelservice.kit import invalid, manifests

Obj = dict[str, Any]


def override() -> Obj:
    result = compose(limited({"requestsPerMinute": 60}), [SEARCH])
    [found] = manifests(result)[LIMITS]["spec"]["responseOverride"]
    answer: Obj = found
    return answer


def test_only_envoys_own_429_is_answered() -> None:
    found = override()
    assert found["match"] == {"statusCodes": [{"type": "Value", "value": 429}]}
    assert found["source"] == "Local"


def error() -> Obj:
    found: Obj = json.loads(override()["response"]["body"]["inline"])["error"]
    return found


def test_the_429_says_a_budget_of_the_gateway_was_spent_as_an_openai_error() -> None:
    assert override()["response"]["contentType"] == "application/json"
    assert error()["type"] == "rate_limit_exceeded"
    assert "spec.limits" in error()["message"]


def test_the_429_tells_the_caller_to_retry_once_the_minute_window_has_passed() -> None:
    response = override()["response"]
    assert response["header"] == {"set": [{"name": "Retry-After", "value": "60"}]}


def test_the_429_names_the_quota_and_window_of_the_limit_that_was_hit() -> None:
    message = error()["message"]
    assert "limit %RESP(X-RATELIMIT-LIMIT)% " in message
    assert "quota;w=window seconds" in message


def test_the_429_says_when_the_spent_budget_resets() -> None:
    assert "resets in %RESP(X-RATELIMIT-RESET)% seconds" in error()["message"]


def test_the_body_reads_nothing_but_the_refused_replys_rate_limit_headers() -> None:
    # Envoy reads the body as a format string: any other % would be taken for an operator.
    body = override()["response"]["body"]["inline"]
    for operator in ("%RESP(X-RATELIMIT-LIMIT)%", "%RESP(X-RATELIMIT-RESET)%"):
        body = body.replace(operator, "")
    assert "%" not in body


def test_the_operators_sit_inside_a_json_string_so_any_value_envoy_writes_keeps_it_json() -> None:
    body = override()["response"]["body"]["inline"]
    filled = body.replace("%RESP(X-RATELIMIT-LIMIT)%", "-").replace(
        "%RESP(X-RATELIMIT-RESET)%", "-"
    )
    assert json.loads(filled)["error"]["code"] == 429


def test_the_gateway_answers_with_the_front_doors_one_answer() -> None:
    # ModelService route policies repeat the same budget_spent() (tests/compose/modelservice).
    assert override() == budget_spent()


def test_the_override_keeps_the_status_envoy_answered() -> None:
    assert "statusCode" not in override()["response"]


def test_the_policy_with_its_override_is_admitted_by_the_pinned_crd() -> None:
    result = compose(limited({"requestsPerMinute": 60}), [SEARCH])
    assert invalid(Result(resources={LIMITS: result.resources[LIMITS]})) == {}
