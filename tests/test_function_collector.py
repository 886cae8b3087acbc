"""The cyclic collector is off while a request composes: a fleet's request is read through
hundreds of thousands of views that live until the call ends, and full collections over them
would cost more the larger the request. It is on again once the call has answered."""

from __future__ import annotations

import gc

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.composer import Inputs, Registry, Result
from modelplane.function import FunctionRunner
from modelplane.structs import dict_to_struct

COMPOSITE = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelReplica", "metadata": {}}


def runner(seen: list[bool], fail: bool = False) -> FunctionRunner:
    def compose(inputs: Inputs) -> Result:
        seen.append(gc.isenabled())
        if fail:
            raise RuntimeError("a composer bug")
        return Result()

    registry = Registry()
    registry.register("modelplane.ai/v1alpha1", "ModelReplica", compose)
    return FunctionRunner(registry, cache_size=0)


def request() -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag="t"))
    req.observed.composite.resource.CopyFrom(dict_to_struct(COMPOSITE))
    return req


def test_the_collector_is_off_while_composing_and_on_once_answered() -> None:
    seen: list[bool] = []
    runner(seen).run(request())
    assert seen == [False]
    assert gc.isenabled()


def test_a_composer_that_raises_leaves_the_collector_on() -> None:
    seen: list[bool] = []
    rsp = runner(seen, fail=True).run(request())
    assert [r.severity for r in rsp.results] == [fnv1.SEVERITY_FATAL]
    assert gc.isenabled()


def test_a_caller_that_turned_the_collector_off_finds_it_off() -> None:
    gc.disable()
    try:
        runner([]).run(request())
        assert not gc.isenabled()
    finally:
        gc.enable()
