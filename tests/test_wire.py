"""Observed statuses nested past protobuf's decoder limit: provider-kubernetes returns an observed
CustomResourceDefinition whole in its Object's status (v1.2.1 object.go ``setAtProvider``), and
the real control plane sent exactly that to an InferenceCluster that observes CRDs."""

from __future__ import annotations

import struct as binary
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf.message import DecodeError

from modelplane.function import (
    FunctionRunner,
    decode_request,
    fatal_bytes,
    loggable_tag,
    peek_tag,
)
from modelplane.wire import _encode_varint, read_varint, shallow_request
from tests import standin


def field(number: int, body: bytes) -> bytes:
    return _encode_varint(number << 3 | 2) + _encode_varint(len(body)) + body


def value(v: Any) -> bytes:
    if isinstance(v, dict):
        return field(5, struct(v))
    if isinstance(v, list):
        return field(6, b"".join(field(1, value(x)) for x in v))
    if isinstance(v, str):
        return field(3, v.encode())
    return _encode_varint(2 << 3 | 1) + binary.pack("<d", float(v))


def struct(d: dict[str, Any]) -> bytes:
    return b"".join(field(1, field(1, k.encode()) + field(2, value(v))) for k, v in d.items())


def observed(name: str, obj: dict[str, Any]) -> bytes:
    """A RunFunctionRequest holding one observed composed resource, encoded by hand: the
    Python runtime cannot build a message it could not decode."""
    resource = field(1, struct(obj))
    return field(2, field(2, field(1, name.encode()) + field(2, resource)))


def nested(depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {"leaf": 1}
    for _ in range(depth):
        out = {"k": out}
    return out


def depth_of(view: Any) -> int:
    depth = 0
    while hasattr(view, "keys") and "k" in view:
        view, depth = view["k"], depth + 1
    return depth


CRD = {
    "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
    "kind": "Object",
    "metadata": {"name": "crd", "namespace": "crossplane-system"},
    "spec": {"forProvider": {"manifest": {"kind": "CustomResourceDefinition"}}},
    "status": {
        "conditions": [{"type": "Ready", "status": "True"}],
        "atProvider": {"manifest": {"metadata": {"name": "x"}, "spec": nested(60)}},
    },
}


def test_an_observed_status_past_the_decoder_limit_does_not_decode_as_sent():
    with pytest.raises(DecodeError):
        fnv1.RunFunctionRequest.FromString(observed("crd", CRD))


def test_an_observed_status_past_the_limit_decodes_with_its_deepest_parts_null():
    req = decode_request(observed("crd", CRD))
    status = req.observed.resources["crd"].resource["status"]
    assert status["conditions"][0]["type"] == "Ready"
    assert status["atProvider"]["manifest"]["metadata"]["name"] == "x"
    kept = depth_of(status["atProvider"]["manifest"]["spec"])
    assert 20 < kept < 60


def test_the_spec_of_an_observed_resource_is_never_cut():
    deep_spec = {**CRD, "spec": {"forProvider": {"manifest": nested(40)}}}
    with pytest.raises(DecodeError):
        decode_request(observed("crd", deep_spec))


def test_a_request_that_decodes_is_left_byte_for_byte():
    raw = observed("crd", {"spec": nested(5), "status": {"conditions": [{"type": "Ready"}]}})
    assert shallow_request(raw) == raw


def test_a_composite_with_a_deep_observed_status_composes_instead_of_failing():
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.update(standin.replica())
    req.meta.tag = "crd"
    raw = req.SerializeToString() + observed("crd", CRD)  # concatenated messages merge
    answer, outcome = FunctionRunner(standin.registry()).handle_bytes(raw, 1 << 20)
    rsp = fnv1.RunFunctionResponse.FromString(answer)
    assert outcome.result != "fatal"
    assert rsp.meta.tag == "crd"


def test_a_varint_longer_than_ten_bytes_is_malformed_after_ten():
    with pytest.raises(ValueError, match="malformed varint"):
        read_varint(b"\xff" * (1 << 20), 0)
    assert read_varint(b"\xff" * 9 + b"\x01", 0) == ((1 << 63) | ((1 << 63) - 1), 10)


def test_peeking_at_megabytes_of_continuation_bytes_reads_ten_of_them():
    # The unbounded reader built one integer of every byte it read: 1 MiB of 0xFF held the
    # server's event loop for minutes. Now the first eleven bytes decide.
    read: list[int] = []

    class Counting(bytes):
        def __getitem__(self, index):  # type: ignore[override]
            read.append(index)
            return bytes.__getitem__(self, index)

    assert peek_tag(Counting(b"\xff" * (64 << 20))) == ""
    assert len(read) <= 11


def test_a_tag_too_large_to_echo_is_left_out_of_a_fatal_that_fits():
    # Echoed, a 30 MiB tag made the Fatal itself too large to send: gRPC answered
    # RESOURCE_EXHAUSTED, which says nothing of why.
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag="t" * (30 << 20)))
    req.observed.composite.resource.update(standin.replica())
    limit = 4 << 20
    answer, outcome = FunctionRunner(standin.registry(), cache_size=0).handle_bytes(
        req.SerializeToString(), limit
    )
    assert len(answer) <= limit
    rsp = fnv1.RunFunctionResponse.FromString(answer)
    assert rsp.meta.tag == ""
    [result] = rsp.results
    assert result.severity == fnv1.SEVERITY_FATAL
    assert "the request's tag, 30.0 MiB, is not echoed" in result.message
    assert outcome.result == "fatal"


def test_a_tag_that_fits_is_echoed_on_a_fatal():
    rsp = fnv1.RunFunctionResponse.FromString(fatal_bytes("crossplane-tag", "why"))
    assert (rsp.meta.tag, rsp.results[0].message) == ("crossplane-tag", "why")


def test_a_log_line_carries_a_long_tag_cut_with_its_length():
    assert loggable_tag("a" * 64) == "a" * 64
    assert loggable_tag("a" * 1000) == "a" * 128 + "... (1000 characters)"


def test_a_runner_that_keeps_no_responses_hashes_no_request(monkeypatch):
    # The server hashes each request once, on arrival, for its cache; the worker's runner keeps
    # nothing, and hashed every request again (tens of MiB for a fleet).
    import modelplane.function as function

    def hashed(*_):
        raise AssertionError("hashed")

    monkeypatch.setattr(function, "content_key", hashed)
    monkeypatch.setattr(function, "request_key", hashed)
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag="t"))
    req.observed.composite.resource.update(standin.replica())
    _, outcome = FunctionRunner(standin.registry(), cache_size=0).handle_bytes(
        req.SerializeToString(), 1 << 20
    )
    assert outcome.result == "composed"
