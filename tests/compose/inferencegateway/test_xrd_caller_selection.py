"""InferenceGateway admission of a caller selection, the same in ``spec.limits`` and
``spec.priority`` entries: names that are caller identities, a selector of label values, and at
least one of the two."""

from __future__ import annotations

from typing import Any

import pytest

from tests.compose.inferencegateway.gateways import AUTHENTICATED as GATEWAY
from tests.fleet.xrd import errors, mutated, rule_error

# Each field, the rest of an entry that is admitted, and what its rule says an omitted
# `callers` selects.
FIELDS = {
    "limits": ({"requestsPerMinute": 1}, "budget every caller"),
    "priority": ({"value": 1}, "select every caller"),
}


def entry(field: str, callers: dict[str, Any]) -> dict[str, Any]:
    rest, _ = FIELDS[field]
    return mutated(GATEWAY, lambda g: g["spec"].update({field: [{"callers": callers, **rest}]}))


@pytest.mark.parametrize("field", sorted(FIELDS))
def test_callers_naming_nobody_is_refused(field: str) -> None:
    _, omitted = FIELDS[field]
    assert errors("inferencegateways", entry(field, {})) == [
        rule_error(
            f"spec.{field}[0].callers",
            f"{field}[].callers takes names or selector (or both); omit callers to {omitted}",
        )
    ]


@pytest.mark.parametrize("field", sorted(FIELDS))
def test_a_caller_name_must_be_a_secret_key(field: str) -> None:
    assert errors("inferencegateways", entry(field, {"names": ["search prod"]})) == [
        rule_error(
            f"spec.{field}[0].callers.names[0]",
            f"{field}[].callers.names entries must be caller identities, the keys of a caller "
            "Secret: alphanumerics, -, _ and .",
            "string",
        )
    ]


@pytest.mark.parametrize("field", sorted(FIELDS))
def test_a_selector_value_must_be_a_label_value(field: str) -> None:
    callers = {"selector": {"matchLabels": {"team": "a b"}}}
    assert errors("inferencegateways", entry(field, callers)) == [
        rule_error(
            f"spec.{field}[0].callers.selector.matchLabels",
            f"{field}[].callers.selector.matchLabels values must be label values: at most 63 "
            "alphanumerics, -, _ or ., beginning and ending with an alphanumeric",
        )
    ]
