"""The gRPC edge: one FunctionRunner for every Modelplane composition.

Data flows one way: RunFunctionRequest -> ``Inputs`` (plain dicts) -> the composer registered
for the composite's kind -> ``Result`` -> RunFunctionResponse. Nothing past this module sees
protobuf, and nothing in a composer can make this module return a traceback or a response that
drops desired resources: every fault becomes a Fatal result, which Crossplane does not apply.
"""

from __future__ import annotations

import hashlib
import traceback
from collections import OrderedDict
from typing import Any, Generic, TypeVar

import grpc
from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from google.protobuf import duration_pb2

from modelplane.composer import Inputs, Registry, Result, UnknownKindError
from modelplane.structs import (
    LazyPaths,
    StructView,
    fill_struct,
    struct_to_dict,
    struct_to_dict_lazily,
    to_value,
)

RESPONSE_TTL_SECONDS = 60
T = TypeVar("T")
_READY = {"True": fnv1.READY_TRUE, "False": fnv1.READY_FALSE, "Unspecified": fnv1.READY_UNSPECIFIED}
_SEVERITY = {
    "Normal": fnv1.SEVERITY_NORMAL,
    "Warning": fnv1.SEVERITY_WARNING,
    "Fatal": fnv1.SEVERITY_FATAL,
}
_STATUS = {
    "True": fnv1.STATUS_CONDITION_TRUE,
    "False": fnv1.STATUS_CONDITION_FALSE,
    "Unknown": fnv1.STATUS_CONDITION_UNKNOWN,
}


class FunctionRunner(grpcv1.FunctionRunnerServiceServicer):
    """Dispatches each request to the composer registered for the observed composite's kind.

    Composers are pure, so a response is a function of the request alone. Crossplane
    re-sends identical requests on every reconcile of an unchanged composite; those are
    answered from a small cache keyed by the request's content. A cached answer is the same
    message object each time (gRPC only serializes it): callers must treat responses as
    read-only.
    """

    def __init__(self, registry: Registry, *, cache_size: int = 256) -> None:
        self.registry = registry
        self._responses: Lru[fnv1.RunFunctionResponse] = Lru(cache_size)
        self._log: Any = None

    @property
    def log(self) -> Any:
        # The SDK's logger is a lazy proxy that assembles a logger on every call (~20 us, more
        # than a small composition); resolve it once, at the first request, after serve (or
        # render) has configured logging.
        if self._log is None:
            self._log = logging.get_logger().bind()
        return self._log

    async def RunFunction(  # noqa: N802  (the gRPC method name)
        self, req: fnv1.RunFunctionRequest, context: grpc.aio.ServicerContext | None = None
    ) -> fnv1.RunFunctionResponse:
        return self.run(req)

    def run(self, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
        key = request_key(req)
        cached = self._responses.get(key)
        if cached is not None:
            return cached  # the key is the tag (or the content), so the tag already matches
        rsp = self._compose(req)
        if not _is_fatal(rsp):
            self._responses.put(key, rsp)
        return rsp

    def _compose(self, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
        # The tag goes on each line rather than through bind(): binding the SDK's lazy logger
        # costs more than a whole small composition.
        log, tag = self.log, req.meta.tag
        try:
            api_version, kind = read_identity(req)
            composer = self.registry.lookup(api_version, kind)
            composite = read_composite(req, self.registry.lazy_composite(api_version, kind))
            lazy = self.registry.lazy_requirements(api_version, kind)
            inputs = read_inputs(req, composite, lazy)
            kind = f"{kind}.{api_version}"  # as users read it in messages
        except (MalformedRequestError, UnknownKindError) as e:
            log.info("rejected request", tag=tag, error=str(e))
            return fatal_response(req, str(e))
        try:
            result = composer(inputs)
        except Exception as e:  # a composer bug must not reach Crossplane as a traceback
            log.error(
                "composer raised", tag=tag, kind=kind, error=repr(e), trace=traceback.format_exc()
            )
            return fatal_response(req, f"composing {kind} failed: {type(e).__name__}: {e}")
        log.debug(
            "composed", tag=tag, kind=kind, resources=len(result.resources), fatal=result.fatal
        )
        try:
            return write_response(req, result)
        except (TypeError, ValueError) as e:
            return fatal_response(req, f"composing {kind} produced an invalid result: {e}")


class Lru(Generic[T]):
    """A bounded map that forgets the least recently used entry first."""

    def __init__(self, size: int) -> None:
        self._items: OrderedDict[str | bytes, T] = OrderedDict()
        self._size = size

    def get(self, key: str | bytes) -> T | None:
        item = self._items.get(key)
        if item is not None:
            self._items.move_to_end(key)
        return item

    def put(self, key: str | bytes, item: T) -> None:
        self._items[key] = item
        if len(self._items) > self._size:
            self._items.popitem(last=False)


class MalformedRequestError(ValueError):
    pass


def request_key(req: fnv1.RunFunctionRequest) -> str:
    """Crossplane's tag already is a hash of the request; without one, hash the content."""
    if req.meta.tag:
        return req.meta.tag
    return hashlib.sha256(req.SerializeToString(deterministic=True)).hexdigest()


def read_identity(req: fnv1.RunFunctionRequest) -> tuple[str, str]:
    """The observed composite's apiVersion and kind, read before converting anything."""
    if not req.HasField("observed") or not req.observed.composite.HasField("resource"):
        raise MalformedRequestError("request carries no observed composite resource")
    fields = req.observed.composite.resource.fields
    identity = []
    for key in ("apiVersion", "kind"):
        value = fields.get(key)
        if value is None or value.WhichOneof("kind") != "string_value":
            raise MalformedRequestError(
                "observed composite is not a Kubernetes object: apiVersion and kind are required"
            )
        identity.append(value.string_value)
    return identity[0], identity[1]


def read_composite(req: fnv1.RunFunctionRequest, lazy: LazyPaths | None = None) -> dict[str, Any]:
    """The observed composite as plain data, but for the sub-trees ``lazy`` leaves as views."""
    resource = req.observed.composite.resource
    return struct_to_dict_lazily(resource, lazy) if lazy else struct_to_dict(resource)


def read_inputs(
    req: fnv1.RunFunctionRequest, composite: dict[str, Any], lazy: frozenset[str] = frozenset()
) -> Inputs:
    # Crossplane before v2 answers requirements in the deprecated extra_resources field.
    required_source = req.required_resources or req.extra_resources
    required: dict[str, list[Any]] = {}
    for name, rs in required_source.items():
        convert = StructView if name in lazy else struct_to_dict
        required[name] = [convert(r.resource) for r in rs.items]
    # Typed as plain data: views are read-only Mappings, and composers only read observed state.
    observed: dict[str, Any] = {
        k: StructView(r.resource) for k, r in req.observed.resources.items()
    }
    return Inputs(
        composite=composite,
        observed=observed,
        required=required,
        context=struct_to_dict(req.context) if req.HasField("context") else {},
    )


def write_response(
    req: fnv1.RunFunctionRequest,
    result: Result,
) -> fnv1.RunFunctionResponse:
    if result.fatal is not None:
        return fatal_response(req, result.fatal)
    rsp = _base_response(req)
    for name, desired in result.resources.items():
        target = rsp.desired.resources[name]
        if name in req.desired.resources:  # an earlier step's version is replaced, not merged
            target.resource.Clear()
        fill_struct(target.resource, desired.resource)
        target.ready = _READY[desired.ready]
    if result.status:
        rsp.desired.composite.resource.fields["status"].CopyFrom(to_value(result.status))
    for c in result.conditions:
        rsp.conditions.append(
            fnv1.Condition(
                type=c.type,
                status=_STATUS[c.status],
                reason=c.reason,
                message=c.message or None,
                target=fnv1.TARGET_COMPOSITE,
            )
        )
    for e in result.events:
        rsp.results.append(
            fnv1.Result(
                severity=_SEVERITY[e.severity],
                message=e.message,
                reason=e.reason or None,
                target=fnv1.TARGET_COMPOSITE,
            )
        )
    for name, r in result.requirements.items():
        selector = fnv1.ResourceSelector(api_version=r.api_version, kind=r.kind)
        if r.match_name is not None:
            selector.match_name = r.match_name
        else:
            # Crossplane rejects a selector with neither match set: "every object of the kind"
            # is an empty label selector, which must be present on the wire.
            selector.match_labels.SetInParent()
            selector.match_labels.labels.update(r.match_labels or {})
        if r.namespace:
            selector.namespace = r.namespace
        rsp.requirements.resources[name].CopyFrom(selector)
    return rsp


def fatal_response(req: fnv1.RunFunctionRequest, message: str) -> fnv1.RunFunctionResponse:
    rsp = _base_response(req)
    rsp.results.append(fnv1.Result(severity=fnv1.SEVERITY_FATAL, message=message))
    return rsp


def _base_response(req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
    # Earlier pipeline steps' desired state is carried forward, as Crossplane expects.
    return fnv1.RunFunctionResponse(
        meta=fnv1.ResponseMeta(
            tag=req.meta.tag, ttl=duration_pb2.Duration(seconds=RESPONSE_TTL_SECONDS)
        ),
        desired=req.desired,
        context=req.context,
    )


def _is_fatal(rsp: fnv1.RunFunctionResponse) -> bool:
    return any(r.severity == fnv1.SEVERITY_FATAL for r in rsp.results)


def response_to_dict(rsp: fnv1.RunFunctionResponse) -> dict[str, Any]:
    """A response as plain data (used by ``render`` and tests)."""
    return {
        "desired": {
            "composite": struct_to_dict(rsp.desired.composite.resource),
            "resources": {
                k: {"resource": struct_to_dict(r.resource), "ready": fnv1.Ready.Name(r.ready)}
                for k, r in rsp.desired.resources.items()
            },
        },
        "results": [
            {"severity": fnv1.Severity.Name(r.severity), "message": r.message, "reason": r.reason}
            for r in rsp.results
        ],
        "conditions": [
            {
                "type": c.type,
                "status": fnv1.Status.Name(c.status),
                "reason": c.reason,
                "message": c.message,
            }
            for c in rsp.conditions
        ],
    }
