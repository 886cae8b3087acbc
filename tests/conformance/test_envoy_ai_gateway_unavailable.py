"""Envoy AI Gateway v1.1.0 (envoyproxy/ai-gateway, tag v1.1.0, c217da8a5395) and Envoy Gateway
v1.8.1 (envoyproxy/gateway, tag v1.8.1, 097ab899b9d0): why a ModelService's model route answers
503, not 500, while no lane is ready or every lane is parked, through the sentinel lane
(``modelservice/unavailable.py``; docs/design/shared-front-door.md, "Step 2 as built").

Behaviours relied on, each read at those tags:

- AI Gateway ``api/v1beta1/ai_gateway_route.go`` (``AIGatewayRouteRule``: name, backendRefs,
  matches, timeouts, streamIdleTimeout, modelsOwnedBy, modelsCreatedAt) and
  ``internal/controller/ai_gateway_route.go`` (``newHTTPRoute``: every generated rule's
  ``Filters`` is the AI Gateway's own host-rewrite filter): a model rule cannot carry the path
  route's 503 filter.
- Envoy Gateway ``internal/gatewayapi/route.go`` (``processHTTPRouteRules``): a weight-0
  backendRef is left out of the rule's destinations, and a rule with no valid destination is
  answered 500 unless a filter already set a direct response. So a rule with no lane, or only
  parked ones, answers 500; one weighted backendRef avoids it.
- AI Gateway ``internal/controller/gateway.go`` (``mergeHeaderMutations``) and
  ``internal/extproc/processor_impl.go``: a backendRef's ``headerMutation`` is applied to the
  request sent to it (``OVERWRITE_IF_EXISTS_OR_ADD``; removals removed): the sentinel lane sets
  the sentinel header and drops both steering headers, whatever the client sent.
- AI Gateway ``internal/translator/openai_openai.go`` (an AIServiceBackend's OpenAI ``prefix``
  joined with ``chat/completions``): the sentinel lane's request arrives at the fleet listener
  under the service prefix.
- Envoy Gateway ``internal/gatewayapi/filters.go`` (``processExtensionRefHTTPFilter``: an
  HTTPRouteFilter is looked up in the route's own namespace) and ``route.go`` (a rule whose
  filter set a direct response is answered by it): the sentinel route lives beside the
  ``unavailable`` filter and has no backend.
- AI Gateway ``internal/extproc/processor_impl.go`` (a non-2xx upstream status goes through the
  translator's ``ResponseError``) and ``internal/translator/openai_openai.go``
  (``convertErrorOpenAIToOpenAIError`` rewrites only a body whose content type is not JSON):
  the filter's ``application/json`` 503 reaches the caller with its status and body unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from modelplane.compose.modelservice.composer import compose_service
from modelplane.compose.modelservice.unavailable import SENTINEL_HEADER, SENTINEL_VALUE
from modelplane.compose.shared.frontdoor import ENDPOINT_HEADER, FLEET_LISTENER, POOL_HEADER
from tests.compose.modelservice.kit import manifests, replica_endpoint, service, service_inputs
from tests.compose.modelservice.test_models import STABLE, overflow
from tests.conformance.fleets import NAMES, rendered_fleet

Obj = dict[str, Any]
CRD = (
    Path(__file__).resolve().parents[1]
    / "upstream"
    / "crds"
    / "aigateway.envoyproxy.io_aigatewayroutes.yaml"
)


def idle() -> dict[str, Obj]:
    return manifests(compose_service(overflow(ready=False)))


def test_an_ai_gateway_route_rule_takes_no_filter() -> None:
    crd = yaml.safe_load(CRD.read_text())
    [version] = [v for v in crd["spec"]["versions"] if v["name"] == "v1beta1"]
    rule = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["rules"]
    assert "filters" not in rule["items"]["properties"]
    assert "backendRefs" in rule["items"]["properties"]


def test_the_rule_keeps_one_weighted_destination_with_every_lane_parked() -> None:
    ms = service("qwen", "ml", (0, STABLE))
    parked = service_inputs(ms, [[replica_endpoint("stable-east", "east", labels=STABLE)]])
    [rule] = manifests(compose_service(parked))["models/main"]["spec"]["rules"]
    assert [r["weight"] for r in rule["backendRefs"] if r["weight"] > 0] == [1]


def test_the_sentinel_lane_sets_its_header_and_drops_the_steering_ones() -> None:
    [rule] = idle()["models/main"]["spec"]["rules"]
    [ref] = rule["backendRefs"]
    assert ref["headerMutation"]["set"] == [{"name": SENTINEL_HEADER, "value": SENTINEL_VALUE}]
    assert set(ref["headerMutation"]["remove"]) == {POOL_HEADER, ENDPOINT_HEADER}


def test_the_sentinel_request_arrives_under_the_service_prefix() -> None:
    composed = idle()
    prefix = composed["unavailable-backend/main"]["spec"]["schema"]["prefix"]
    [match] = composed["unavailable-route/main"]["spec"]["rules"][0]["matches"]
    assert prefix.startswith(match["path"]["value"])


def test_the_sentinel_route_is_beside_the_filter_it_names_and_has_no_backend() -> None:
    composed = idle()
    route, answer = composed["unavailable-route/main"], composed["unavailable/main"]
    [rule] = route["spec"]["rules"]
    [f] = rule["filters"]
    assert f["extensionRef"]["name"] == answer["metadata"]["name"]
    assert route["metadata"]["namespace"] == answer["metadata"]["namespace"]
    assert "backendRefs" not in rule


def test_the_503_body_is_json_so_the_ai_gateway_passes_it_unchanged() -> None:
    response = idle()["unavailable/main"]["spec"]["directResponse"]
    assert response["statusCode"] == 503
    assert response["contentType"] == "application/json"


def test_the_sentinel_route_attaches_to_a_fleet_listener_open_to_every_namespace() -> None:
    """The route is in the gateway's namespace, not a tenant's: every cluster's fleet listener
    must admit it (and hostnames: none, the AI Gateway rewrites the Host to the Backend's)."""
    route = idle()["unavailable-route/main"]
    [parent] = route["spec"]["parentRefs"]
    assert parent["sectionName"] == FLEET_LISTENER and "hostnames" not in route["spec"]
    listeners = [
        listener
        for gateway in rendered_fleet(NAMES[0]).remote("Gateway")
        for listener in gateway.manifest["spec"]["listeners"]
        if listener["name"] == FLEET_LISTENER
    ]
    assert listeners
    assert all(lst["allowedRoutes"] == {"namespaces": {"from": "All"}} for lst in listeners)
