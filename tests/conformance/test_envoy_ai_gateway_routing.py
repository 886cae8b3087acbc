"""Envoy AI Gateway v1.1.0 (envoyproxy/ai-gateway, tag v1.1.0, c217da8a5395): what it does with a
ModelService's AIGatewayRoute and AIServiceBackends, the model-name routing of the front door
(docs/design/shared-front-door.md, "Step 2 as built"), checked over every fleet's composed
objects.

Behaviours relied on, each read at that tag:

- ``api/v1beta1/ai_gateway_route.go``: a rule's backendRef is an AIServiceBackend unless it names
  an InferencePool (``AIGatewayRouteRuleBackendRef``, CEL "only InferencePool from
  inference.networking.k8s.io group is supported"); ``modelNameOverride`` and ``headerMutation``
  are per backendRef; a rule with no ``timeouts`` gets 60 s (``GetTimeoutsOrDefault``); at most 15
  rules per route; the route's generated HTTPRoute has the route's own name.
- ``api/v1beta1/ai_service_backend.go``: an AIServiceBackend's ``backendRef`` must be an Envoy
  Gateway ``Backend``.
- ``internal/controller/ai_gateway_route.go`` ``newHTTPRoute``: each backendRef becomes the
  AIServiceBackend's own ``backendRef`` with the rule's weight; every rule's match gets the root
  path prefix; a ``route-not-found`` catch-all rule is appended.
- ``internal/controller/gateway.go`` ``reconcileFilterConfigSecret``: one filter configuration
  per Gateway from every AIGatewayRoute attached to it; each rule's ``x-ai-eg-model`` header match
  of type Exact declares a model (``/v1/models``), scoped to the route's hostnames; each
  backendRef is its own filter backend (``internalapi.PerRouteRuleRefBackendName``: route, rule,
  ref index), with its ``modelNameOverride`` and the merge of its ``headerMutation`` with the
  AIServiceBackend's (``mergeHeaderMutations``).
- ``internal/extproc/processor_impl.go``: the router filter sets ``x-ai-eg-model`` from the
  body's ``model`` with ``OVERWRITE_IF_EXISTS_OR_ADD`` (a client's header never picks the rule);
  the chosen backend's header mutation is applied with
  ``OVERWRITE_IF_EXISTS_OR_ADD`` (a client's header is replaced); ``modelNameOverride`` replaces
  the body's model (``internal/translator/openai_openai.go``), and the path becomes
  ``path.Join("/", prefix, "chat/completions")``.
- ``internal/extensionserver/post_translate_modify.go``: the AI Gateway's ext_proc filter is
  added disabled and enabled only on routes whose HTTPRoute carries the ``ai-gateway-generated``
  annotation (``isRouteGeneratedByAIGateway``), so the path routes are untouched by it.
- ``internal/extproc/models_processor.go``: ``GET /v1/models`` answers with the models declared
  for the request's host.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Iterator
from typing import Any

import pytest

from modelplane.compose.shared.frontdoor import service_prefix
from tests.conformance.fleets import NAMES, Fleet, _objects, example, render, rendered_fleet

Obj = dict[str, Any]
MODEL_HEADER = "x-ai-eg-model"
GENERATED = "gateway.envoyproxy.io/ai-gateway-generated"


NAMED = "named/service-overflow"
"""The overflow example with ``spec.modelName`` on its service: replicas and a provider named."""
FLEETS = (*NAMES, NAMED)


@functools.cache
def _fleet(name: str) -> Fleet:
    if name != NAMED:
        return rendered_fleet(name)
    objs = example("service-overflow")
    [service] = [o for o in objs if o["kind"] == "ModelService"]
    service["spec"]["modelName"] = "moonshotai/Kimi-K2-Instruct"
    return Fleet(name, tuple(objs), _objects(render(objs)))


def _model_routes(name: str) -> list[Any]:
    return _fleet(name).remote("AIGatewayRoute")


def _where(remote: Any) -> tuple[str, str]:
    return remote.cluster, remote.manifest["metadata"]["namespace"]


def _by_name(name: str, kind: str) -> dict[tuple[str, str, str], Obj]:
    return {
        (*_where(r), r.manifest["metadata"]["name"]): r.manifest for r in _fleet(name).remote(kind)
    }


def _refs(route: Obj) -> Iterator[Obj]:
    for rule in route["spec"]["rules"]:
        yield from rule.get("backendRefs") or ()


def _models(route: Obj) -> list[str]:
    return [
        h["value"]
        for rule in route["spec"]["rules"]
        for match in rule.get("matches") or ()
        for h in match.get("headers") or ()
        if h["name"] == MODEL_HEADER and h.get("type", "Exact") == "Exact"
    ]


def _service(route: Obj) -> str:
    [model] = _models(route)
    return model


def _path_route(name: str, remote: Any) -> Obj:
    """The front HTTPRoute of the same service on the same gateway listener and hostname."""
    namespace, service = _service(remote.manifest).split("/", 1)
    prefix = service_prefix(namespace, service)
    [route] = [
        r.manifest
        for r in _fleet(name).remote("HTTPRoute")
        if _where(r) == _where(remote)
        and r.manifest["spec"]["parentRefs"] == remote.manifest["spec"]["parentRefs"]
        and r.manifest["spec"].get("hostnames") == remote.manifest["spec"]["hostnames"]
        and any(
            m.get("path", {}).get("value") == prefix
            for rule in r.manifest["spec"]["rules"]
            for m in rule.get("matches") or ()
        )
    ]
    return route


@pytest.mark.parametrize("name", FLEETS)
def test_every_model_route_names_ai_service_backends_over_backends_composed_beside_it(
    name: str,
) -> None:
    backends = _by_name(name, "AIServiceBackend")
    envoy = _by_name(name, "Backend")
    missing = []
    for r in _model_routes(name):
        for ref in _refs(r.manifest):
            assert "group" not in ref and "kind" not in ref  # an AIServiceBackend
            backend = backends.get((*_where(r), ref["name"]))
            if backend is None:
                missing.append(ref["name"])
                continue
            target = backend["spec"]["backendRef"]
            assert (target["group"], target["kind"]) == ("gateway.envoyproxy.io", "Backend")
            if (*_where(r), target["name"]) not in envoy:
                missing.append(target["name"])
    assert missing == []


@pytest.mark.parametrize("name", FLEETS)
def test_a_model_routes_lanes_are_its_path_routes_backends_weights_and_headers(name: str) -> None:
    backends = _by_name(name, "AIServiceBackend")
    for r in _model_routes(name):
        lanes = [
            (
                backends[(*_where(r), ref["name"])]["spec"]["backendRef"]["name"],
                ref["weight"],
                ref["headerMutation"],
            )
            for ref in _refs(r.manifest)
        ]
        path = [
            (ref["name"], ref["weight"], ref["filters"][0]["requestHeaderModifier"])
            for ref in _refs(_path_route(name, r))
        ]
        assert lanes == path, r.manifest["metadata"]["name"]


@pytest.mark.parametrize("name", FLEETS)
def test_a_model_route_reaches_the_clusters_on_the_path_forms_prefix(name: str) -> None:
    backends = _by_name(name, "AIServiceBackend")
    for r in _model_routes(name):
        prefix = service_prefix(*_service(r.manifest).split("/", 1))
        for ref in _refs(r.manifest):
            schema = backends[(*_where(r), ref["name"])]["spec"]["schema"]
            assert schema["name"] == "OpenAI"
            path = posixpath.join("/", schema["prefix"], "chat/completions")
            assert path == f"{prefix}v1/chat/completions"


@pytest.mark.parametrize("name", FLEETS)
def test_the_model_is_rewritten_to_the_services_model_name_and_only_then(name: str) -> None:
    served = {
        f"{ms['metadata']['namespace']}/{ms['metadata']['name']}": ms["spec"].get("modelName")
        for ms in _fleet(name).composites("ModelService")
    }
    for r in _model_routes(name):
        want = served[_service(r.manifest)]
        assert {ref.get("modelNameOverride") for ref in _refs(r.manifest)} <= {want}


@pytest.mark.parametrize("name", FLEETS)
def test_models_lists_every_service_a_gateway_routes_by_path(name: str) -> None:
    """One filter configuration per Gateway from all its AIGatewayRoutes, models by host."""
    listed: dict[tuple[str, str, str], set[str]] = {}
    for r in _model_routes(name):
        for host in r.manifest["spec"]["hostnames"]:
            listed.setdefault((*_where(r), host), set()).update(_models(r.manifest))
    routed: dict[tuple[str, str, str], set[str]] = {}
    for r in _fleet(name).remote("HTTPRoute"):
        for parent in r.manifest["spec"]["parentRefs"]:
            if parent.get("sectionName") != "https":
                continue
            for host in r.manifest["spec"].get("hostnames") or ():
                prefixes = {
                    m["path"]["value"]
                    for rule in r.manifest["spec"]["rules"]
                    for m in rule.get("matches") or ()
                }
                routed.setdefault((*_where(r), host), set()).update(p.strip("/") for p in prefixes)
    assert listed == routed


@pytest.mark.parametrize("name", FLEETS)
def test_every_model_rule_sets_its_timeout_and_fits_a_route(name: str) -> None:
    """Unset, a rule times out at 60 s, which cuts token streams."""
    for r in _model_routes(name):
        rules = r.manifest["spec"]["rules"]
        assert len(rules) <= 15
        assert all(rule["timeouts"]["request"] for rule in rules)


@pytest.mark.parametrize("name", FLEETS)
def test_no_generated_http_route_takes_a_composed_routes_name(name: str) -> None:
    """The AI Gateway generates an HTTPRoute named as the AIGatewayRoute, beside it."""
    routes = set(_by_name(name, "HTTPRoute"))
    assert not routes & set(_by_name(name, "AIGatewayRoute"))


@pytest.mark.parametrize("name", FLEETS)
def test_no_path_route_is_marked_as_the_ai_gateways_own(name: str) -> None:
    """The ext_proc filter runs only on routes carrying that annotation: the path form is not
    parsed, rewritten or answered by it."""
    marked = [
        r.manifest["metadata"]["name"]
        for r in _fleet(name).remote("HTTPRoute")
        if GENERATED in (r.manifest["metadata"].get("annotations") or {})
    ]
    assert marked == []


def test_the_fleets_hold_model_routes_with_every_kind_of_lane() -> None:
    """The rules above are not vacuous: some fleet routes replicas and an external endpoint by
    model name."""
    headers = {
        h["name"]
        for name in FLEETS
        for r in _model_routes(name)
        for ref in _refs(r.manifest)
        for h in ref["headerMutation"]["set"]
    }
    assert headers == {"x-modelplane-pool", "x-modelplane-endpoint"}


def test_the_named_fleet_rewrites_the_model_on_every_lane() -> None:
    """The override rule above is not vacuous."""
    [route] = _model_routes(NAMED)
    overrides = [ref.get("modelNameOverride") for ref in _refs(route.manifest)]
    assert overrides and set(overrides) == {"moonshotai/Kimi-K2-Instruct"}
