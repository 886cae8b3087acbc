"""Protobuf Struct <-> plain Python data, the only place the two meet.

Struct carries every number as a double. JSON (and so Kubernetes) has no integer/float
distinction on the wire, so an integral double becomes a Python int: the API server would
have serialised it without a fraction, and CEL and schema checks need it as an int.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import struct_pb2


def struct_to_dict(s: struct_pb2.Struct) -> dict[str, Any]:
    return {k: value_to_py(v) for k, v in s.fields.items()}


def value_to_py(v: struct_pb2.Value) -> Any:
    kind = v.WhichOneof("kind")
    if kind == "string_value":
        return v.string_value
    if kind == "struct_value":
        return {k: value_to_py(x) for k, x in v.struct_value.fields.items()}
    if kind == "list_value":
        return [value_to_py(x) for x in v.list_value.values]
    if kind == "number_value":
        n = v.number_value
        return int(n) if n.is_integer() else n
    if kind == "bool_value":
        return v.bool_value
    return None


def dict_to_struct(d: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(d)
    return s
