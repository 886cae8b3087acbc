"""InferenceGateway ``spec.priority`` admission: priorities per caller need callers who
authenticate, every entry has a value within the small range the fleet side names objectives
for, and callers are selected as ``spec.limits`` selects them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.compose.inferencegateway.gateways import AUTHENTICATED as GATEWAY
from tests.fleet.xrd import errors, mutated, rule_error

SEARCH = {"selector": {"matchLabels": {"team": "search"}}}


def with_priority(*entries: dict[str, Any]) -> dict[str, Any]:
    return mutated(GATEWAY, lambda g: g["spec"].update(priority=list(entries)))


def test_priorities_for_callers_by_label_by_name_and_for_everyone_else_are_admitted() -> None:
    gw = with_priority(
        {"callers": SEARCH, "value": 5},
        {"callers": {"names": ["ads.batch"]}, "value": -5},
        {"value": 0},
    )
    assert errors("inferencegateways", gw) == []


def test_priority_without_auth_is_refused_naming_both_fields() -> None:
    gw = mutated(with_priority({"value": 1}), lambda g: g["spec"].pop("auth"))
    assert errors("inferencegateways", gw) == [
        rule_error(
            "spec",
            "spec.priority requires spec.auth: without callers who authenticate nothing tells one "
            "caller from another (set spec.auth or remove spec.priority)",
        )
    ]


def test_an_entry_without_a_value_is_refused() -> None:
    found = errors("inferencegateways", with_priority({"callers": SEARCH}))
    assert found[0] == "spec.priority[0].value: Required value"


@pytest.mark.parametrize("value", [-6, 6])
def test_a_value_outside_minus_five_to_five_is_refused(value: int) -> None:
    [error] = errors("inferencegateways", with_priority({"value": value}))
    assert error.startswith("spec.priority[0].value: Invalid value")


def test_at_most_sixteen_entries_are_admitted() -> None:
    found = errors("inferencegateways", with_priority(*[{"value": 1}] * 17))
    assert found[0] == "spec.priority: Too many: 17: must have at most 16 items"
