"""The request path of a deployment at zero behind a ModelService, as the pinned versions treat
it (docs/design/autoscaling.md, "Scale to zero behind the front door", "Read at the pinned
versions"), held to what Modelplane composes.

Facts, each read at its version:

- Envoy Gateway v1.8.1 (envoyproxy/gateway, tag v1.8.1, 097ab899b9d0):
  ``api/v1alpha1/shared_types.go`` ``DefaultEnvoyProxyImage`` (the Envoy it runs);
  ``internal/gatewayapi/filters.go`` (an HTTPRouteFilter ``directResponse``: ``statusCode``,
  200 when unset, and body to the IR route's ``DirectResponse``; ``contentType`` and
  ``header.set``/``header.add`` to its response headers); ``internal/gatewayapi/route.go``
  (a rule whose filter set a direct response is answered by it; a weight-0 backendRef is left
  out; a rule with no valid destination answers 500); ``internal/xds/translator/route.go``
  ``buildXdsRoute`` (``direct_response`` action, ``response_headers_to_add``, ``stat_prefix``
  from ``StatName`` whatever the action); ``internal/gatewayapi/backendtrafficpolicy.go``
  ``buildRouteStatName`` (``telemetry.metrics.routeStatName``); ``internal/gatewayapi/
  helpers.go`` ``irRouteDestinationName`` (a rule's cluster: ``httproute/<ns>/<name>/rule/<i>``);
  ``internal/xds/translator/listener.go`` ``hcmStatPrefix`` (``https-<port>``, per listener);
  ``test/e2e/tests/stat_name.go`` (the route-stats series ``envoy_vhost_route_upstream_rq``
  labelled ``envoy_route``); ``api/v1alpha1/envoyproxy_accesslogging_types.go`` (access-log
  sinks File, ALS, OpenTelemetry: no counter made of a log);
  ``internal/infrastructure/kubernetes/proxy/resource_provider.go`` (the proxy's Prometheus path
  ``/stats/prometheus``, without ``usedonly``).
- Envoy (envoyproxy/envoy; its snapshot is over the fetch limit, so read through the search
  index at ``001b1c0cd4cb`` and a later revision of the same file, not at v1.38.1 itself):
  ``source/common/router/router.cc`` ``Filter::decodeHeaders`` counts ``rq_total``, answers a
  ``directResponseEntry()`` (counting ``rq_direct_response``) and returns before
  ``route_entry_``, the virtual cluster and ``route_stats_context_`` are set and before any
  upstream request; ``source/common/router/config_impl.cc`` builds the route's stats context
  from ``stat_prefix`` alone. The connection manager only matches the route.
- Envoy AI Gateway v1.1.0 (envoyproxy/ai-gateway, tag v1.1.0, c217da8a5395)
  ``internal/controller/ai_gateway_route.go`` ``newHTTPRoute``: the HTTPRoute has the
  AIGatewayRoute's name and namespace, its rules in order, and a ``route-not-found`` rule last.
- KEDA v2.20.2 (kedacore/keda, tag v2.20.2, 68a5b5028f35): ``pkg/scaling/scale_handler.go``
  ``getScaledObjectState`` (active when any trigger is); ``pkg/scaling/executor/
  scale_scaledobjects.go`` ``RequestScale`` (active at 0: ``scaleFromZeroOrIdle`` before the
  error case; inactive with a failing trigger and no fallback: ``TriggerError``, no write;
  inactive at 0 with a minimum of 0: no change) and ``scaleToZeroOrIdle`` (never active since
  creation: ``initialCooldownPeriod``, default 0, ``pkg/scaling/executor/scale_executor.go``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from modelplane.compose.inferencecluster import components
from modelplane.compose.modelservice.composer import (
    DEPLOYMENTS,
    compose_service,
    replicas_requirement,
)
from modelplane.compose.modelservice.unavailable import SENTINEL_HEADER
from modelplane.compose.shared.scaletozero import activation_clusters
from modelplane.composer import Inputs, Result
from tests import promql
from tests.compose.inferencecluster.support import cluster, installing, manifest, resources
from tests.compose.modelservice.kit import manifests, service, service_inputs
from tests.conformance import keda
from tests.conformance.test_keda import composed

Obj = dict[str, Any]

ENVOY_GATEWAY_TAG = "v1.8.1"
ENVOY_IMAGE = "docker.io/envoyproxy/envoy:distroless-v1.38.1"
"""``DefaultEnvoyProxyImage`` at Envoy Gateway v1.8.1: the Envoy whose router is relied on."""
ENVOY_STATS_PATH = "/stats/prometheus"
"""The proxy pods' Prometheus path: every stat, zero-valued counters included (no
``usedonly``), so a cluster's counter exists before its first request."""

DIRECT = "direct_response"
UPSTREAM = "upstream"


@dataclass(frozen=True)
class Series:
    """A Prometheus series Envoy exports under Envoy Gateway v1.8.1, and what it counts."""

    name: str
    label: str
    per_route: bool
    counts_direct_responses: bool


SERIES = (
    # router.cc: the cluster is looked up only after a direct response returned.
    Series("envoy_cluster_upstream_rq_total", "envoy_cluster_name", True, False),
    # router.cc: route_stats_context_ is set only after a direct response returned.
    Series("envoy_vhost_route_upstream_rq", "envoy_route", True, False),
    # router.cc rq_direct_response and the connection manager's downstream_rq_xx: both under the
    # connection manager's stat prefix, one per listener (listener.go hcmStatPrefix).
    Series("envoy_http_rq_direct_response", "envoy_http_conn_manager_prefix", False, True),
    Series("envoy_http_downstream_rq_xx", "envoy_http_conn_manager_prefix", False, True),
)
ACTIVATION_SERIES = "envoy_cluster_upstream_rq_total"


def cluster_name(route: Obj, rule: int) -> str:
    """``irRouteDestinationName``: the upstream cluster of a route's rule."""
    meta = route["metadata"]
    return f"httproute/{meta['namespace']}/{meta['name']}/rule/{rule}"


def answer(rule: Obj, filters: dict[str, Obj]) -> str:
    """How Envoy Gateway v1.8.1 answers a rule: by its filter's direct response, else upstream
    through its weighted backendRefs (a rule left with none answers 500)."""
    for f in rule.get("filters", []):
        ref = f.get("extensionRef") or {}
        if "directResponse" in filters.get(ref.get("name", ""), {}).get("spec", {}):
            return DIRECT
    if any(ref.get("weight", 1) > 0 for ref in rule.get("backendRefs", [])):
        return UPSTREAM
    return "500"


def counted_per_route(how: str) -> list[str]:
    """The per-route series that count a request answered this way."""
    return [
        s.name for s in SERIES if s.per_route and (how == UPSTREAM or s.counts_direct_responses)
    ]


def response_headers(direct_response: Obj) -> set[str]:
    """The response headers Envoy Gateway gives a direct response (filters.go)."""
    names = {"Content-Type"} if "contentType" in direct_response else set()
    header = direct_response.get("header") or {}
    return names | {h["name"] for key in ("set", "add") for h in header.get(key, [])}


ASLEEP: Obj = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelDeployment",
    "metadata": {"name": "qwen", "namespace": "ml"},
    "spec": {
        "replicas": 0,
        "autoscaling": {"minReplicas": 0, "maxReplicas": 2, "scaleToZero": {"idleSeconds": 900}},
        "template": {"metadata": {"labels": {}}},
    },
}
"""The deployment the service selects, put to zero by its autoscaler."""


def service_at_zero() -> Result:
    """A ModelService whose one deployment is asleep: no endpoint, no replica."""
    inputs = service_inputs(service("qwen", "ml"), [[]])
    required = {**inputs.required, DEPLOYMENTS: [ASLEEP], replicas_requirement(0): []}
    return compose_service(Inputs(composite=inputs.composite, required=required))


def at_zero() -> dict[str, Obj]:
    return manifests(service_at_zero())


def filters(composed_objects: dict[str, Obj]) -> dict[str, Obj]:
    return {
        m["metadata"]["name"]: m
        for m in composed_objects.values()
        if m["kind"] == "HTTPRouteFilter"
    }


def sleepy() -> Obj:
    """The ScaledObject of the deployment, woken by the clusters the service published."""
    published = activation_clusters({"status": service_at_zero().status})
    return composed(clusters=published, **ASLEEP["spec"]["autoscaling"])


def front_door_query() -> str:
    [trigger] = [t for t in sleepy()["spec"]["triggers"] if t["name"] == "front-door"]
    return str(trigger["metadata"]["query"])


# (a) The versions read are the ones Modelplane installs.


def test_the_envoy_gateway_read_is_the_one_the_serving_stack_installs() -> None:
    assert components.ENVOY_GATEWAY_COMPONENT.version == ENVOY_GATEWAY_TAG


def test_the_gateway_monitor_scrapes_every_envoy_counter() -> None:
    monitor = manifest(resources(installing(cluster()))[components.GATEWAY_MONITOR])
    envoy = [e for e in monitor["spec"]["podMetricsEndpoints"] if e["port"] == "metrics"]
    assert envoy == [{"port": "metrics", "path": ENVOY_STATS_PATH}]


# (b) What a request at zero meets on each route.


def test_a_path_request_at_zero_goes_upstream_through_its_rules_cluster() -> None:
    objects = at_zero()
    [rule] = objects["front/main"]["spec"]["rules"]
    assert answer(rule, filters(objects)) == UPSTREAM
    assert ACTIVATION_SERIES in counted_per_route(UPSTREAM)


def test_a_direct_response_would_be_counted_in_no_per_route_series() -> None:
    # Why the path route no longer answers at zero on the front gateway.
    assert counted_per_route(DIRECT) == []


def test_a_model_request_at_zero_goes_upstream_through_its_rules_cluster() -> None:
    objects = at_zero()
    [rule] = objects["models/main"]["spec"]["rules"]
    assert answer(rule, filters(objects)) == UPSTREAM
    assert ACTIVATION_SERIES in counted_per_route(UPSTREAM)


def test_the_sentinel_route_answers_the_model_request_with_the_unavailable_filter() -> None:
    objects = at_zero()
    [rule] = objects["unavailable-route/main"]["spec"]["rules"]
    [match] = rule["matches"]
    assert {h["name"] for h in match["headers"]} == {SENTINEL_HEADER}
    assert answer(rule, filters(objects)) == DIRECT


# (c) The activation query, composed from what the service published.


def test_the_activation_query_selects_the_path_and_model_rules_clusters() -> None:
    objects = at_zero()
    query = front_door_query()
    assert promql.selects(query, cluster_name(objects["front/main"], 0))
    assert promql.selects(query, cluster_name(objects["models/main"], 0))


def test_the_activation_query_leaves_out_the_ai_gateways_route_not_found_rule() -> None:
    models = at_zero()["models/main"]
    # The AI Gateway appends its route-not-found rule after the AIGatewayRoute's rules.
    not_found = len(models["spec"]["rules"])
    assert not promql.selects(front_door_query(), cluster_name(models, not_found))


# (d) The answer at zero.


def test_the_answer_at_zero_tells_the_caller_when_to_retry() -> None:
    [answer_filter] = filters(at_zero()).values()
    assert "Retry-After" in response_headers(answer_filter["spec"]["directResponse"])


def test_the_answer_at_zero_says_the_model_is_waking() -> None:
    [answer_filter] = filters(at_zero()).values()
    assert "waking" in answer_filter["spec"]["directResponse"]["body"]["inline"]


# (e) KEDA at zero.


def test_at_zero_no_load_trigger_is_active() -> None:
    # No engine, so every load query is empty, which ignoreNullValues reads as 0.
    for trigger in sleepy()["spec"]["triggers"]:
        activation = float(trigger["metadata"].get("activationThreshold", "0"))
        assert not keda.is_active(0.0, activation)


def test_a_deployment_at_zero_with_no_active_trigger_stays_at_zero() -> None:
    assert keda.request_scale(sleepy(), 0, active=False) is None


def test_an_active_trigger_wakes_a_deployment_at_zero_to_one() -> None:
    assert keda.request_scale(sleepy(), 0, active=True) == keda.ScaleWrite(1)


def test_a_deployment_that_may_sleep_is_woken_by_the_front_door() -> None:
    queries = [t["metadata"]["query"] for t in sleepy()["spec"]["triggers"]]
    assert any(ACTIVATION_SERIES in q for q in queries)


def test_only_the_front_door_keeps_a_deployment_awake() -> None:
    at_rest = {"waiting": 0.0, "kv-cache": 0.02, "ttft-p90": 0.0, "itl-p90": 0.0}
    for trigger in sleepy()["spec"]["triggers"]:
        activation = float(trigger["metadata"].get("activationThreshold", "0"))
        assert not keda.is_active(at_rest.get(trigger["name"], 0.0), activation)


def test_a_new_deployment_that_may_sleep_waits_its_idle_seconds_before_sleeping() -> None:
    # scaleToZeroOrIdle: never active since creation, KEDA waits initialCooldownPeriod only.
    assert sleepy()["spec"].get("initialCooldownPeriod", 0) == 900
