"""The Struct edge: numbers, views, and writing plain data or views back."""

from __future__ import annotations

import pytest
from google.protobuf import struct_pb2
from hypothesis import given
from hypothesis import strategies as st

from modelplane.structs import (
    ListView,
    StructView,
    dict_to_struct,
    frozen,
    lazy_paths,
    plain,
    struct_to_dict,
    struct_to_dict_lazily,
)

OBJ = {
    "metadata": {"name": "r", "labels": {"a": "b"}},
    "spec": {"copies": 3, "ratio": 0.25, "on": True, "none": None, "list": [1, "x", {"k": 2}]},
}


def test_integral_numbers_come_back_as_ints_and_fractions_as_floats():
    back = struct_to_dict(dict_to_struct(OBJ))
    assert back == OBJ
    assert type(back["spec"]["copies"]) is int
    assert type(back["spec"]["ratio"]) is float


def test_a_view_reads_like_the_dict_it_stands_for():
    view = StructView(dict_to_struct(OBJ))
    assert view["metadata"]["labels"]["a"] == "b"
    assert view["spec"]["copies"] == 3
    assert view["spec"]["list"][2]["k"] == 2
    assert isinstance(view["spec"]["list"], ListView)
    assert view["spec"]["list"] == [1, "x", {"k": 2}]
    assert view == OBJ
    assert sorted(view) == ["metadata", "spec"]


def test_looking_up_a_missing_key_in_a_view_does_not_add_it():
    s = dict_to_struct(OBJ)
    view = StructView(s)
    assert view.get("status") is None
    assert "status" not in view
    with pytest.raises(KeyError):
        view["status"]
    assert "status" not in s.fields


def test_a_view_reads_back_as_a_plain_dict():
    out = plain({"wrapped": StructView(dict_to_struct(OBJ))})
    assert out == {"wrapped": OBJ}
    assert type(out["wrapped"]) is dict
    assert type(out["wrapped"]["spec"]["list"]) is list


def test_views_embedded_in_plain_data_are_written_back_unchanged():
    view = StructView(dict_to_struct(OBJ))
    s = dict_to_struct({"carried": view, "items": [view["spec"]["list"]], "empty": {}})
    assert struct_to_dict(s) == {"carried": OBJ, "items": [OBJ["spec"]["list"]], "empty": {}}


def test_an_unencodable_value_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match="cannot encode a set"):
        dict_to_struct({"bad": {1, 2}})


def test_an_empty_struct_converts_to_an_empty_dict():
    assert struct_to_dict(struct_pb2.Struct()) == {}


def test_a_frozen_subtree_writes_the_struct_its_plain_data_would():
    plain = {"apiVersion": "v1", "data": {"list": [1, {"k": "v"}], "on": True, "none": None}}
    mixed = {"top": frozen(plain), "items": [frozen(plain["data"]["list"]), "x"]}
    assert dict_to_struct(mixed) == dict_to_struct({"top": plain, "items": [[1, {"k": "v"}], "x"]})
    assert dict_to_struct(frozen(plain)) == dict_to_struct(plain)
    empties = {"d": frozen({}), "l": frozen([]), "in": [frozen({}), frozen([])]}
    assert dict_to_struct(empties) == dict_to_struct({"d": {}, "l": [], "in": [{}, []]})


def test_a_frozen_subtree_reads_as_plain_data_and_copies_to_plain_data():
    import copy
    import pickle

    f = frozen(OBJ)
    assert f == OBJ and isinstance(f, dict) and isinstance(f["spec"]["list"], list)
    for thawed in (copy.deepcopy(f), pickle.loads(pickle.dumps(f)), copy.copy(f)):
        assert thawed == OBJ and type(thawed) is dict
        thawed["metadata"] = {}  # a copy is the caller's to change


@pytest.mark.parametrize(
    "change",
    [
        lambda f: f.__setitem__("k", 1),
        lambda f: f.update(k=1),
        lambda f: f.pop("metadata"),
        lambda f: f["spec"]["list"].append(1),
        lambda f: f["metadata"]["labels"].setdefault("k", "v"),
    ],
    ids=["set", "update", "pop", "nested list append", "nested setdefault"],
)
def test_a_frozen_subtree_refuses_changes_it_could_not_write(change):
    f = frozen(OBJ)
    with pytest.raises(TypeError, match="frozen"):
        change(f)
    assert f == OBJ


def test_lazy_paths_leave_exactly_the_named_sub_trees_as_views():
    obj = {"a": [{"b": {"c": 1}, "d": [1]}, {"b": {"c": 2}}], "e": {"f": {"g": "h"}}, "i": 3}
    out = struct_to_dict_lazily(dict_to_struct(obj), lazy_paths("a[].b", "e.f", "missing.x"))
    assert isinstance(out["a"][0]["b"], StructView) and isinstance(out["e"]["f"], StructView)
    assert type(out["a"][0]["d"]) is list and type(out["a"]) is list and out["i"] == 3
    assert plain(out) == obj
    assert dict_to_struct(out) == dict_to_struct(obj)  # views are written back unchanged


# Plain data as a Struct round trip gives it, without the round trip (`render` in process).
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.text(max_size=5),
)
json_like = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.text(max_size=4), inner, max_size=4),
        st.dictionaries(st.text(max_size=4), inner, max_size=4).map(frozen),
        st.lists(inner, max_size=4).map(frozen),
        st.dictionaries(st.text(max_size=4), inner, max_size=4).map(
            lambda d: StructView(dict_to_struct(d))
        ),
    ),
    max_leaves=20,
)


@given(st.dictionaries(st.text(max_size=4), json_like, max_size=5))
def test_plain_data_is_what_a_struct_round_trip_gives(obj):
    assert plain(obj) == struct_to_dict(dict_to_struct(obj))
    assert _types(plain(obj)) == _types(struct_to_dict(dict_to_struct(obj)))


def _types(v):
    if isinstance(v, dict):
        return {k: _types(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_types(x) for x in v]
    return type(v)


def test_plain_data_refuses_what_a_struct_cannot_hold():
    for bad in ({"bad": {1, 2}}, {"bad": {1: "x"}}, {"bad": [object()]}):
        with pytest.raises(TypeError):
            dict_to_struct(bad)
        with pytest.raises(TypeError):
            plain(bad)


def test_plain_data_of_a_frozen_subtree_is_plain_dicts_and_lists():
    out = plain({"f": frozen(OBJ)})
    assert out == {"f": OBJ}
    assert type(out["f"]) is dict and type(out["f"]["spec"]["list"]) is list
