"""Typed reads of Kubernetes objects: a missing, null or misshapen field on the way reads as
absent, and each accessor answers with the empty value of what it was asked for."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import pytest

from modelplane.kube import objects

MANIFEST = {"kind": "ConfigMap"}
OBJ = {
    "metadata": {
        "name": "web",
        "namespace": "team-a",
        "labels": {"app": "web"},
        "annotations": {"note": "x"},
    },
    "spec": {"replicas": 3, "forProvider": {"manifest": MANIFEST}, "paused": None},
    "status": {"atProvider": {"manifest": MANIFEST}, "conditions": [{"type": "Ready"}]},
}


@pytest.mark.parametrize(
    ("obj", "path", "want"),
    [
        pytest.param(OBJ, ("status", "atProvider", "manifest"), MANIFEST, id="a path that exists"),
        pytest.param(OBJ, ("spec", "replicas"), 3, id="a scalar at the end"),
        pytest.param(OBJ, (), OBJ, id="no path is the object itself"),
        pytest.param(OBJ, ("status", "missing", "manifest"), "d", id="a key missing on the way"),
        pytest.param(OBJ, ("spec", "missing"), "d", id="a key missing at the end"),
        pytest.param({"status": None}, ("status", "atProvider"), "d", id="a null on the way"),
        pytest.param({"status": {}}, ("status", "atProvider"), "d", id="an empty map on the way"),
        pytest.param({"status": []}, ("status", "atProvider"), "d", id="a list on the way"),
        pytest.param({"status": "x"}, ("status", "atProvider"), "d", id="a string on the way"),
        pytest.param(None, ("status",), "d", id="no object at all"),
        pytest.param(OBJ, ("spec", "paused"), None, id="a null at the end is the value"),
        pytest.param(
            {"s": MappingProxyType({"k": 1})}, ("s", "k"), 1, id="any mapping, not only a dict"
        ),
    ],
)
def test_dig_reads_a_broken_path_as_the_default(
    obj: Mapping[str, Any] | None, path: tuple[str, ...], want: object
) -> None:
    assert objects.dig(obj, *path, default="d") == want


def test_dig_defaults_to_none() -> None:
    assert objects.dig(OBJ, "spec", "missing") is None


@pytest.mark.parametrize(
    ("obj", "path", "want"),
    [
        pytest.param(OBJ, ("spec", "forProvider"), {"manifest": MANIFEST}, id="a mapping"),
        pytest.param(OBJ, ("spec", "missing"), {}, id="a missing key"),
        pytest.param({"spec": None}, ("spec",), {}, id="a null"),
        pytest.param(OBJ, ("spec", "replicas"), {}, id="a scalar where a mapping was asked"),
        pytest.param({"spec": [1]}, ("spec",), {}, id="a list where a mapping was asked"),
        pytest.param(None, ("spec",), {}, id="no object"),
    ],
)
def test_mapping_is_empty_unless_the_path_ends_at_a_mapping(
    obj: Mapping[str, Any] | None, path: tuple[str, ...], want: Mapping[str, Any]
) -> None:
    assert objects.mapping(obj, *path) == want


ACCESSORS = [  # each accessor, what it reads from OBJ, and what it reads when its field is absent
    pytest.param(objects.name, "web", "", id="name"),
    pytest.param(objects.namespace, "team-a", "", id="namespace"),
    pytest.param(objects.labels, {"app": "web"}, {}, id="labels"),
    pytest.param(objects.annotations, {"note": "x"}, {}, id="annotations"),
    pytest.param(objects.spec, OBJ["spec"], {}, id="spec"),
    pytest.param(objects.status, OBJ["status"], {}, id="status"),
]
ABSENT = [
    pytest.param({}, id="an empty object"),
    pytest.param(None, id="no object"),
    pytest.param({"metadata": None, "spec": None, "status": None}, id="null sections"),
    pytest.param({"metadata": {"name": None, "namespace": None, "labels": None}}, id="null fields"),
    pytest.param({"metadata": [], "spec": "x", "status": 1}, id="misshapen sections"),
]


@pytest.mark.parametrize(("read", "present", "_empty"), ACCESSORS)
def test_an_accessor_reads_its_field(
    read: Callable[[Any], object], present: object, _empty: object
) -> None:
    assert read(OBJ) == present


@pytest.mark.parametrize("obj", ABSENT)
@pytest.mark.parametrize(("read", "_present", "empty"), ACCESSORS)
def test_an_accessor_reads_an_absent_field_as_empty(
    read: Callable[[Any], object], _present: object, empty: object, obj: Mapping[str, Any] | None
) -> None:
    assert read(obj) == empty


@pytest.mark.parametrize("obj", [{}, None, {"metadata": None}, {"metadata": "x"}])
def test_metadata_is_empty_when_absent_or_misshapen(obj: Mapping[str, Any] | None) -> None:
    assert objects.metadata(obj) == {}


def test_metadata_reads_the_section() -> None:
    assert objects.metadata(OBJ) == OBJ["metadata"]


def test_name_reads_a_non_string_name_as_text() -> None:
    assert objects.name({"metadata": {"name": 7}}) == "7"


def test_namespace_does_not_assume_the_default_one() -> None:
    assert objects.namespace({"metadata": {"name": "web"}}) == ""


@pytest.mark.parametrize(
    ("obj", "want"),
    [
        pytest.param(OBJ, {"type": "Ready"}, id="reported"),
        pytest.param({"status": {"conditions": [{"type": "Synced"}]}}, None, id="another type"),
        pytest.param({"status": {"conditions": ["Ready", None]}}, None, id="misshapen entries"),
        pytest.param({"status": {"conditions": None}}, None, id="null conditions"),
        pytest.param({"status": None}, None, id="null status"),
        pytest.param(None, None, id="no object"),
    ],
)
def test_condition_finds_the_condition_of_its_type(
    obj: Mapping[str, Any] | None, want: Mapping[str, Any] | None
) -> None:
    assert objects.condition(obj, "Ready") == want


def test_assoc_writes_the_value_into_a_copy_leaving_the_original_untouched() -> None:
    original = {"spec": {"template": {"metadata": {"labels": {"a": "1"}}}, "replicas": 2}}
    written = objects.assoc(original, ("spec", "template", "metadata", "annotations", "k"), "v")
    assert written["spec"]["template"]["metadata"] == {
        "labels": {"a": "1"},
        "annotations": {"k": "v"},
    }
    assert original == {"spec": {"template": {"metadata": {"labels": {"a": "1"}}}, "replicas": 2}}


def test_assoc_shares_what_lies_beside_the_path() -> None:
    original = {"spec": {"template": {}, "selector": {"matchLabels": {"a": "1"}}}}
    written = objects.assoc(original, ("spec", "template", "x"), 1)
    assert written["spec"]["selector"] is original["spec"]["selector"]


@pytest.mark.parametrize("on_the_way", [None, "text", ["a list"]])
def test_assoc_makes_a_mapping_where_the_path_has_none(on_the_way: Any) -> None:
    assert objects.assoc({"spec": on_the_way}, ("spec", "x"), 1) == {"spec": {"x": 1}}


def test_seconds_reads_back_a_time_as_kubernetes_writes_it() -> None:
    assert objects.seconds(objects.timestamp(1_796_612_764)) == 1_796_612_764


def test_seconds_of_no_time_or_not_a_time_is_none() -> None:
    assert objects.seconds(None) is None
    assert objects.seconds("") is None
    assert objects.seconds("yesterday") is None
