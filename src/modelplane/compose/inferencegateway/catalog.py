"""What ``GET /v1/models`` lists at a gateway with ``spec.auth``: each caller only the models it
may use (docs/design/shared-front-door.md, "Per-caller model lists").

Envoy AI Gateway v1.1.0 answers ``/v1/models`` and ``/anthropic/v1/models`` from its ext_proc
filter with every model the gateway routes, to every caller (``internal/extproc/
models_processor.go``). The front listener's Lua answers both paths first, from tables written
here: Envoy Gateway v1.8.1 runs Lua after api_key_auth, so the caller's identity is set, and
before ext_proc (``internal/xds/translator/httpfilters.go`` ``newOrderedHTTPFilter``). The bodies
are the AI Gateway's own shapes, field for field.

The models are the ModelServices the gateway serves (``spec.serviceSelector``, listed across
namespaces), each ``<namespace>/<name>`` as its model route matches it. A service is open to
every caller the gateway authenticates unless its ``spec.callers`` names some: then to those
named and those whose caller Secret its selector matches, as its authorization allows them
(``limits.selected_callers``). A service being deleted is left out.

Evidence, not absence: until the services are listed, nothing is decided (the policy composed
before is kept).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from modelplane.apis import API_VERSION
from modelplane.compose.inferencegateway.callers import CALLER_HEADER
from modelplane.compose.inferencegateway.limits import selected_callers
from modelplane.composer import Requirement
from modelplane.kube import objects
from modelplane.kube.objects import Obj

SERVICES = "model-services"
"""The requirement listing the ModelServices the gateway serves."""
OPENAI_PATH = "/v1/models"
ANTHROPIC_PATH = "/anthropic/v1/models"
"""The AI Gateway's two model-list paths (v1.1.0 ``cmd/extproc/mainlib/main.go``, default
endpoint prefixes); it strips a query before matching, and so does the script."""


def requirement(spec: Mapping[str, Any]) -> Requirement:
    """Every ModelService the gateway's ``serviceSelector`` matches, in every namespace."""
    labels = objects.mapping(spec, "serviceSelector", "matchLabels")
    return Requirement(
        API_VERSION, "ModelService", match_labels={str(k): str(v) for k, v in labels.items()}
    )


def models_by_caller(
    services: Iterable[Obj], identities: Mapping[str, Mapping[str, str]]
) -> dict[str, list[Obj]]:
    """Each caller's models, sorted by id: ``id``, ``owned_by`` (the namespace, the team) and
    ``created`` (the service's creation, in Unix seconds)."""
    out: dict[str, list[Obj]] = {caller: [] for caller in identities}
    for service in sorted(services, key=_model_id):
        if objects.metadata(service).get("deletionTimestamp"):
            continue
        allowed = selected_callers(objects.spec(service), identities)
        model = {
            "id": _model_id(service),
            "owned_by": objects.namespace(service),
            "created": _created(service),
        }
        for caller in identities if allowed is None else allowed:
            if caller in out:
                out[caller].append(model)
    return out


def _model_id(service: Obj) -> str:
    return f"{objects.namespace(service)}/{objects.name(service)}"


def _created(service: Obj) -> int:
    return int(objects.seconds(objects.metadata(service).get("creationTimestamp")) or 0)


def openai_list(models: list[Obj]) -> str:
    """``openai.ModelList`` as Go marshals it: fields in declaration order."""
    data = [
        {"id": m["id"], "created": m["created"], "object": "model", "owned_by": m["owned_by"]}
        for m in models
    ]
    return _json({"data": data, "object": "list"})


def anthropic_list(models: list[Obj]) -> str:
    """``anthropic.ModelList`` as Go marshals it (first and last id omitted when empty)."""
    data = [
        {
            "id": m["id"],
            "type": "model",
            "display_name": m["id"],
            "created_at": objects.timestamp(m["created"]),
        }
        for m in models
    ]
    out: Obj = {"data": data}
    if data:
        out["first_id"] = data[0]["id"]
    out["has_more"] = False
    if data:
        out["last_id"] = data[-1]["id"]
    return _json(out)


def _json(value: Obj) -> str:
    return json.dumps(value, separators=(",", ":"))


def script(catalog: Mapping[str, list[Obj]]) -> str:
    """The Lua answering both paths for the caller the api_key_auth filter identified; any
    other identity (none reaches here: the filter refused it) is answered an empty list.
    Bodies are shared between callers who may use the same models."""
    bodies: dict[tuple[str, str], int] = {}
    access: dict[str, int] = {}
    empty = (openai_list([]), anthropic_list([]))
    for caller in sorted(catalog):
        pair = (openai_list(catalog[caller]), anthropic_list(catalog[caller]))
        access[caller] = bodies.setdefault(pair, len(bodies) + 1)
    lists = "".join(f"  {{{_lua(a)}, {_lua(b)}}},\n" for a, b in bodies)
    table = "".join(f'  ["{caller}"] = {index},\n' for caller, index in access.items())
    return (
        "-- Written by Modelplane from the ModelServices this gateway serves: GET /v1/models\n"
        "-- (and /anthropic/v1/models) lists each caller only the models it may use.\n"
        f"local LISTS = {{\n{lists}}}\n"
        f"local ACCESS = {{\n{table}}}\n"
        f"local EMPTY = {{{_lua(empty[0])}, {_lua(empty[1])}}}\n"
        f'local PATHS = {{["{OPENAI_PATH}"] = 1, ["{ANTHROPIC_PATH}"] = 2}}\n'
        "function envoy_on_request(handle)\n"
        "  local headers = handle:headers()\n"
        '  local path = headers:get(":path") or ""\n'
        '  local which = PATHS[string.match(path, "^[^?]*")]\n'
        "  if which == nil then\n"
        "    return\n"
        "  end\n"
        f'  local caller = headers:get("{CALLER_HEADER}")\n'
        "  local lists = EMPTY\n"
        "  if caller ~= nil and ACCESS[caller] ~= nil then\n"
        "    lists = LISTS[ACCESS[caller]]\n"
        "  end\n"
        '  handle:respond({[":status"] = "200", ["content-type"] = "application/json"},'
        " lists[which])\n"
        "end\n"
    )


def _lua(text: str) -> str:
    """A Lua long string holding ``text`` as it is: nothing in it is an escape, and its level
    is one no ``]=...=]`` in the text closes."""
    level = "="
    while f"]{level}]" in text:
        level += "="
    return f"[{level}[{text}]{level}]"
