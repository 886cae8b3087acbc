"""A gateway over 10,000 clusters answers in less than the 4 MiB Crossplane's gRPC client
receives (crossplane v2.3.4 internal/xfn/function_runner.go sets no MaxCallRecvMsgSize), and so
does each of its shards: the serialized RunFunctionResponse, through the FunctionRunner."""

from __future__ import annotations

import functools
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.compose.inferencegateway.shards import SHARD, SHARDS
from modelplane.compose.registry import default_registry
from modelplane.function import FunctionRunner
from modelplane.simulate import simulate_observed
from modelplane.structs import struct_to_dict
from tests.compose.modelservice.kit import edge_fleet, gateway
from tests.compose.through import request

Obj = dict[str, Any]
MIB = 1024 * 1024
FLEET = 10_000
IG = gateway("main", "edge")


@functools.cache
def large_fleet() -> list[Obj]:
    """Each cluster as much as the gateway reads of it: name, gateway address, fleet name."""
    return edge_fleet(*(f"cluster-{i:05d}" for i in range(FLEET - 1)))


def respond(
    composite: Obj, observed: dict[str, Obj] | None = None, **required: Any
) -> fnv1.RunFunctionResponse:
    rsp = FunctionRunner(default_registry()).run(request(composite, observed, required))
    fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    assert not fatal, fatal
    return rsp


@functools.cache
def gateway_response() -> fnv1.RunFunctionResponse:
    return respond(IG, **{"inference-clusters": large_fleet()})


def shards() -> dict[str, Obj]:
    rsp = gateway_response()
    return {
        k: struct_to_dict(r.resource)
        for k, r in rsp.desired.resources.items()
        if k.startswith(SHARD)
    }


def test_a_gateway_over_10000_clusters_answers_under_4_mib() -> None:
    assert gateway_response().ByteSize() < 4 * MIB
    assert len(shards()) == SHARDS
    assert sum(len(s["spec"]["targets"]) for s in shards().values()) == FLEET


def test_every_shard_of_a_10000_cluster_gateway_answers_under_4_mib() -> None:
    for key, shard in shards().items():
        assert respond(shard).ByteSize() < 4 * MIB, key


def test_the_largest_shard_answers_under_4_mib_once_its_hops_exist_and_is_ready() -> None:
    shard = max(shards().values(), key=lambda s: len(s["spec"]["targets"]))
    created = respond(shard)
    observed = simulate_observed(
        {k: struct_to_dict(r.resource) for k, r in created.desired.resources.items()}, 1
    )
    steady = respond(shard, observed)
    assert steady.ByteSize() < 4 * MIB
    assert steady.desired.composite.ready == fnv1.READY_TRUE
