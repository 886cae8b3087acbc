"""Struct views read like the dicts ``struct_to_dict`` makes, converting only what is read."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane.structs import dict_to_struct, struct_to_dict
from modelplane.structview import StructView, to_plain

OBJ: dict[str, Any] = {
    "metadata": {"name": "r", "labels": {"modelplane.ai/replica-index": "2"}},
    "spec": {
        "clusterName": "east",
        "engines": [{"name": "main", "copies": 2, "members": [{"deviceRequests": [{"count": 4}]}]}],
        "ratio": 0.5,
        "on": True,
        "none": None,
    },
}


def test_a_view_reads_the_same_values_as_the_converted_dict() -> None:
    view = StructView(dict_to_struct(OBJ))
    assert view["spec"]["engines"][0]["members"][0]["deviceRequests"][0]["count"] == 4
    assert isinstance(view["spec"]["engines"][0]["copies"], int)
    assert view["spec"]["ratio"] == 0.5
    assert view["spec"]["on"] is True
    assert view["spec"]["none"] is None
    assert to_plain(view) == struct_to_dict(dict_to_struct(OBJ))


def test_missing_keys_raise_and_are_not_inserted() -> None:
    struct = dict_to_struct(OBJ)
    view = StructView(struct)
    assert view.get("status") is None
    assert "status" not in view
    with pytest.raises(KeyError):
        view["status"]
    assert "status" not in struct.fields


def test_a_view_is_a_mapping() -> None:
    view = StructView(dict_to_struct(OBJ))
    assert sorted(view) == ["metadata", "spec"]
    assert len(view["metadata"]["labels"]) == 1
    assert dict(view["metadata"]["labels"]) == {"modelplane.ai/replica-index": "2"}
