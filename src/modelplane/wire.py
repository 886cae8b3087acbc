"""Observed status deeper than protobuf's decoder allows, cut off on the wire.

provider-kubernetes copies every remote object it observes whole into the Object's
``status.atProvider.manifest`` (v1.2.1 internal/controller/namespaced/object/object.go
``setAtProvider``). An InferenceCluster observes CustomResourceDefinitions through such Objects
(a component marked External, the Gateway API bundle), and a CRD's schema nests far deeper than
the 100 messages upb decodes (``upb_DecodeOptions_MaxDepth``, which Python cannot raise): each
JSON object costs three levels. Crossplane sends those Objects back on every reconcile, so the
request would never decode.

What Modelplane reads of an observed object's status is shallow (conditions, a manifest's
metadata and status). ``shallow_request`` rewrites a request so that, inside the ``status`` of
each observed composed resource, a JSON object or list nested too deep for the decoder becomes
``null``; everything else (the composite, desired state, every ``spec``, which is carried
forward and must reach the provider unchanged) is copied byte for byte. It walks only the
observed resources' bytes and is used only when a request fails to decode for its depth.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

DECODE_DEPTH_LIMIT = 100
"""upb's nesting limit for a message, counted from the request itself."""

# Where a JSON object or list inside an observed status is replaced by null: its Value would
# hold a Struct (+1), a map entry (+2) and that entry's Value (+3); keep the whole chain below
# the limit with a margin.
_CUT = DECODE_DEPTH_LIMIT - 4
_NULL = b"\x08\x00"  # google.protobuf.Value{null_value: NULL_VALUE}

# Field numbers (crossplane function proto v1; google/protobuf/struct.proto).
_REQUEST_OBSERVED = 2
_STATE_RESOURCES = 2
_ENTRY_KEY, _ENTRY_VALUE = 1, 2
_RESOURCE_RESOURCE = 1
_STRUCT_FIELDS = 1
_VALUE_STRUCT, _VALUE_LIST = 5, 6
_LIST_VALUES = 1

_LENGTH_DELIMITED = 2

Rewrite = Callable[[bytes, int], bytes]


def read_varint(raw: bytes, i: int) -> tuple[int, int]:
    """The varint at ``raw[i]`` and where it ends. At most 10 bytes are read, whatever follows:
    a longer one is malformed (ValueError), so reading costs no more than the bytes it reads."""
    value = shift = 0
    for _ in range(10):
        b = raw[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7
    raise ValueError("malformed varint")


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _fields(raw: bytes) -> Iterator[tuple[int, int, int, int, int]]:
    """(field, wire type, start of the field, end of its key, end) for each field; a
    length-delimited field's payload starts after its length, at ``end - length``."""
    i, n = 0, len(raw)
    while i < n:
        start = i
        key, i = read_varint(raw, i)
        key_end, wire = i, key & 7
        if wire == 0:
            _, end = read_varint(raw, i)
        elif wire == 1:
            end = i + 8
        elif wire == _LENGTH_DELIMITED:
            length, i = read_varint(raw, i)
            end = i + length
        elif wire == 5:
            end = i + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        if end > n:
            raise ValueError("truncated message")
        yield key >> 3, wire, start, key_end, end
        i = end


def _payload(raw: bytes, key_end: int, end: int) -> bytes:
    _, start = read_varint(raw, key_end)
    return raw[start:end]


def _rewrite(raw: bytes, rewrite: dict[int, Rewrite], depth: int) -> bytes:
    """``raw`` with each length-delimited field whose number is in ``rewrite`` replaced by what
    its function returns for the payload (at ``depth + 1``); every other byte copied."""
    out = bytearray()
    for field, wire, start, key_end, end in _fields(raw):
        change = rewrite.get(field)
        if change is None or wire != _LENGTH_DELIMITED:
            out += raw[start:end]
            continue
        body = change(_payload(raw, key_end, end), depth + 1)
        out += raw[start:key_end]
        out += _encode_varint(len(body))
        out += body
    return bytes(out)


def shallow_request(raw: bytes) -> bytes:
    """The serialized RunFunctionRequest with over-deep parts of observed statuses nulled."""
    return _into(_OBSERVED_FIELDS, _status_entry)(raw, 1)


# From the request to each observed resource's top-level fields: the observed state, its map of
# resources, a map entry's value, the resource's Struct, that Struct's map of fields.
_OBSERVED_FIELDS = (
    _REQUEST_OBSERVED,
    _STATE_RESOURCES,
    _ENTRY_VALUE,
    _RESOURCE_RESOURCE,
    _STRUCT_FIELDS,
)


def _into(path: tuple[int, ...], then: Rewrite) -> Rewrite:
    """Rewrites with ``then`` the payloads found along ``path`` (field numbers, outermost
    first), every other byte copied."""
    if not path:
        return then
    inner = _into(path[1:], then)
    return lambda raw, depth: _rewrite(raw, {path[0]: inner}, depth)


def _status_entry(raw: bytes, depth: int) -> bytes:
    for field, wire, _, key_end, end in _fields(raw):
        if field == _ENTRY_KEY and wire == _LENGTH_DELIMITED:
            key = _payload(raw, key_end, end)
            return _rewrite(raw, {_ENTRY_VALUE: _value}, depth) if key == b"status" else raw
    return raw


def _value(raw: bytes, depth: int) -> bytes:
    holds = {f for f, *_ in _fields(raw)}
    if not holds & {_VALUE_STRUCT, _VALUE_LIST}:
        return raw
    if depth >= _CUT:
        return _NULL
    return _rewrite(raw, {_VALUE_STRUCT: _struct, _VALUE_LIST: _list}, depth)


_struct = _into((_STRUCT_FIELDS, _ENTRY_VALUE), _value)
_list = _into((_LIST_VALUES,), _value)
