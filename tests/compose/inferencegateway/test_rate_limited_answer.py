"""The answer to a caller whose budget is spent: the limits policy overrides Envoy's own 429
with a JSON body saying a budget of the gateway was hit and a ``Retry-After``; an engine's or an
external provider's 429 is theirs and passes unchanged."""

from __future__ import annotations

import json
from typing import Any

from modelplane.compose.inferencegateway.limits import LIMITS
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


def test_the_429_says_a_budget_of_the_gateway_was_spent_as_an_openai_error() -> None:
    response = override()["response"]
    assert response["contentType"] == "application/json"
    error = json.loads(response["body"]["inline"])["error"]
    assert error["type"] == "rate_limit_exceeded"
    assert "spec.limits" in error["message"]


def test_the_429_tells_the_caller_to_retry_once_the_minute_window_has_passed() -> None:
    response = override()["response"]
    assert response["header"] == {"set": [{"name": "Retry-After", "value": "60"}]}


def test_the_body_holds_no_envoy_command_operator() -> None:
    # Envoy reads the body as a format string: a % would be taken for an operator.
    assert "%" not in override()["response"]["body"]["inline"]


def test_the_override_keeps_the_status_envoy_answered() -> None:
    assert "statusCode" not in override()["response"]


def test_the_policy_with_its_override_is_admitted_by_the_pinned_crd() -> None:
    result = compose(limited({"requestsPerMinute": 60}), [SEARCH])
    assert invalid(Result(resources={LIMITS: result.resources[LIMITS]})) == {}
