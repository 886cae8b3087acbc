"""The gRPC edge: one FunctionRunner for every Modelplane composition.

Data flows one way: RunFunctionRequest -> ``Inputs`` (plain dicts) -> the composer registered
for the composite's kind -> ``Result`` -> RunFunctionResponse. Nothing past this module sees
protobuf, and nothing in a composer can make this module return a traceback or a response that
drops desired resources: every fault becomes a Fatal result, which Crossplane does not apply.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from google.protobuf import duration_pb2, struct_pb2
from google.protobuf.message import DecodeError

from modelplane.compose.admission import Admission, invalid
from modelplane.compose.shared.malformed import malformed
from modelplane.composer import (
    Composer,
    Condition,
    ConditionStatus,
    Desired,
    Event,
    Inputs,
    Ready,
    Registry,
    Requirement,
    Result,
    Severity,
    UnknownKindError,
)
from modelplane.kube.lru import Lru
from modelplane.structs import (
    LazyPaths,
    Shape,
    ShapeError,
    StructView,
    check_field,
    check_struct,
    checked_view,
    fill_struct,
    identity,
    name_of,
    shape_of,
    struct_to_dict,
    struct_to_dict_lazily,
    to_value,
    value_to_py,
)
from modelplane.wire import DECODE_DEPTH_LIMIT, read_varint, shallow_request

RESPONSE_TTL_SECONDS = 60
CACHE_BYTES = 64 * 1024 * 1024
"""What the response cache may hold: a fleet's response runs to megabytes, a replica's to
tens of kilobytes, so a count would bound nothing."""
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
_READY_NAME: dict[int, Ready] = {v: k for k, v in _READY.items()}  # type: ignore[misc]
_SEVERITY_NAME: dict[int, Severity] = {v: k for k, v in _SEVERITY.items()}  # type: ignore[misc]
_STATUS_NAME: dict[int, ConditionStatus] = {v: k for k, v in _STATUS.items()}  # type: ignore[misc]
# What of a composite's metadata admission reads; the rest (resourceVersion, managedFields) is
# the server's and changes on every status write, which must not make a spec look new.
_ADMITTED_METADATA = ("name", "generateName", "namespace", "labels", "annotations")


@dataclass(frozen=True)
class Outcome:
    """What one call did, for its log line: the composite's kind and name, and the result."""

    kind: str = ""
    name: str = ""
    result: str = "composed"
    """composed, cached, fatal, or (the caller gave up) cancelled."""
    message: str = ""
    """The Fatal result's message."""


class FunctionRunner(grpcv1.FunctionRunnerServiceServicer):
    """Dispatches each request to the composer registered for the observed composite's kind.

    Composers are pure, so a response is a function of the request alone. Crossplane
    re-sends identical requests on every reconcile of an unchanged composite; those are
    answered from a cache bounded in bytes and keyed by the request's tag. A cached answer is
    the same message object each time (gRPC only serializes it): callers must treat responses
    as read-only.

    With an ``admission``, each composite is admitted before it is composed (a refusal is a
    Fatal result in the API server's words), and every required and observed resource is read
    through views checked against its schema (``Admission.read_schema``).
    """

    def __init__(
        self,
        registry: Registry,
        *,
        cache_size: int = CACHE_BYTES,
        admission: Admission | None = None,
    ) -> None:
        """``cache_size``: bytes of responses kept (0 keeps none)."""
        self.registry = registry
        self.admission = admission
        self.responses: Lru[fnv1.RunFunctionResponse] = Lru(cache_size)
        self._admitted: Lru[tuple[str, ...]] = Lru(1024)
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
        start = time.perf_counter()
        rsp, outcome = self.handle(req)
        log_request(self.log, req.meta.tag, outcome, time.perf_counter() - start)
        return rsp

    def run(self, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
        return self.handle(req)[0]

    def handle(
        self, req: fnv1.RunFunctionRequest, key: str | None = None
    ) -> tuple[fnv1.RunFunctionResponse, Outcome]:
        """The response, and what happened, for the caller's log line. ``key`` is a hash of
        the serialized request when the caller has its bytes; a runner keeping no responses
        (a serving worker: the server caches) hashes nothing."""
        if not self.responses.budget:
            with no_cycle_collection():
                return self._compose(req)
        key = key or request_key(req)
        cached = self.responses.get(key)
        if cached is not None:
            # Same content, so the same tag: Crossplane's tag hashes the request it built.
            return cached, Outcome(*_identity_of(req), result="cached")
        with no_cycle_collection():
            rsp, outcome = self._compose(req)
        if outcome.result != "fatal":
            self.responses.put(key, rsp, rsp.ByteSize())
        return rsp, outcome

    def handle_bytes(self, raw: bytes, max_response: int) -> tuple[bytes, Outcome]:
        """``handle`` on the wire: a serialized request in, a serialized response out, never
        larger than ``max_response`` bytes (past it, a Fatal result naming the limit)."""
        try:
            req = decode_request(raw)
        except DecodeError as e:
            why = UNDECODABLE_DEPTH if _too_deep(e) else f"undecodable request: {e}"
            return fatal_bytes(peek_tag(raw), why, max_response), Outcome(
                result="fatal", message=why
            )
        rsp, outcome = self.handle(req, content_key(raw) if self.responses.budget else None)
        out = rsp.SerializeToString()
        if len(out) <= max_response:
            return out, outcome
        why = (
            f"the response is {len(out) / MIB:.1f} MiB, more than the {max_response / MIB:g} MiB "
            "this function may send (--max-send-message-size; Crossplane receives at most "
            f"4 MiB, gRPC's default, which it does not raise); {_what_sizes(outcome.kind)}"
        )
        return fatal_bytes(req.meta.tag, why, max_response), Outcome(
            outcome.kind, outcome.name, "fatal", message=why
        )

    def _compose(self, req: fnv1.RunFunctionRequest) -> tuple[fnv1.RunFunctionResponse, Outcome]:
        # The tag goes on each line rather than through bind(): binding the SDK's lazy logger
        # costs more than a whole small composition.
        log, tag = self.log, req.meta.tag
        identity = _identity_of(req)
        try:
            api_version, kind = read_identity(req)
            composer = self.registry.lookup(api_version, kind)
            if self.admission is not None:
                self._admit(req, api_version, kind)
            composite = read_composite(req, self.registry.lazy_composite(api_version, kind))
            lazy = self.registry.lazy_requirements(api_version, kind)
            asked = functools.partial(self.registry.required_kind, api_version, kind)
            inputs = read_inputs(req, composite, lazy, self.admission, asked)
            kind = f"{kind}.{api_version}"  # as users read it in messages
        except (MalformedRequestError, UnknownKindError, ShapeError) as e:
            return _fatal(req, identity, str(e))
        result = run_composer(
            composer, inputs, kind, lambda event, **f: log.error(event, tag=tag, **f)
        )
        try:
            rsp = write_response(req, result)
        except (TypeError, ValueError) as e:
            return _fatal(req, identity, invalid_result(kind, e))
        if result.fatal is not None:
            return rsp, Outcome(*identity, result="fatal", message=result.fatal)
        return rsp, Outcome(*identity)

    def _admit(self, req: fnv1.RunFunctionRequest, api_version: str, kind: str) -> None:
        """Admit the composite as the API server would, or raise naming what it refuses.

        Memoised by the content admission reads, so a status update, Crossplane's common
        reconcile, admits nothing again.
        """
        assert self.admission is not None
        parts = admitted_parts(req.observed.composite.resource)
        digest = hashlib.blake2b(digest_size=16)
        for k, v in parts:
            digest.update(k.encode() + b"\0" + v.SerializeToString(deterministic=True))
        key = digest.digest()
        errors = self._admitted.get(key)
        if errors is None:
            errors = admission_errors(self.admission, api_version, kind, parts)
            self._admitted.put(key, errors, 1)
        if errors:
            raise MalformedRequestError(errors[0])
        # The API server ignores a composite's status on create and update, so admission
        # leaves it out; composers read it (the conditions they published), so check it here.
        resource = req.observed.composite.resource
        schema = self.admission.read_schema(api_version, kind).properties or {}
        if "status" in schema:
            check_field(resource, "status", schema["status"], None)


@contextlib.contextmanager
def no_cycle_collection(*, untraversed: bool = False) -> Iterator[None]:
    """The cyclic collector off for the block, as it was before afterwards. A fleet's request
    is read through hundreds of thousands of views that all live until the call ends and form
    no cycles (reference counting frees them then); every full collection meanwhile walks all
    of them, and how many come due grows with the request, so at 10,000 clusters they cost a
    fifth of the call. What the block drops in cycles, if anything, is collected after it.
    ``untraversed``: what survives the block joins the oldest generation without being walked
    (freezing and unfreezing splices the generations' lists)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if untraversed:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def run_composer(
    composer: Composer, inputs: Inputs, kind: str, log: Callable[..., Any] | None = None
) -> Result:
    """The composer's result, every fault in it a Fatal result: the function and `render`
    alike. ``kind`` is the composite's as users read it (``Kind.group/version``); ``log``
    hears a composer's crash, with its trace."""
    try:
        problem = malformed(inputs, views=False)
        if problem:
            return Result.failed(problem)
        return composer(inputs)
    except ShapeError as e:  # a required or observed resource its schema does not allow
        return Result.failed(str(e))
    except Exception as e:  # a composer bug must not reach Crossplane as a traceback
        if log is not None:
            log("composer raised", kind=kind, error=repr(e), trace=traceback.format_exc())
        # Most likely an input no composer can read: say which, rather than what it raised.
        problem = malformed(inputs, views=True)
        return Result.failed(problem or f"composing {kind} failed: {type(e).__name__}: {e}")


def invalid_result(kind: str, error: Exception) -> str:
    """Why a result that cannot be written (a value no Struct holds) is refused."""
    return f"composing {kind} produced an invalid result: {error}"


def admitted_parts(resource: struct_pb2.Struct) -> list[tuple[str, struct_pb2.Value]]:
    """What admission reads of a composite, in key order: all but its status, and of its
    metadata (``metadata.<key>``) what a user sets; the rest changes on every status write."""
    fields = resource.fields
    parts = []
    for key in sorted(fields):
        value = fields[key]
        if key == "status":
            continue
        if key == "metadata" and value.WhichOneof("kind") == "struct_value":
            meta = value.struct_value.fields
            parts += [(f"metadata.{k}", meta[k]) for k in _ADMITTED_METADATA if k in meta]
        else:
            parts.append((key, value))
    return parts


def admission_errors(
    admission: Admission, api_version: str, kind: str, parts: list[tuple[str, struct_pb2.Value]]
) -> tuple[str, ...]:
    if not admission.knows(api_version, kind):
        return (f'no matches for kind "{kind}" in version "{api_version}"',)
    obj: dict[str, Any] = {}
    for key, value in parts:
        if key.startswith("metadata."):
            obj.setdefault("metadata", {})[key.removeprefix("metadata.")] = value_to_py(value)
        else:
            obj[key] = value_to_py(value)
    errors = admission.admit(obj).errors
    if not errors:
        return ()
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else ""
    # A name that is not a string is one of the errors: the API server shows none.
    return (invalid(kind, api_version, name if isinstance(name, str) else "", errors),)


MIB = 1024 * 1024


CROSSPLANE_RECEIVE_LIMIT = 4 * MIB
"""What Crossplane reads of a response: grpc-go's default client receive limit, which its
function runner does not raise."""
TAG_LOGGED = 128
"""The most of a request's tag a log line carries."""


def _what_sizes(kind: str) -> str:
    """What makes a composite's response as large as it is, for the message refusing it."""
    if kind == "ModelDeployment":
        return "spec.replicas and the template's size bound a ModelDeployment's response"
    if kind == "InferenceGateway":
        return (
            "an InferenceGateway composes an InferenceGatewayShard holding the address of "
            "every cluster it reaches (its shards compose the two objects per cluster)"
        )
    if kind == "InferenceGatewayShard":
        return (
            "an InferenceGatewayShard composes two objects for every cluster hashed to it, "
            "which past about 2,200 clusters in one shard (some 30,000 in the fleet) is more "
            "than Crossplane receives"
        )
    return f"a {kind or 'composite'}'s response grows with what it composes"


UNDECODABLE_DEPTH = (
    f"the request nests deeper than protobuf's limit of {DECODE_DEPTH_LIMIT} messages "
    "(upb_DecodeOptions_MaxDepth, which the Python runtime cannot raise) outside the status "
    "of its observed resources: each JSON object of a resource costs 3 levels and each list "
    "2, so a composite or a resource's spec may nest about 30 objects, or 20 objects within "
    "lists"
)


def _too_deep(error: DecodeError) -> bool:
    return "depth" in str(error).lower()


def decode_request(raw: bytes) -> fnv1.RunFunctionRequest:
    """The request; one whose observed statuses nest too deep for upb (provider-kubernetes
    returns an observed CustomResourceDefinition whole) is decoded with those parts nulled
    (``wire.shallow_request``), since nothing reads them."""
    try:
        return fnv1.RunFunctionRequest.FromString(raw)
    except DecodeError as e:
        if not _too_deep(e):
            raise
    return fnv1.RunFunctionRequest.FromString(shallow_request(raw))


def peek_tag(raw: bytes) -> str:
    """A serialized request's ``meta.tag``, read off the wire without decoding anything else
    (the response cache answers by it before any worker decodes the request)."""
    tag = ""
    i, n = 0, len(raw)
    try:
        while i < n:
            key, i = read_varint(raw, i)
            field, wire = key >> 3, key & 7
            if wire == 2:
                length, i = read_varint(raw, i)
                if field == 1:  # RunFunctionRequest.meta
                    tag = fnv1.RequestMeta.FromString(raw[i : i + length]).tag
                i += length
            elif wire == 0:
                _, i = read_varint(raw, i)
            elif wire == 1:
                i += 8
            elif wire == 5:
                i += 4
            else:
                return tag
    except (IndexError, ValueError, DecodeError):
        return tag
    return tag


def fatal_bytes(tag: str, message: str, limit: int = CROSSPLANE_RECEIVE_LIMIT) -> bytes:
    """A serialized Fatal response carrying only the tag: for a request that could not be
    read, or a response too large to send (Crossplane applies nothing from a Fatal one). A tag
    that would take it past ``limit`` bytes is not echoed: the answer would be refused for its
    size (gRPC's RESOURCE_EXHAUSTED) rather than read, and Crossplane's own tags are 64
    characters."""
    rsp = fnv1.RunFunctionResponse(meta=_response_meta(tag))
    rsp.results.append(fnv1.Result(severity=fnv1.SEVERITY_FATAL, message=message))
    if rsp.ByteSize() > limit:
        rsp.meta.tag = ""
        rsp.results[0].message = (
            f"{message} (the request's tag, {len(tag.encode()) / MIB:.1f} MiB, is not echoed: "
            "the answer would not fit the response limit)"
        )
    return rsp.SerializeToString()


def log_request(log: Any, tag: str, outcome: Outcome, seconds: float) -> None:
    """One info line per request: its tag, the composite's kind and name, the result and how
    long it took (and a Fatal result's message)."""
    fields = {
        "tag": loggable_tag(tag),
        "kind": outcome.kind,
        "name": outcome.name,
        "result": outcome.result,
        "duration_ms": round(seconds * 1000, 3),
    }
    if outcome.message:
        fields["message"] = outcome.message
    log.info("RunFunction", **fields)


def loggable_tag(tag: str) -> str:
    """A tag as a log line carries it: Crossplane's are 64 characters; a longer one (a client's
    own, megabytes perhaps) is cut, its length said."""
    if len(tag) <= TAG_LOGGED:
        return tag
    return f"{tag[:TAG_LOGGED]}... ({len(tag)} characters)"


def _fatal(
    req: fnv1.RunFunctionRequest, identity: tuple[str, str], message: str
) -> tuple[fnv1.RunFunctionResponse, Outcome]:
    return fatal_response(req, message), Outcome(*identity, result="fatal", message=message)


def _identity_of(req: fnv1.RunFunctionRequest) -> tuple[str, str]:
    """The composite's kind and name for a log line, whatever shape the request has."""
    resource = req.observed.composite.resource
    return identity(resource)[1], name_of(resource)


class MalformedRequestError(ValueError):
    pass


def request_key(req: fnv1.RunFunctionRequest) -> str:
    """What identifies a request for the response cache: its content, never its tag alone.
    Crossplane computes the tag once per pipeline step, before it fetches what the function
    requires, and sends every iteration of that step (each with the required resources of the
    last answer) under the same tag (crossplane v2.3.4 internal/controller/apiextensions/
    composite/composition_functions.go ``Tag``, internal/xfn/required_resources.go): answered
    by tag, the second iteration got the first's answer and no requirement was ever met."""
    return content_key(req.SerializeToString(deterministic=True))


def content_key(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


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
    req: fnv1.RunFunctionRequest,
    composite: dict[str, Any],
    lazy: frozenset[str] = frozenset(),
    admission: Admission | None = None,
    asked: Callable[[str], tuple[str, str] | None] | None = None,
) -> Inputs:
    """The composer's inputs. ``asked`` gives the (apiVersion, kind) each requirement asked for
    (``Registry.required_kind``): an item of another kind, or of none, raises
    ``MalformedRequestError`` naming the requirement and the item. With an ``admission``,
    every required and observed resource is read against its schema (a required one against
    its requirement's kind): views check each value read, and a requirement converted to plain
    data is checked whole first; either raises ``ShapeError`` naming the field."""
    # Crossplane before v2 answers requirements in the deprecated extra_resources field.
    required_source = req.required_resources or req.extra_resources
    shapes: dict[tuple[str, str], Shape] = {}
    required = {
        name: _read_required(
            name, rs.items, name in lazy, admission, shapes, asked(name) if asked else None
        )
        for name, rs in required_source.items()
    }
    # Typed as plain data: views are read-only Mappings, and composers only read observed state.
    observed: dict[str, Any]
    if admission is None:
        observed = {k: StructView(r.resource) for k, r in req.observed.resources.items()}
    else:
        observed = {}
        for k, r in req.observed.resources.items():
            shape = _read_shape(admission, shapes, identity(r.resource))
            observed[k] = checked_view(r.resource, shape, ("observed resource", repr(k), None))
    return Inputs(
        composite=composite,
        observed=observed,
        required=required,
        context=struct_to_dict(req.context) if req.HasField("context") else {},
    )


def _read_required(
    name: str,
    items: Any,
    lazy: bool,
    admission: Admission | None,
    shapes: dict[tuple[str, str], Shape],
    asked: tuple[str, str] | None,
) -> list[Any]:
    """One requirement's items: views when ``lazy``, else plain data (checked whole first)."""
    out: list[Any] = []
    for i, r in enumerate(items):
        resource = r.resource
        kind = required_kind(resource, name, i, asked, admission)
        if admission is None:
            out.append(StructView(resource) if lazy else struct_to_dict(resource))
            continue
        shape = _read_shape(admission, shapes, kind)
        where = ("required resource", name, i)
        if lazy:
            out.append(checked_view(resource, shape, where))
        else:
            check_struct(resource, shape.schema, where)
            out.append(struct_to_dict(resource))
    return out


def required_kind(
    resource: struct_pb2.Struct,
    name: str,
    index: int,
    asked: tuple[str, str] | None,
    admission: Admission | None = None,
) -> tuple[str, str]:
    """The (apiVersion, kind) required item ``name[index]`` is read as: the kind its
    requirement asked for, in the item's own version when that one is served. Crossplane
    fetches exactly that kind, so an item of another kind or of none was not fetched by it
    (a hand-written input, a bug): read against its own claim, or an empty schema, a string
    where an object belongs would reach a composer unchecked. Raises MalformedRequestError."""
    api_version, kind = identity(resource)
    where = f"required resource {name}[{index}]{_named(resource)} is malformed"
    wanted = f"the requirement asked for {_qualified(*asked)}" if asked else ""
    if not api_version or not kind:
        missing = " and ".join(k for k, v in (("apiVersion", api_version), ("kind", kind)) if not v)
        why = f"{where}: it has no {missing}"
        raise MalformedRequestError(f"{why}; {wanted}" if asked else why)
    if asked is None:
        return api_version, kind
    if (api_version.rpartition("/")[0], kind) != (asked[0].rpartition("/")[0], asked[1]):
        raise MalformedRequestError(f"{where}: it is {_qualified(api_version, kind)}, but {wanted}")
    if admission is not None and not admission.knows(api_version, kind):
        return asked
    return api_version, kind


def _qualified(api_version: str, kind: str) -> str:
    group = api_version.rpartition("/")[0]
    return f"{kind}.{group}" if group else kind


def _named(resource: struct_pb2.Struct) -> str:
    name = name_of(resource)
    return f' ("{name}")' if name else ""


def _read_shape(
    admission: Admission, shapes: dict[tuple[str, str], Shape], key: tuple[str, str]
) -> Shape:
    """What a resource of ``key`` (apiVersion, kind) is read against (looked up once a call)."""
    shape = shapes.get(key)
    if shape is None:
        shape = shapes[key] = shape_of(admission.read_schema(*key))
    return shape


def write_response(req: fnv1.RunFunctionRequest, result: Result) -> fnv1.RunFunctionResponse:
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
    if result.ready != "Unspecified":  # else an earlier step's readiness stands
        rsp.desired.composite.ready = _READY[result.ready]
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


def read_response(rsp: fnv1.RunFunctionResponse) -> Result:
    """A response as the Result it was written from (``write_response`` undone, values as
    ``structs.plain`` gives them); Fatal results become one ``fatal`` message."""
    fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    if fatal:
        return Result.failed("; ".join(fatal))
    return Result(
        resources={
            k: Desired(struct_to_dict(r.resource), _READY_NAME[r.ready])
            for k, r in rsp.desired.resources.items()
        },
        status=struct_to_dict(rsp.desired.composite.resource).get("status") or {},
        conditions=[
            Condition(c.type, _STATUS_NAME[c.status], c.reason, c.message) for c in rsp.conditions
        ],
        events=[Event(_SEVERITY_NAME[r.severity], r.message, r.reason) for r in rsp.results],
        requirements={
            name: read_requirement(selector)
            for name, selector in rsp.requirements.resources.items()
        },
        ready=_READY_NAME[rsp.desired.composite.ready],
    )


def read_requirement(selector: fnv1.ResourceSelector) -> Requirement:
    """A requirement as ``write_response`` sends it: "every object of the kind" is an empty
    label selector, so it reads back with empty ``match_labels`` (``Requirement.canonical``)."""
    match = selector.WhichOneof("match")
    return Requirement(
        api_version=selector.api_version,
        kind=selector.kind,
        match_name=selector.match_name if match == "match_name" else None,
        match_labels=dict(selector.match_labels.labels) if match != "match_name" else None,
        namespace=selector.namespace or None,
    )


def fatal_response(req: fnv1.RunFunctionRequest, message: str) -> fnv1.RunFunctionResponse:
    rsp = _base_response(req)
    rsp.results.append(fnv1.Result(severity=fnv1.SEVERITY_FATAL, message=message))
    return rsp


def _base_response(req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
    # Earlier pipeline steps' desired state is carried forward, as Crossplane expects.
    return fnv1.RunFunctionResponse(
        meta=_response_meta(req.meta.tag), desired=req.desired, context=req.context
    )


def _response_meta(tag: str) -> fnv1.ResponseMeta:
    return fnv1.ResponseMeta(tag=tag, ttl=duration_pb2.Duration(seconds=RESPONSE_TTL_SECONDS))
