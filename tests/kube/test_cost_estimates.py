"""The estimated cost of one rule, figure for figure as the Kubernetes API server estimates it.

The expected figures are the upstream projects' own:

- ``K8S``: kubernetes/kubernetes, ``staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/
  schema/cel/compilation_test.go``, ``TestCostEstimation`` (identical in release-1.34, 1.35, 1.36
  and master): each case's ``expectedCalcCost`` (no bounds in the schema: sized from the 3 MiB
  request) and ``expectedSetCost`` (bounded by ``setMaxElements``), under the upstream case
  name. Cases whose expectation is 0 are not checked upstream and are left out here.
- ``CEL_GO``: google/cel-go v0.26.0 (the version Kubernetes 1.34-1.36 vendor),
  ``checker/cost_test.go``, ``TestCost``: the ``wanted.Max`` of cases whose sizes come from
  ``hints``; the variable ``input`` is declared with those hints as bounds.
"""

from __future__ import annotations

from typing import Any

import pytest

from modelplane.kube.cel.budget import CostError, estimate_rule
from modelplane.kube.cel.check import check, decl_type
from modelplane.kube.cel.decl import Decl
from modelplane.kube.cel.estimate import estimate_detail
from modelplane.kube.cel.syntax import parse


def array(items: dict[str, Any], max_items: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array", "items": items}
    if max_items is not None:
        schema["maxItems"] = max_items
    return schema


def map_of(values: dict[str, Any], max_properties: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "additionalProperties": values}
    if max_properties is not None:
        schema["maxProperties"] = max_properties
    return schema


def string(max_length: int | None = None, **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", **extra}
    if max_length is not None:
        schema["maxLength"] = max_length
    return schema


NUMBER = {"type": "number"}
BOOLEAN = {"type": "boolean"}
INT_OR_STRING = {"x-kubernetes-int-or-string": True}
REQUIRED_OBJECT = {
    "type": "object",
    "required": ["required"],
    "properties": {"required": {"type": "string"}, "optional": {"type": "string"}},
}
NUMBER_MAP = map_of(NUMBER)


def strings_object(**props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props}


# (upstream case name, schema of the rule's node, rule, expected cost)
K8S: list[tuple[str, dict[str, Any], str, int]] = [
    ("number array with all", array(NUMBER), "self.all(x, true)", 4718591),
    ("number array with all, maxItems 10", array(NUMBER, 10), "self.all(x, true)", 32),
    ("string array with all", array(string()), "self.all(x, true)", 3145727),
    ("string array with all, maxItems 20", array(string(), 20), "self.all(x, true)", 62),
    ("boolean array with all", array(BOOLEAN), "self.all(x, true)", 1887437),
    ("boolean array with all, maxItems 5", array(BOOLEAN, 5), "self.all(x, true)", 17),
    ("array of number arrays with all", array(array(NUMBER)), "self.all(x, true)", 3145727),
    (
        "array of number arrays with all, maxItems 100",
        array(array(NUMBER), 100),
        "self.all(x, true)",
        302,
    ),
    ("array of objects with all", array(REQUIRED_OBJECT), "self.all(x, true)", 555128),
    (
        "array of objects with all, maxItems 50",
        array(REQUIRED_OBJECT, 50),
        "self.all(x, true)",
        152,
    ),
    ("map of numbers with all", NUMBER_MAP, "self.all(x, true)", 1348169),
    ("map of numbers with all, maxProperties 10", map_of(NUMBER, 10), "self.all(x, true)", 32),
    ("map of strings with all", map_of(string()), "self.all(x, true)", 1179647),
    ("map of strings with all, maxProperties 3", map_of(string(), 3), "self.all(x, true)", 11),
    ("map of booleans with all", map_of(BOOLEAN), "self.all(x, true)", 943718),
    (
        "map of booleans with all, maxProperties 100",
        map_of(BOOLEAN, 100),
        "self.all(x, true)",
        302,
    ),
    ("string with contains", string(), "self.contains('test')", 314574),
    ("string with contains, maxLength 10", string(10), "self.contains('test')", 5),
    ("string with startsWith", string(), "self.startsWith('test')", 2),
    ("string with endsWith", string(), "self.endsWith('test')", 2),
    ("concat string", string(), 'size(self + "hello") > size("hello")', 314578),
    ("concat string, maxLength 4", string(4), 'size(self + "hello") > size("hello")', 7),
    ("index of array with numbers", array(NUMBER), "self[1] == 0.0", 2),
    ("index of array with strings", array(string()), "self[1] == self[1]", 314577),
    (
        "index of array with strings, maxItems 8",
        array(string(), 8),
        "self[1] == self[1]",
        314577,
    ),
    (
        "O(n^2) loop with numbers, maxItems 10",
        array(NUMBER, 10),
        "self.all(x, self.all(y, true))",
        352,
    ),
    (
        "O(n^3) loop with numbers, maxItems 10",
        array(NUMBER, 10),
        "self.all(x, self.all(y, self.all(z, true)))",
        3552,
    ),
    ("regex matches simple", string(), 'self.matches("x")', 314574),
    ("regex matches simple, maxLength 50", string(50), 'self.matches("x")', 22),
    ("regex matches empty string", string(), '"".matches("(((((((((())))))))))[0-9]")', 7),
    ("regex matches empty regex", string(), 'self.matches("")', 1),
    (
        "map of strings with value length",
        map_of(string()),
        "self.all(x, x.contains(self[x]))",
        2752507,
    ),
    (
        "map of strings with value length, maxProperties and maxLength 10",
        map_of(string(10), 10),
        "self.all(x, x.contains(self[x]))",
        72,
    ),
    ("set array maxLength to zero", array(NUMBER, 0), "self[3] == 0.0", 2),
    ("set map maxLength to zero", map_of(NUMBER, 0), 'self["x"] == 0.0', 2),
    ("set string maxLength to zero (unset)", string(), 'self == "x"', 2),
    ("set string maxLength to zero", string(0), 'self == "x"', 1),
    (
        "set maxLength greater than estimated maxLength",
        array(NUMBER),
        "self.all(x, x == 0.0)",
        6291454,
    ),
    (
        "set maxLength greater than estimated maxLength, maxItems 3*1024*2048",
        array(NUMBER, 3 * 1024 * 2048),
        "self.all(x, x == 0.0)",
        25165826,
    ),
    ("int-or-string array with all", array(INT_OR_STRING), "self.all(x, true)", 4718591),
    ("index of array with int-or-strings", array(INT_OR_STRING), "self[0] == 5", 3),
    ("index of array with booleans", array(BOOLEAN), "self[0] == false", 2),
    ("index of array of objects", array(REQUIRED_OBJECT), "self[0] == null", 2),
    ("index of array of array of numbers", array(array(NUMBER)), "self[0][0] == -1.0", 3),
    ("array of number maps with all", array(NUMBER_MAP), "self.all(x, x.y == 25.2)", 6291452),
    (
        "array of number maps with all, maxItems 12",
        array(NUMBER_MAP, 12),
        "self.all(x, x.y == 25.2)",
        74,
    ),
    ("index of array of number maps", array(NUMBER_MAP), "self[0].x > 2.0", 4),
    ("duration array with all", array(string(format="duration")), "self.all(x, true)", 2359295),
    (
        "index of duration array",
        array(string(format="duration")),
        "self[0].getHours() == 2",
        4,
    ),
    ("date array with all", array(string(format="date")), "self.all(x, true)", 725936),
    ("date-time array with all", array(string(format="date-time")), "self.all(x, true)", 428963),
    ("map of int-or-strings with all", map_of(INT_OR_STRING), "self.all(x, true)", 1348169),
    ("map of objects with all", map_of(REQUIRED_OBJECT), "self.all(x, true)", 428963),
    ("map of number maps with all", map_of(NUMBER_MAP), "self.all(x, true)", 1179647),
    ("map of number arrays with all", map_of(array(NUMBER)), "self.all(x, true)", 1179647),
    ("map of durations with all", map_of(string(format="duration")), "self.all(x, true)", 1048577),
    ("map of dates with all", map_of(string(format="date")), "self.all(x, true)", 524288),
    (
        "map of date-times with all",
        map_of(string(format="date-time")),
        "self.all(x, true)",
        349526,
    ),
    ("extended library regex find", string(), "self.find('[0-9]+') == ''", 629147),
    ("extended library regex find, maxLength 10", string(10), "self.find('[0-9]+') == ''", 11),
    ("extended library join", array(string()), "self.join(' ') == 'aa bb'", 329853068905),
    (
        "extended library join, maxItems and maxLength 10",
        array(string(10), 10),
        "self.join(' ') == 'aa bb'",
        43,
    ),
    ("extended library isSorted", array(string()), "self.isSorted() == true", 329854432052),
    (
        "extended library isSorted, maxItems and maxLength 10",
        array(string(10), 10),
        "self.isSorted() == true",
        52,
    ),
    (
        "extended library replace",
        strings_object(str=string(), before=string(2), after=string(4)),
        "self.str.replace(self.before, self.after) == 'does not matter'",
        629154,
    ),
    (
        "extended library replace, maxLength 4",
        strings_object(str=string(4), before=string(2), after=string(4)),
        "self.str.replace(self.before, self.after) == 'does not matter'",
        12,
    ),
    (
        "extended library split",
        strings_object(str=string(), separator=string()),
        "self.str.split(self.separator) == []",
        629160,
    ),
    (
        "extended library split, maxLength 10",
        strings_object(str=string(10), separator=string(10)),
        "self.str.split(self.separator) == []",
        22,
    ),
    ("extended library lowerAscii", string(), "self.lowerAscii() == 'lower!'", 314575),
    (
        "extended library lowerAscii, maxLength 10",
        string(10),
        "self.lowerAscii() == 'lower!'",
        6,
    ),
    ("check cost of size call", map_of({"type": "integer"}), "oldSelf.size() == self.size()", 5),
    (
        "check cost of timestamp comparison",
        map_of(string(format="date-time")),
        'self["a"] == self["b"]',
        8,
    ),
    (
        "check cost of duration comparison",
        map_of(string(format="duration")),
        'self["c"] == self["d"]',
        8,
    ),
    (
        "enums with maxLength equals to the longest possible value",
        string(enum=["A", "B", "C", "LongValue"]),
        "self.contains('A')",
        2,
    ),
    (
        "enums with maxLength equals to the longest possible value, maxLength 1000",
        string(1000, enum=["A", "B", "C", "LongValue"]),
        "self.contains('A')",
        401,
    ),
    ("IntOrString type with quantity rule", INT_OR_STRING, "isQuantity(self)", 314574),
    (
        "IntOrString type with quantity rule, maxLength 20",
        {**INT_OR_STRING, "maxLength": 20},
        "isQuantity(self)",
        9,
    ),
]


@pytest.mark.parametrize(
    ("schema", "rule", "expected"),
    [pytest.param(s, r, e, id=name) for name, s, r, e in K8S],
)
def test_rule_costs_what_the_api_server_estimates(
    schema: dict[str, Any], rule: str, expected: int
) -> None:
    assert estimate_rule(rule, schema) == expected


NUM = Decl("double", 1)
NO_KEY = Decl("string", 2, 0)


def key(size: int) -> Decl:
    return Decl("string", 2, size)


TEST_ALL_TYPES = Decl("object", 2, fields={"single_int32": Decl("int", 1)})

# (upstream case name, the declaration of `input` built from the case's hints, expression, Max)
CEL_GO: list[tuple[str, Decl, str, int]] = [
    ("all comprehension", Decl("list", 2, 100, elem=NUM), "input.all(x, true)", 302),
    (
        "nested all comprehension",
        Decl("list", 2, 50, elem=Decl("list", 2, 10, elem=NUM)),
        "input.all(x, x.all(y, true))",
        1752,
    ),
    ("variable cost function", Decl("string", 2, 500), "input.matches('[0-9]')", 103),
    (
        "comprehension over map",
        Decl("map", 2, 10, elem=TEST_ALL_TYPES, key=NO_KEY),
        "input.all(k, input[k].single_int32 > 3)",
        82,
    ),
    (
        "comprehension over nested map of maps",
        Decl("map", 2, 5, elem=Decl("map", 2, 10, elem=NUM, key=NO_KEY), key=NO_KEY),
        "input.all(k, input[k].all(x, true))",
        187,
    ),
    (
        "string size of map keys",
        Decl("map", 2, 5, elem=NUM, key=key(10)),
        "input.all(k, k.contains(k))",
        32,
    ),
    (
        "comprehension variable shadowing",
        Decl("map", 2, 2, elem=Decl("map", 2, 2, elem=NUM, key=NO_KEY), key=key(5)),
        "input.all(k, input[k].all(k, true) && k.contains(k))",
        34,
    ),
]


@pytest.mark.parametrize(
    ("root", "expression", "expected"),
    [pytest.param(d, x, e, id=name) for name, d, x, e in CEL_GO],
)
def test_expression_costs_what_cel_go_estimates(root: Decl, expression: str, expected: int) -> None:
    tree = parse(expression)
    assert estimate_detail(tree, check(tree, {"input": decl_type(root)}), root)[0] == expected


def test_a_select_on_an_outer_variable_resizes_an_inner_range_as_cel_go_does() -> None:
    # cel-go keeps field paths in Go slices: `e.b` is appended into the backing array that
    # `e.a` (the inner range) shares, so the inner loop is sized by b's maxItems (5), not a's (3)
    # once its body has read `e.b`. Outer: 2 + 1 + 2 * (2 + 1 + inner); inner: 2 + 1 + 5 * 7.
    item = {
        "type": "object",
        "properties": {"a": array({"type": "integer"}, 3), "b": array({"type": "integer"}, 5)},
    }
    schema = {"type": "object", "properties": {"list": array(item, 2)}}
    rule = "self.list.all(e, e.a.all(x, e.b.size() > 0))"
    assert estimate_rule(rule, schema) == 2 + 1 + 2 * (2 + 1 + (2 + 1 + 5 * 7))


def test_map_keys_are_read_as_unsized_strings_as_the_api_server_declares_them() -> None:
    # A map of unbounded strings holds (3 MiB - 2) // (2 + 6) = 393215 entries. Its keys are
    # declared with no size, so matching one against an 8-character regex costs
    # ceil((0 + 1) * 0.1) * ceil(8 * 0.25) = 2, not a 3 MiB string's traversal. Per key: the loop
    # condition 2, `&&` 1, `k` 1, the match 2; plus reading self and the result once.
    cost = estimate_rule("self.all(k, k.matches('^[a-z]+$'))", map_of(string()))
    assert cost == 2 + 393215 * (2 + 1 + 1 + 2)


def test_a_function_the_estimator_does_not_know_is_refused_not_guessed() -> None:
    with pytest.raises(CostError, match=r"function .sets\.contains."):
        estimate_rule("sets.contains(self, ['a'])", array(string(), 4))
