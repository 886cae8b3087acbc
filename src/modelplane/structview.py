"""Read-only Mapping views of protobuf Structs, converted on access.

A required resource list can hold thousands of objects of which a composer reads a handful of
fields (the scheduler reads labels, ``spec.clusterName`` and members' pools and request counts
of every ModelReplica in the fleet). Converting each whole Struct to dicts costs far more than
those reads; a view converts only what is read. Values read through a view follow
``structs.value_to_py``: integral numbers are ints, nested objects are views, lists are lists.

Views are Mappings, not dicts: consumers use ``obj["spec"]``, ``.get``, ``in`` and iteration,
never ``isinstance(x, dict)``. ``to_dict`` gives a plain copy when one is needed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from google.protobuf import struct_pb2

from modelplane.structs import value_to_py


class StructView(Mapping[str, Any]):
    # No per-view cache: a read converts one value, and most fields are read once. Membership is
    # tested before indexing because a protobuf message map inserts a default on a missing key
    # (and its own ``get`` is several times slower than ``in`` plus ``[]``).
    __slots__ = ("_fields",)

    def __init__(self, struct: struct_pb2.Struct) -> None:
        self._fields = struct.fields

    def __getitem__(self, key: str) -> Any:
        fields = self._fields
        if key in fields:
            return view_value(fields[key])
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        fields = self._fields
        if key in fields:
            return view_value(fields[key])
        return default

    def __contains__(self, key: object) -> bool:
        return key in self._fields

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __repr__(self) -> str:
        return f"StructView({self.to_dict()!r})"

    def to_dict(self) -> dict[str, Any]:
        return {k: value_to_py(v) for k, v in self._fields.items()}


def view_value(v: struct_pb2.Value) -> Any:
    kind = v.WhichOneof("kind")
    if kind == "string_value":
        return v.string_value
    if kind == "struct_value":
        return StructView(v.struct_value)
    if kind == "list_value":
        return [view_value(x) for x in v.list_value.values]
    if kind == "number_value":
        n = v.number_value
        return int(n) if n.is_integer() else n
    if kind == "bool_value":
        return v.bool_value
    return None


def to_plain(value: Any) -> Any:
    """A deep plain-data copy of anything read through a view."""
    if isinstance(value, StructView):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    return value
