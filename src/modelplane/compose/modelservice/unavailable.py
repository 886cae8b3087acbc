"""The 503 of a service with no ready lane, or every lane parked, by model name and by path
(docs/design/shared-front-door.md, "Step 2 as built"; docs/design/autoscaling.md, "Scale to
zero behind the front door").

An AIGatewayRoute rule takes no filter: Envoy AI Gateway v1.1.0 gives the HTTPRoute it generates
its own filters only (``internal/controller/ai_gateway_route.go``, ``newHTTPRoute``), and a rule
with no weighted destination is answered 500 by Envoy Gateway v1.8.1
(``internal/gatewayapi/route.go``). So the rule gets one more lane, the **sentinel lane**:

- ``sentinel_backend``: an AIServiceBackend over the gateway's Backend to its own cluster's fleet
  listener (the one external lanes take), with the service's OpenAI prefix;
- ``sentinel_ref``: the rule's backendRef to it, weight 1, setting ``x-modelplane-unavailable``
  and removing both steering headers;
- ``sentinel_route``: an HTTPRoute on that fleet listener, beside the gateway's
  ``unavailable/<gateway>`` filter (an ExtensionRef resolves in the route's own namespace),
  matching the service prefix and that header, answered by the filter: the path form's 503 and
  body. Its JSON passes the AI Gateway unchanged (``convertErrorOpenAIToOpenAIError`` rewrites
  only a non-JSON error body, ``internal/translator/openai_openai.go``).

The path route takes the same sentinel route (``path_sentinel_ref``: its own backendRef to the
same Backend, with the same header set and the steering headers removed) instead of answering
on the front gateway: Envoy counts a direct response per listener only, so only a request sent
upstream is counted per route, in the rule's cluster, which is what wakes a deployment asleep
(``scaletozero.py``, tests/conformance/test_scale_to_zero_path.py).

tests/conformance/test_envoy_ai_gateway_unavailable.py cites each behaviour relied on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.compose.modelservice import models, routes
from modelplane.compose.shared.frontdoor import (
    ENDPOINT_HEADER,
    ENVOY_GROUP,
    FLEET_LISTENER,
    GATEWAY_API_VERSION,
    POOL_HEADER,
    ClusterGateway,
    cluster_backend_name,
)
from modelplane.compose.shared.remote import managed_metadata
from modelplane.kube import objects
from modelplane.kube.names import unique_label
from modelplane.kube.objects import Obj

SENTINEL_HEADER = "x-modelplane-unavailable"
"""Set only by the sentinel lane: the fleet listener is reached only through a front gateway's
Backend (mutual TLS), and a caller sending it on the path form answers its own request 503."""
SENTINEL_VALUE = "true"
BACKEND = "unavailable-backend"
"""Composition resource name prefix of the sentinel AIServiceBackend:
``unavailable-backend/<gateway>``."""
ROUTE = "unavailable-route"
"""Prefix of the sentinel HTTPRoute: ``unavailable-route/<gateway>``."""


def sentinel_backend_name(gateway: str, namespace: str, service: str) -> str:
    return unique_label(gateway, namespace, service, BACKEND)


def sentinel_route_name(gateway: str, namespace: str, service: str) -> str:
    return unique_label(gateway, namespace, service, ROUTE)


def sentinel_backend(gateway: str, host: ClusterGateway, namespace: str, service: str) -> Obj:
    """The AIServiceBackend the sentinel lane takes: to the gateway's own cluster."""
    backend = models.model_backend(gateway, host, namespace, service, host.cluster)
    backend["metadata"]["name"] = sentinel_backend_name(gateway, namespace, service)
    return backend


def sentinel_ref(gateway: str, namespace: str, service: str) -> Obj:
    """The model rule's backendRef answering 503: the only weighted one while it is there."""
    return {
        "name": sentinel_backend_name(gateway, namespace, service),
        "weight": 1,
        "headerMutation": {
            "set": [{"name": SENTINEL_HEADER, "value": SENTINEL_VALUE}],
            "remove": [POOL_HEADER, ENDPOINT_HEADER],
        },
    }


def path_sentinel_ref(gateway: str, host: ClusterGateway) -> Obj:
    """The path route's backendRef answering 503: to the gateway's own cluster's fleet listener,
    the path kept (the sentinel route matches the service prefix), the sentinel header set and
    both steering headers removed, so a client can neither skip the 503 nor steer past it."""
    return {
        "group": ENVOY_GROUP,
        "kind": "Backend",
        "name": cluster_backend_name(gateway, host.cluster),
        "weight": 1,
        "filters": [
            routes.header_filter({SENTINEL_HEADER: SENTINEL_VALUE}, [POOL_HEADER, ENDPOINT_HEADER])
        ],
    }


def sets_sentinel(ref: Mapping[str, Any]) -> bool:
    """Whether a path route's backendRef is the sentinel lane."""
    return any(
        header.get("name") == SENTINEL_HEADER
        for f in ref.get("filters") or ()
        for header in objects.dig(f, "requestHeaderModifier", "set") or ()
    )


def sentinel_route(
    gateway: str, host: ClusterGateway, namespace: str, service: str, unavailable: str
) -> Obj:
    """On the gateway's own cluster's fleet listener: the service's requests carrying the
    sentinel answered by the ``unavailable`` filter (its name as composed)."""
    name = sentinel_route_name(gateway, namespace, service)
    match = routes.prefix_match(namespace, service, {SENTINEL_HEADER: SENTINEL_VALUE})
    return {
        "apiVersion": GATEWAY_API_VERSION,
        "kind": "HTTPRoute",
        "metadata": managed_metadata(name, host.namespace),
        "spec": {
            "parentRefs": [routes.parent_ref(host.name, host.namespace, FLEET_LISTENER)],
            "rules": [{"matches": [match], "filters": [routes.extension_filter(unavailable)]}],
        },
    }
