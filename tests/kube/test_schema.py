"""The structural-schema engine on small schemas: one keyword per test."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane.kube.rules import compile_rules, evaluate
from modelplane.kube.schema import Schema, SchemaError, prune_and_default, validate


def check(schema: dict[str, Any], value: Any) -> tuple[Any, list[str]]:
    compiled = Schema.of(schema)
    compile_rules(compiled)
    pruned, errors = prune_and_default(compiled, value)
    errors += validate(compiled, pruned)
    errors += evaluate(compiled, pruned)
    return pruned, [str(e) for e in errors]


def obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def test_unknown_fields_are_pruned_and_reported() -> None:
    pruned, errors = check(obj(a={"type": "string"}), {"a": "x", "b": 1})
    assert pruned == {"a": "x"}
    assert errors == ['unknown field "b"']


def test_preserve_unknown_fields_keeps_them() -> None:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {}}
    pruned, errors = check(schema, {"b": {"c": 1}})
    assert pruned == {"b": {"c": 1}}
    assert errors == []


def test_an_object_without_properties_keeps_nothing() -> None:
    pruned, errors = check(obj(s={"type": "object"}), {"s": {"x": 1}})
    assert pruned == {"s": {}}
    assert errors == ['unknown field "s.x"']


def test_defaults_apply_inside_list_items() -> None:
    schema = obj(
        items={
            "type": "array",
            "items": obj(n={"type": "integer", "default": 1}, m={"type": "string"}),
        }
    )
    pruned, _ = check(schema, {"items": [{"m": "a"}, {"n": 5}]})
    assert pruned == {"items": [{"m": "a", "n": 1}, {"n": 5}]}


def test_nested_object_defaults_are_applied_too() -> None:
    schema = obj(
        a={"type": "object", "default": {}, "properties": {"b": {"type": "string", "default": "x"}}}
    )
    pruned, _ = check(schema, {})
    assert pruned == {"a": {"b": "x"}}


def test_nullable_accepts_null() -> None:
    assert check(obj(a={"type": "string", "nullable": True}), {"a": None}) == ({"a": None}, [])


def test_null_on_a_non_nullable_field_is_dropped() -> None:
    assert check(obj(a={"type": "string"}), {"a": None}) == ({}, [])


@pytest.mark.parametrize(
    ("schema", "value", "error"),
    [
        (
            {"type": "integer", "minimum": 1, "exclusiveMinimum": True},
            1,
            "v: Invalid value: 1: v in body should be greater than 1",
        ),
        (
            {"type": "number", "maximum": 1.5},
            2,
            "v: Invalid value: 2: v in body should be less than or equal to 1.5",
        ),
        ({"type": "string", "maxLength": 1}, "ab", "v: Too long: may not be more than 1 byte"),
        (
            {"type": "array", "minItems": 2, "items": {"type": "string"}},
            ["a"],
            "v: Invalid value: 1: v in body should have at least 2 items",
        ),
        (
            {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}},
            {"a": "1", "b": "2"},
            "v: Too many: 2: must have at most 1 item",
        ),
        (
            {"type": "string", "enum": ["a", "b"]},
            "c",
            'v: Unsupported value: "c": supported values: "a", "b"',
        ),
        (
            {"type": "integer", "enum": [1, 2]},
            3,
            'v: Unsupported value: 3: supported values: "1", "2"',
        ),
        (
            {"type": "boolean"},
            "yes",
            'v: Invalid value: "string": v in body must be of type boolean: "string"',
        ),
        (
            {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            ["a", "a"],
            'v[1]: Duplicate value: "a"',
        ),
        (
            {"type": "string", "pattern": "^[a-z]+$"},
            "abc\n",
            "v: Invalid value: \"abc\\n\": v in body should match '^[a-z]+$'",
        ),
        (
            {"type": "string", "pattern": "^\\d+$"},
            "١٢",
            "v: Invalid value: \"١٢\": v in body should match '^\\d+$'",
        ),
        (
            {"type": "string", "oneOf": [{"minLength": 1}, {"maxLength": 3}]},
            "ab",
            'v: Invalid value: "ab": v in body must validate one and only one schema (oneOf)',
        ),
        (
            {"type": "string", "not": {"enum": ["x"]}},
            "x",
            'v: Invalid value: "x": v in body must not validate the schema (not)',
        ),
        (
            {"type": "string", "anyOf": [{"enum": ["a"]}, {"enum": ["b"]}]},
            "c",
            'v: Invalid value: "c": v in body must validate at least one schema (anyOf)',
        ),
    ],
)
def test_value_validations(schema: dict[str, Any], value: Any, error: str) -> None:
    _, errors = check(obj(v=schema), {"v": value})
    assert errors == [error]


def test_list_map_keys_use_their_defaults() -> None:
    item = obj(name={"type": "string"}, proto={"type": "string", "default": "TCP"})
    schema = {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name", "proto"],
        "items": item,
    }
    _, errors = check(obj(v=schema), {"v": [{"name": "a"}, {"name": "a", "proto": "TCP"}]})
    assert errors == ['v[1]: Duplicate value: map[string]interface {}{"name":"a", "proto":"TCP"}']


@pytest.mark.parametrize("value", [8080, "http"])
def test_int_or_string_takes_either(value: Any) -> None:
    schema = {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "x-kubernetes-int-or-string": True,
    }
    assert check(obj(p=schema), {"p": value}) == ({"p": value}, [])


def test_a_pattern_that_is_not_re2_is_a_schema_error() -> None:
    with pytest.raises(SchemaError, match="not RE2 syntax"):
        Schema.of(obj(a={"type": "string", "pattern": "^(?!x)"}))


def test_rules_see_escaped_property_names() -> None:
    schema = {
        "type": "object",
        "properties": {"namespace": {"type": "string"}, "a-b": {"type": "string"}},
        "x-kubernetes-validations": [
            {"rule": "self.__namespace__ == self.a__dash__b", "message": "m"}
        ],
    }
    assert check(schema, {"namespace": "x", "a-b": "x"})[1] == []
    assert check(schema, {"namespace": "x", "a-b": "y"})[1] == ['<nil>: Invalid value: "object": m']


def test_a_rule_without_message_reports_the_rule() -> None:
    schema = obj(a={"type": "integer", "x-kubernetes-validations": [{"rule": "self > 1"}]})
    assert check(schema, {"a": 0})[1] == ['a: Invalid value: "integer": failed rule: self > 1']


def test_message_expression_wins() -> None:
    rule = {"rule": "self > 1", "message": "m", "messageExpression": "'got ' + string(self)"}
    schema = obj(a={"type": "integer", "x-kubernetes-validations": [rule]})
    assert check(schema, {"a": 0})[1] == ['a: Invalid value: "integer": got 0']


def test_transition_rules_do_not_run_on_create() -> None:
    schema = obj(a={"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]})
    assert check(schema, {"a": "x"})[1] == []


def test_rules_on_map_values_print_keys_in_brackets() -> None:
    schema = obj(
        m={
            "type": "object",
            "additionalProperties": {
                "type": "string",
                "x-kubernetes-validations": [{"rule": "self != ''", "message": "empty"}],
            },
        }
    )
    assert check(schema, {"m": {"k": ""}})[1] == ['m[k]: Invalid value: "string": empty']


def test_number_fields_reach_cel_as_doubles() -> None:
    schema = obj(x={"type": "number", "x-kubernetes-validations": [{"rule": "self == 2.0"}]})
    assert check(schema, {"x": 2}) == ({"x": 2.0}, [])
