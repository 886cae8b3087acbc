"""A ModelService by model name (docs/design/shared-front-door.md, "Step 2 as built").

On each front gateway that serves it, beside the path route (``routes.front_route``):

- ``model_route``: an Envoy AI Gateway ``AIGatewayRoute`` on the front Gateway's https listener
  with one rule matching ``x-ai-eg-model: <namespace>/<service>`` (the header the AI Gateway's
  external processor sets from the body's ``model``), one weighted backendRef per lane of the
  path route, in the same order and with the same weights, each setting the same steering header
  the path route's backendRef sets, and ``modelNameOverride`` set to ``spec.modelName`` when
  given;
- ``model_backend`` per cluster the lanes reach: an ``AIServiceBackend`` on the Envoy Gateway
  ``Backend`` the path route's lanes to that cluster use. Envoy AI Gateway v1.1.0 accepts only an
  AIServiceBackend or an InferencePool as a route's backend (``api/v1beta1/ai_gateway_route.go``),
  and an AIServiceBackend only an Envoy Gateway Backend (``ai_service_backend.go``). Its OpenAI
  schema's ``prefix`` is the service's path prefix and ``v1``: the external processor writes
  ``<prefix>/chat/completions`` as the path (``internal/translator/openai_openai.go``), so the
  request reaches the cluster's fleet route (or the egress route) exactly as the path form's
  ``/<namespace>/<service>/v1/chat/completions`` does, and everything behind the front hop is
  unchanged.

Each service composes its own route: the AI Gateway's controller builds one filter
configuration from every AIGatewayRoute attached to a Gateway (``internal/controller/
gateway.go``), so ``GET /v1/models`` lists every service the gateway serves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from modelplane.compose.modelservice.plan import Lane, Plan
from modelplane.compose.modelservice.routes import lane_target, parent_ref
from modelplane.compose.shared.frontdoor import (
    ENDPOINT_HEADER,
    ENVOY_GROUP,
    FRONT_LISTENER,
    MODEL_HEADER,
    POOL_HEADER,
    ClusterGateway,
    cluster_backend_name,
    front_gateway_name,
    service_prefix,
)
from modelplane.compose.shared.remote import MANIFEST, OBSERVED_MANIFEST, managed_metadata
from modelplane.compose.shared.routed import backend_refs
from modelplane.kube import objects
from modelplane.kube.names import unique_label
from modelplane.kube.objects import Obj

AI_GATEWAY_API_VERSION = "aigateway.envoyproxy.io/v1beta1"
TOKEN_COSTS = (
    ("llm_input_token", "InputToken"),
    ("llm_output_token", "OutputToken"),
    ("llm_total_token", "TotalToken"),
)
"""The metadata keys (and AI Gateway cost types) an InferenceGateway's token budgets read
(``inferencegateway.limits.TOKEN_KEYS``; a kind's package imports no other's, so the two are
held equal by tests/compose/modelservice/test_models.py)."""


def model_name(namespace: str, service: str) -> str:
    """What a caller puts in the body's ``model`` to reach the service."""
    return f"{namespace}/{service}"


def model_route_name(gateway: str, namespace: str, service: str) -> str:
    """The service's AIGatewayRoute on a front gateway. The AI Gateway names the HTTPRoute it
    generates after it: a hash of four parts never equals a front route's (three parts)."""
    return unique_label(gateway, namespace, service, "models")


def model_backend_name(gateway: str, namespace: str, service: str, cluster: str) -> str:
    """The service's AIServiceBackend for one cluster's fleet Backend on a front gateway."""
    return unique_label(gateway, namespace, service, cluster, "model-backend")


def targets(host: ClusterGateway, plan: Plan) -> list[str]:
    """The clusters the service's lanes reach from a gateway on ``host``, sorted."""
    return sorted({lane_target(host, lane) for lane in plan.lanes})


def model_backend(
    gateway: str, host: ClusterGateway, namespace: str, service: str, cluster: str
) -> Obj:
    """The AIServiceBackend over the Backend the path route's lanes to ``cluster`` use."""
    prefix = service_prefix(namespace, service) + "v1"
    name = model_backend_name(gateway, namespace, service, cluster)
    return {
        "apiVersion": AI_GATEWAY_API_VERSION,
        "kind": "AIServiceBackend",
        "metadata": managed_metadata(name, host.namespace),
        "spec": {
            "schema": {"name": "OpenAI", "prefix": prefix},
            "backendRef": {
                "group": ENVOY_GROUP,
                "kind": "Backend",
                "name": cluster_backend_name(gateway, cluster),
            },
        },
    }


def model_route(
    gateway: str,
    hostname: str,
    host: ClusterGateway,
    namespace: str,
    service: str,
    plan: Plan,
    timeout: str,
    served: str | None,
    sentinel: Obj | None = None,
) -> Obj:
    """The service by model name on one front gateway. ``sentinel``: the backendRef answering
    503 (``unavailable.sentinel_ref``), added after the lanes while none is ready or every one
    is parked, as the path route's 503 filter is; without it such a rule would be answered 500.
    The model is listed either way."""
    header = {"type": "Exact", "name": MODEL_HEADER, "value": model_name(namespace, service)}
    rule: Obj = {
        "matches": [{"headers": [header]}],
        "modelsOwnedBy": namespace,
        # Unset, the AI Gateway defaults a rule to 60 s, which cuts token streams.
        "timeouts": {"request": timeout},
    }
    refs = [_lane_ref(gateway, host, namespace, service, lane, served) for lane in plan.lanes]
    if sentinel is not None:
        refs.append(sentinel)
    if refs:
        rule["backendRefs"] = refs
    return {
        "apiVersion": AI_GATEWAY_API_VERSION,
        "kind": "AIGatewayRoute",
        "metadata": managed_metadata(model_route_name(gateway, namespace, service), host.namespace),
        "spec": {
            "parentRefs": [parent_ref(front_gateway_name(gateway), host.namespace, FRONT_LISTENER)],
            "hostnames": [hostname],
            "rules": [rule],
            # The token counts a gateway's budgets spend (InferenceGateway spec.limits): the AI
            # Gateway writes them to dynamic metadata only for the costs a route declares.
            "llmRequestCosts": [{"metadataKey": key, "type": kind} for key, kind in TOKEN_COSTS],
        },
    }


def _lane_ref(
    gateway: str, host: ClusterGateway, namespace: str, service: str, lane: Lane, served: str | None
) -> Obj:
    """A lane as the path route's backendRef has it: the same Backend (through its
    AIServiceBackend), weight and steering header, set (replacing what the client sent) and the
    other removed, so a caller cannot steer its own request here either."""
    if lane.external:
        set_, remove = {ENDPOINT_HEADER: lane.endpoint}, POOL_HEADER
    else:
        set_, remove = {POOL_HEADER: str(lane.pool)}, ENDPOINT_HEADER
    ref: Obj = {
        "name": model_backend_name(gateway, namespace, service, lane_target(host, lane)),
        "weight": lane.weight,
        "headerMutation": {
            "set": [{"name": k, "value": v} for k, v in set_.items()],
            "remove": [remove],
        },
    }
    if served:
        ref["modelNameOverride"] = served
    return ref


def route_backends(route: Mapping[str, Any]) -> set[str]:
    """The AIServiceBackends an AIGatewayRoute manifest's rules name."""
    return {str(ref.get("name")) for ref in backend_refs(route)}


def route_header_values(route: Mapping[str, Any], header: str) -> set[str]:
    """The values an AIGatewayRoute manifest's backendRefs set request header ``header`` to."""
    return {
        str(h.get("value"))
        for ref in backend_refs(route)
        for h in objects.dig(ref, "headerMutation", "set") or ()
        if h.get("name") == header
    }


def model_route_pools(objs: Iterable[Mapping[str, Any]]) -> set[str]:
    """Every InferencePool the AIGatewayRoute Objects among ``objs`` send traffic to, in the
    manifest they apply or the one they observe (the pool header their backendRefs set)."""
    out: set[str] = set()
    for obj in objs:
        for where in MANIFEST, OBSERVED_MANIFEST:
            manifest = objects.dig(obj, *where)
            if isinstance(manifest, Mapping) and manifest.get("kind") == "AIGatewayRoute":
                out |= route_header_values(manifest, POOL_HEADER)
    return out
