"""A ModelService's routes, hop by hop (docs/design/routing.md):

1. ``front_route`` on each gateway's host cluster: ``https://<hostname>/<ns>/<service>/`` to one
   backendRef per lane, each an InferenceGateway ``Backend`` dialling a cluster's fleet listener
   over mutual TLS; the path is kept. With nothing ready, or every lane parked at weight 0, its
   only weighted lane is the sentinel lane (``unavailable.path_sentinel_ref``), answered 503 by
   ``unavailable_filter`` on the gateway's own cluster.
2. ``fleet_route`` on each cluster holding ready replicas, on its inference Gateway's fleet
   listener: the service prefix stripped (the engine sees ``/v1/...``), one rule per replica's
   InferencePool, chosen by the pool header the front route set.
3. ``egress_route`` on each gateway's host cluster, for each external endpoint: the service
   prefix rewritten to the endpoint's path, its host and credential set, out to its ``Backend``.

Every rewrite is the Gateway API's core, rule-level one; per-backendRef filters only set or
remove the two steering headers.
"""

from __future__ import annotations

import json

from modelplane.compose.modelservice.plan import Lane, Plan
from modelplane.compose.shared.frontdoor import (
    ENDPOINT_HEADER,
    ENVOY_API_VERSION,
    ENVOY_GROUP,
    FLEET_LISTENER,
    FRONT_LISTENER,
    GATEWAY_API_VERSION,
    GATEWAY_GROUP,
    POOL_GROUP,
    POOL_HEADER,
    ClusterGateway,
    EndpointURL,
    cluster_backend_name,
    credential_name,
    egress_route_name,
    external_backend_name,
    fleet_route_name,
    front_gateway_name,
    front_route_name,
    service_prefix,
    unavailable_filter_name,
)
from modelplane.compose.shared.remote import managed_metadata
from modelplane.kube.objects import Obj

NO_TIMEOUT = "0s"
"""Gateways default to a 15 s request timeout, which cuts token streams."""
UNAVAILABLE_RETRY_AFTER = "30"
"""Seconds a caller is told to wait while nothing behind a service is ready. A replica takes
that long at the least to come (placed, composed, Ready: 30-90 s on the e2e tier's control
plane before any image pull or engine start), so retrying sooner only adds load."""


def parent_ref(gateway: str, namespace: str, section: str) -> Obj:
    return {
        "group": GATEWAY_GROUP,
        "kind": "Gateway",
        "name": gateway,
        "namespace": namespace,
        "sectionName": section,
    }


def prefix_match(namespace: str, service: str, headers: dict[str, str] | None = None) -> Obj:
    """The service's prefix, and each of ``headers`` exactly."""
    match: Obj = {"path": {"type": "PathPrefix", "value": service_prefix(namespace, service)}}
    if headers:
        match["headers"] = [{"type": "Exact", "name": k, "value": v} for k, v in headers.items()]
    return match


def header_filter(set_: dict[str, str] | None = None, remove: list[str] | None = None) -> Obj:
    modifier: Obj = {}
    if set_:
        modifier["set"] = [{"name": k, "value": v} for k, v in set_.items()]
    if remove:
        modifier["remove"] = list(remove)
    return {"type": "RequestHeaderModifier", "requestHeaderModifier": modifier}


def extension_filter(name: str) -> Obj:
    """The Envoy Gateway HTTPRouteFilter ``name`` as a route filter."""
    return {
        "type": "ExtensionRef",
        "extensionRef": {"group": ENVOY_GROUP, "kind": "HTTPRouteFilter", "name": name},
    }


def front_route(
    gateway: str,
    hostname: str,
    host: ClusterGateway,
    namespace: str,
    service: str,
    plan: Plan,
    timeout: str,
    kept: str | None = None,
    sentinel: Obj | None = None,
) -> Obj:
    """The service on one front gateway: every lane, and ``sentinel`` (the lane answering 503,
    ``unavailable.path_sentinel_ref``) after them while none is ready or every lane is parked.
    The 503 is sent upstream rather than answered here: Envoy counts a direct response per
    listener only, and the rule's cluster counter is what wakes a deployment asleep
    (tests/conformance/test_scale_to_zero_path.py). Envoy Gateway (v1.8.1,
    internal/gatewayapi/route.go) leaves a weight-0 backendRef out of the rule's destinations
    once resolved, and answers a rule with none left 500: the sentinel's weight keeps one, and
    parked lanes stay resolved beside it. ``kept``: the route's name as observed
    (``frontdoor.front_route_name``)."""
    refs = [_lane_ref(gateway, host, lane) for lane in plan.lanes]
    if sentinel is not None:
        refs.append(sentinel)
    rule: Obj = {"matches": [prefix_match(namespace, service)]}
    if refs:
        rule["backendRefs"] = refs
    rule["timeouts"] = {"request": timeout}
    name = front_route_name(gateway, namespace, service, kept)
    return {
        "apiVersion": GATEWAY_API_VERSION,
        "kind": "HTTPRoute",
        "metadata": managed_metadata(name, host.namespace),
        "spec": {
            "parentRefs": [parent_ref(front_gateway_name(gateway), host.namespace, FRONT_LISTENER)],
            "hostnames": [hostname],
            "rules": [rule],
        },
    }


def lane_target(host: ClusterGateway, lane: Lane) -> str:
    """The cluster whose fleet listener a lane is sent to: an external endpoint's egress route is
    on the gateway's own cluster, a replica's pool behind its cluster's."""
    return host.cluster if lane.external else lane.cluster


def _lane_ref(gateway: str, host: ClusterGateway, lane: Lane) -> Obj:
    """A lane's backendRef. An external endpoint is reached through the gateway's own cluster's
    fleet listener, where its egress route matches the endpoint header; a replica through its
    cluster's, where the fleet rule of its pool matches the pool header."""
    ref: Obj = {
        "group": ENVOY_GROUP,
        "kind": "Backend",
        "name": cluster_backend_name(gateway, lane_target(host, lane)),
        "weight": lane.weight,
    }
    # Each header is set (replacing whatever the client sent) or removed on every lane: a client
    # cannot steer its own request.
    if lane.external:
        ref["filters"] = [header_filter({ENDPOINT_HEADER: lane.endpoint}, [POOL_HEADER])]
    else:
        ref["filters"] = [header_filter({POOL_HEADER: lane.pool}, [ENDPOINT_HEADER])]
    return ref


def unavailable_filter(
    gateway: str,
    host: ClusterGateway,
    namespace: str,
    service: str,
    kept: str | None = None,
    waking: bool = False,
) -> Obj:
    """A 503 with an OpenAI-style error body and ``Retry-After``: the service exists, nothing
    behind it is ready, or (``waking``) its model is asleep and this request wakes it.
    ``kept``: its name as observed (``frontdoor.front_route_name``)."""
    message = (
        f"ModelService {namespace}/{service} is waking its model; "
        f"retry after {UNAVAILABLE_RETRY_AFTER} s"
        if waking
        else f"ModelService {namespace}/{service} has no ready endpoint; retry later"
    )
    body = {"error": {"code": 503, "message": message, "type": "service_unavailable"}}
    name = unavailable_filter_name(gateway, namespace, service, kept)
    return {
        "apiVersion": ENVOY_API_VERSION,
        "kind": "HTTPRouteFilter",
        "metadata": managed_metadata(name, host.namespace),
        "spec": {
            "directResponse": {
                "statusCode": 503,
                "contentType": "application/json",
                "body": {"type": "Inline", "inline": json.dumps(body, sort_keys=True)},
                "header": {"set": [{"name": "Retry-After", "value": UNAVAILABLE_RETRY_AFTER}]},
            }
        },
    }


def fleet_route(
    cluster: ClusterGateway, namespace: str, service: str, lanes: list[Lane], timeout: str
) -> Obj:
    """The service on one cluster's fleet listener: the prefix stripped, one rule per replica's
    pool, matching the pool header the front route set for it."""
    rules = [
        {
            "matches": [prefix_match(namespace, service, {POOL_HEADER: lane.pool})],
            "filters": [_rewrite("/")],
            "backendRefs": [{"group": POOL_GROUP, "kind": "InferencePool", "name": lane.pool}],
            "timeouts": {"request": timeout},
        }
        for lane in lanes
    ]
    return {
        "apiVersion": GATEWAY_API_VERSION,
        "kind": "HTTPRoute",
        "metadata": managed_metadata(fleet_route_name(service), namespace),
        "spec": {
            "parentRefs": [parent_ref(cluster.name, cluster.namespace, FLEET_LISTENER)],
            "rules": rules,
        },
    }


def egress_route(
    host: ClusterGateway,
    namespace: str,
    service: str,
    endpoint: str,
    url: EndpointURL,
    rewrite_path: str,
    credential: bool,
    timeout: str,
) -> Obj:
    """From a gateway's host cluster out to one external endpoint: the steering headers dropped,
    the prefix replaced by the endpoint's path, the Host set to the provider's, its credential
    injected."""
    rewrite = _rewrite(rewrite_path)
    if ":" not in url.host:  # a Host header cannot be an IPv6 literal without its port
        rewrite["urlRewrite"]["hostname"] = url.host
    filters = [header_filter(remove=[ENDPOINT_HEADER, POOL_HEADER]), rewrite]
    if credential:
        filters.append(extension_filter(credential_name(endpoint)))
    backend = {"group": ENVOY_GROUP, "kind": "Backend", "name": external_backend_name(endpoint)}
    return {
        "apiVersion": GATEWAY_API_VERSION,
        "kind": "HTTPRoute",
        "metadata": managed_metadata(egress_route_name(service, endpoint), namespace),
        "spec": {
            "parentRefs": [parent_ref(host.name, host.namespace, FLEET_LISTENER)],
            "rules": [
                {
                    "matches": [prefix_match(namespace, service, {ENDPOINT_HEADER: endpoint})],
                    "filters": filters,
                    "backendRefs": [backend],
                    "timeouts": {"request": timeout},
                }
            ],
        },
    }


def _rewrite(path: str) -> Obj:
    return {
        "type": "URLRewrite",
        "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": path}},
    }
