"""The CEL cost budget a definition meets when the API server creates it: per rule, per schema.

Schemas and expected errors are those of kubernetes/kubernetes
``staging/src/k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation/validation_test.go``
(``TestValidateCustomResourceDefinitionValidation``), under the upstream case names; the
messages are ``getCostErrorMessage``'s in ``validation.go``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from modelplane.kube.cel.budget import (
    STATIC_ESTIMATED_COST_LIMIT,
    STATIC_ESTIMATED_CRD_COST_LIMIT,
    CostError,
    cost_message,
    estimate_definition,
    estimate_schema,
)
from modelplane.kube.crd import load_definitions

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "apis").glob("*/definition.yaml"))
UPSTREAM = sorted((ROOT / "tests" / "upstream" / "crds").glob("*.yaml"))
WHERE = "spec.validation.openAPIV3Schema"
RULE_COST = "estimated rule cost"
TOTAL_COST = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema"
CONTRIBUTED = (
    "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire "
    "OpenAPIv3 schema"
)
MAX = 2**64 - 1  # what an estimate saturates at


def root(**props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def nested_rule(value: dict[str, Any], items: dict[str, Any]) -> dict[str, Any]:
    """'value': a list of maps of objects, with the double-nested rule of the upstream cases."""
    return root(
        value={
            "type": "array",
            **value,
            "items": {
                "type": "object",
                **items,
                "additionalProperties": {
                    "type": "object",
                    "required": ["key"],
                    "properties": {"key": {"type": "string"}},
                },
            },
            "x-kubernetes-validations": [{"rule": "self.all(x, x.all(y, x[y].key == x[y].key))"}],
        }
    )


def paths(errors: list[str]) -> list[str]:
    return [e.split(": Forbidden: ")[0] for e in errors]


def test_a_rule_on_a_field_of_the_root_object_runs_once() -> None:
    # "check for cardinality of 1 under root object"
    schema = root(value={"type": "integer", "x-kubernetes-validations": [{"rule": "self < 1024"}]})
    result = estimate_schema(schema, WHERE)
    [rule] = result.expressions
    assert (rule.cardinality, result.errors) == (1, [])


def test_a_double_nested_rule_with_no_bound_is_refused_per_rule_and_in_total() -> None:
    # "forbid double-nested rule with no limit set"
    result = estimate_schema(nested_rule({}, {}), WHERE)
    rule = f"{WHERE}.properties[value].x-kubernetes-validations[0].rule"
    assert result.errors == [
        f"{rule}: Forbidden: {cost_message(RULE_COST, MAX, STATIC_ESTIMATED_COST_LIMIT)}",
        f"{rule}: {CONTRIBUTED}",
        f"{WHERE}: Forbidden: {cost_message(TOTAL_COST, MAX, STATIC_ESTIMATED_CRD_COST_LIMIT)}",
    ]


def test_an_over_budget_message_says_more_than_100x_past_two_orders_of_magnitude() -> None:
    assert cost_message(RULE_COST, MAX, STATIC_ESTIMATED_COST_LIMIT) == (
        "estimated rule cost exceeds budget by factor of more than 100x (try simplifying the "
        "rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings "
        "are declared)"
    )


@pytest.mark.parametrize(
    ("cost", "shown"),
    [(12_000_000, "1.200000x"), (25_000_000, "2.5x"), (1_000_000_000, "100.0x")],
)
def test_an_over_budget_message_shows_the_factor_as_the_api_server_formats_it(
    cost: int, shown: str
) -> None:
    message = cost_message(RULE_COST, cost, STATIC_ESTIMATED_COST_LIMIT)
    assert message.startswith(f"estimated rule cost exceeds budget by factor of {shown} (")


def test_a_double_nested_rule_with_only_a_string_bound_is_still_refused() -> None:
    # "forbid double-nested rule with one limit set"
    schema = nested_rule({}, {})
    schema["properties"]["value"]["items"]["additionalProperties"]["properties"]["key"][
        "maxLength"
    ] = 10
    rule = f"{WHERE}.properties[value].x-kubernetes-validations[0].rule"
    assert paths(estimate_schema(schema, WHERE).errors) == [rule, rule, WHERE]


def test_a_double_nested_rule_with_every_bound_set_is_accepted() -> None:
    # "allow double-nested rule with three limits set"
    schema = nested_rule({"maxItems": 10}, {"maxProperties": 10})
    schema["properties"]["value"]["items"]["additionalProperties"]["properties"]["key"][
        "maxLength"
    ] = 10
    assert estimate_schema(schema, WHERE).errors == []


def test_a_double_nested_rule_bounded_on_the_outer_list_over_numbers_is_accepted() -> None:
    # "allow double-nested rule with one limit set on outermost array"
    schema = nested_rule({"maxItems": 4}, {})
    schema["properties"]["value"]["items"]["additionalProperties"]["properties"]["key"] = {
        "type": "number"
    }
    assert estimate_schema(schema, WHERE).errors == []


def keyword_rule() -> list[dict[str, str]]:
    return [{"rule": "self.contains('keyword')"}]


def test_rules_that_add_up_past_the_schema_limit_are_named_costliest_first() -> None:
    # "forbid validation rules where cost total exceeds total limit"
    text = {"type": "string", "maxLength": 5000, "x-kubernetes-validations": keyword_rule()}
    schema = root(
        list={"type": "array", "maxItems": 100000, "items": text},
        map={"type": "object", "maxProperties": 1000, "additionalProperties": text},
        field={
            "type": "integer",
            "x-kubernetes-validations": [{"rule": "self > 50 && self < 100"}],
        },
    )
    result = estimate_schema(schema, WHERE)
    listed = f"{WHERE}.properties[list].items.x-kubernetes-validations[0].rule"
    mapped = f"{WHERE}.properties[map].additionalProperties.x-kubernetes-validations[0].rule"
    assert paths(result.errors) == [listed, listed, mapped, WHERE]
    assert result.errors[1] == f"{listed}: {CONTRIBUTED}"


def unbounded_strings(message_expression: str) -> dict[str, Any]:
    return root(
        f={
            "type": "array",
            "items": {"type": "string"},
            "x-kubernetes-validations": [{"rule": "true", "messageExpression": message_expression}],
        }
    )


def test_a_message_expression_over_the_per_expression_limit_is_refused() -> None:
    # "x-kubernetes-validations rule invalidated by messageExpression exceeding per-expression
    # estimated cost limit"
    concatenated = " + ".join(f"self[{i}]" for i in range(8))
    result = estimate_schema(unbounded_strings(concatenated), WHERE)
    message = f"{WHERE}.properties[f].x-kubernetes-validations[0].messageExpression"
    assert paths(result.errors) == [message]
    assert "estimated messageExpression cost exceeds budget" in result.errors[0]


def test_a_message_expression_over_the_schema_limit_is_refused_in_total_too() -> None:
    # "x-kubernetes-validations rule invalidated by messageExpression exceeding per-CRD
    # estimated cost limit"
    expression = "string(self[0]) + string(self[1]) + string(self[2])"
    result = estimate_schema(unbounded_strings(expression), WHERE)
    message = f"{WHERE}.properties[f].x-kubernetes-validations[0].messageExpression"
    assert sorted(paths(result.errors)) == sorted([WHERE, message, message])


def test_a_rule_under_an_unbounded_list_runs_as_often_as_its_items_fit_in_a_request() -> None:
    # A string item serializes to at least "" and a comma: 3 MiB / 3 of them.
    schema = root(
        names={
            "type": "array",
            "items": {"type": "string", "maxLength": 8, "x-kubernetes-validations": keyword_rule()},
        }
    )
    [rule] = estimate_schema(schema, WHERE).expressions
    assert rule.cardinality == 3 * 1024 * 1024 // 3


def test_bounds_above_a_rule_multiply_into_its_cardinality() -> None:
    leaf = {"type": "string", "maxLength": 8, "x-kubernetes-validations": keyword_rule()}
    schema = root(
        outer={
            "type": "array",
            "maxItems": 4,
            "items": {"type": "array", "maxItems": 5, "items": leaf},
        }
    )
    [rule] = estimate_schema(schema, WHERE).expressions
    assert (rule.cardinality, rule.total) == (20, 20 * rule.cost)


def test_what_was_sized_from_the_request_limit_is_named_for_the_author() -> None:
    schema = root(
        names={
            "type": "array",
            "items": {"type": "string", "x-kubernetes-validations": keyword_rule()},
        }
    )
    [rule] = estimate_schema(schema, WHERE).expressions
    assert rule.unbounded == ("self", f"{WHERE}.properties[names]")


def test_a_rule_the_estimator_cannot_cost_is_an_error_naming_the_rule() -> None:
    schema = root(
        tags={
            "type": "array",
            "items": {"type": "string"},
            "x-kubernetes-validations": [{"rule": "sets.contains(self, ['a'])"}],
        }
    )
    with pytest.raises(CostError, match=r"properties\[tags\]\.x-kubernetes-validations\[0\]\.rule"):
        estimate_schema(schema, WHERE)


@pytest.mark.parametrize("path", SHIPPED, ids=[p.parent.name for p in SHIPPED])
def test_every_shipped_definition_is_within_the_budget(path: Path) -> None:
    [definition] = load_definitions([path])
    cost = estimate_definition(definition)
    assert cost.errors == []
    for schema in cost.schemas:
        assert schema.total <= STATIC_ESTIMATED_CRD_COST_LIMIT


@pytest.mark.parametrize("path", UPSTREAM, ids=[p.name for p in UPSTREAM])
def test_every_upstream_crd_is_within_the_budget_as_real_api_servers_found(path: Path) -> None:
    # Each was created by real API servers, so an estimator that refuses one is wrong.
    for definition in load_definitions([path]):
        assert estimate_definition(definition).errors == []
