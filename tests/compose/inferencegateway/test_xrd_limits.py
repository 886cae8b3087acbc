"""InferenceGateway ``spec.limits`` admission: budgets per caller need callers who authenticate,
and every entry limits something."""

from __future__ import annotations

from typing import Any

import pytest

from tests.compose.inferencegateway.gateways import AUTHENTICATED as GATEWAY
from tests.fleet.xrd import admission, errors, mutated, rule_error

SEARCH = {"selector": {"matchLabels": {"team": "search"}}}


def with_limits(*limits: dict[str, Any]) -> dict[str, Any]:
    return mutated(GATEWAY, lambda g: g["spec"].update(limits=list(limits)))


def test_a_request_rate_for_callers_selected_by_labels_is_admitted() -> None:
    assert (
        errors("inferencegateways", with_limits({"callers": SEARCH, "requestsPerMinute": 600}))
        == []
    )


def test_token_rates_per_model_for_named_callers_are_admitted() -> None:
    limit = {
        "callers": {"names": ["search-prod", "ads.batch"]},
        "tokensPerMinute": {"input": 1000, "output": 500, "total": 2000000},
        "perModel": True,
    }
    assert errors("inferencegateways", with_limits(limit)) == []


def test_an_entry_without_callers_budgets_every_caller_and_is_admitted() -> None:
    assert errors("inferencegateways", with_limits({"requestsPerMinute": 60})) == []


def test_per_model_defaults_to_false() -> None:
    admitted = admission("inferencegateways").admit(with_limits({"requestsPerMinute": 60})).object
    assert admitted["spec"]["limits"][0]["perModel"] is False


def test_limits_without_auth_are_refused_naming_both_fields() -> None:
    gw = mutated(with_limits({"requestsPerMinute": 60}), lambda g: g["spec"].pop("auth"))
    assert errors("inferencegateways", gw) == [
        rule_error(
            "spec",
            "spec.limits requires spec.auth: without callers who authenticate nothing tells one "
            "caller from another (set spec.auth or remove spec.limits)",
        )
    ]


def test_an_entry_with_no_rate_is_refused() -> None:
    assert errors("inferencegateways", with_limits({"callers": SEARCH})) == [
        rule_error(
            "spec.limits[0]",
            "each spec.limits entry needs requestsPerMinute or tokensPerMinute: an entry with no "
            "rate limits nothing",
        )
    ]


def test_an_empty_token_rate_is_refused() -> None:
    [error] = errors("inferencegateways", with_limits({"tokensPerMinute": {}}))
    assert error.startswith("spec.limits[0].tokensPerMinute:")
    assert "should have at least 1 properties" in error


@pytest.mark.parametrize(
    ("limit", "path"),
    [
        ({"requestsPerMinute": 1000001}, "spec.limits[0].requestsPerMinute"),
        ({"requestsPerMinute": 0}, "spec.limits[0].requestsPerMinute"),
        ({"tokensPerMinute": {"total": 4294967296}}, "spec.limits[0].tokensPerMinute.total"),
    ],
)
def test_rates_outside_what_the_rate_limit_service_counts_are_refused(
    limit: dict[str, Any], path: str
) -> None:
    [error] = errors("inferencegateways", with_limits(limit))
    assert error.startswith(f"{path}: Invalid value")


def test_at_most_sixteen_entries_are_admitted() -> None:
    found = errors("inferencegateways", with_limits(*[{"requestsPerMinute": 1}] * 17))
    assert found[0] == "spec.limits: Too many: 17: must have at most 16 items"
