"""ModelService admission of ``spec.callers``: which callers may use the service
(docs/design/shared-front-door.md, "Step 3 as built")."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fleet.xrd import errors, mutated, rule_error

SERVICE = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelService",
    "metadata": {"name": "qwen", "namespace": "ml"},
    "spec": {
        "endpoints": [{"selector": {"matchLabels": {"modelplane.ai/deployment": "qwen"}}}],
    },
}


def with_callers(callers: Any) -> dict[str, Any]:
    return mutated(SERVICE, lambda s: s["spec"].update(callers=callers))


@pytest.mark.parametrize(
    "callers",
    [
        {"names": ["search-prod", "ads.batch_1"]},
        {"selector": {"matchLabels": {"team": "search"}}},
        {"names": ["search-prod"], "selector": {"matchLabels": {"example.com/team": "ads"}}},
    ],
)
def test_callers_by_name_or_by_label_are_admitted(callers: Any) -> None:
    assert errors("modelservices", with_callers(callers)) == []


def test_callers_naming_nobody_is_refused() -> None:
    assert errors("modelservices", with_callers({})) == [
        rule_error(
            "spec.callers",
            "callers takes names or selector (or both); omit callers to let every authenticated"
            " caller use the service",
        )
    ]


@pytest.mark.parametrize("name", ["search prod", "search/prod", "équipe"])
def test_a_caller_name_is_a_caller_secret_key(name: str) -> None:
    assert errors("modelservices", with_callers({"names": [name]})) == [
        rule_error(
            "spec.callers.names[0]",
            "callers.names entries must be caller identities, the keys of a caller Secret:"
            " alphanumerics, -, _ and .",
            "string",
        )
    ]


def test_a_caller_name_is_listed_once() -> None:
    found = errors("modelservices", with_callers({"names": ["a", "a"]}))
    assert found == ['spec.callers.names[1]: Duplicate value: "a"']


def test_a_caller_selector_names_at_least_one_label() -> None:
    found = errors("modelservices", with_callers({"selector": {"matchLabels": {}}}))
    assert found == [
        "spec.callers.selector.matchLabels: Invalid value: 0: "
        "spec.callers.selector.matchLabels in body should have at least 1 properties"
    ]


def test_a_caller_selector_value_is_a_label_value() -> None:
    found = errors("modelservices", with_callers({"selector": {"matchLabels": {"team": "a b"}}}))
    assert found == [
        rule_error(
            "spec.callers.selector.matchLabels",
            "callers.selector.matchLabels values must be label values: at most 63 alphanumerics,"
            " -, _ or ., beginning and ending with an alphanumeric",
        )
    ]
