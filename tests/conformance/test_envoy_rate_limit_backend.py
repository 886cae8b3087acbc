"""Envoy Gateway v1.8.1 (envoyproxy/gateway, tag v1.8.1, 097ab899b9d0): the rate-limit backend
the serving stack gives it, and the 429 the limits policy answers with.

The backend:

- api/v1alpha1/envoygateway_types.go: ``EnvoyGateway.rateLimit`` is ``RateLimit{backend:
  RateLimitDatabaseBackend{type, redis}}``; ``type`` is an enum of ``Redis`` only;
  ``RateLimitRedisSettings{url, tls}`` where ``url`` is the Redis host (a comma-separated list for
  Sentinel or Cluster). ``failClosed`` unset is false: "If FailClosed is false, let the traffic
  pass" when the rate-limit service does not answer (a Redis down spends no budget).
- internal/infrastructure/runner/runner.go ``initializeRateLimitInfra``: once the provider is
  ready, a config with ``rateLimit`` set calls ``CreateOrUpdateRateLimitInfra``, one without
  ``DeleteRateLimitInfra``. internal/infrastructure/kubernetes/ratelimit_infra.go creates the
  rate-limit service in the controller's namespace, owned by the ``envoy-gateway`` Deployment,
  Service and ServiceAccount: Envoy Gateway deploys and removes the rate-limit service itself,
  so Modelplane composes only the Redis and the config naming it.
- internal/infrastructure/kubernetes/ratelimit/resource.go: the service is named
  ``envoy-ratelimit`` and its objects labelled ``app.kubernetes.io/name: envoy-ratelimit``,
  ``app.kubernetes.io/component: ratelimit``, ``app.kubernetes.io/managed-by: envoy-gateway``
  (what it selects its own objects by; its pods carry them, resource_provider.go ``Deployment``,
  so the Redis's NetworkPolicy admits those pods only); its container gets
  ``REDIS_SOCKET_TYPE=tcp`` and ``REDIS_URL`` set to ``backend.redis.url`` verbatim (so
  ``host:port``, no scheme).
- examples/redis/redis.yaml and site/content/en/latest/tasks/traffic/global-rate-limit.md: a
  one-replica Deployment of ``redis:6.0.6`` and a Service on 6379, named in
  ``rateLimit.backend.redis.url`` as ``<service>.<namespace>.svc.cluster.local:6379``.

The 429:

- api/v1alpha1/backendtrafficpolicy_types.go ``responseOverride``: "If multiple configurations
  are specified, the first one to match wins". api/v1alpha1/shared_types.go ``ResponseOverride
  {match, response | redirect, source}``; ``source`` ``Local`` "overrides only Envoy-generated
  responses (e.g. auth failures, rate limits)"; ``CustomResponse{contentType, body, statusCode,
  header}``, ``header`` a Gateway API ``HTTPHeaderFilter`` ("Header removal is not supported"),
  ``statusCode`` unset "does not override the status".
- internal/gatewayapi/backendtrafficpolicy.go: each ``header.set`` becomes a response header
  added with ``Append: false`` (replacing one of that name); internal/xds/translator/
  custom_response.go ``buildResponseAction``: Envoy's ``LocalResponsePolicy`` with the body as a
  ``SubstitutionFormatString`` text format (command operators are expanded: the body holds
  none but the two read in test_envoy_rate_limit_answer.py), ``Content-Type`` from
  ``contentType``; ``source: Local`` is ANDed with the local-reply
  input, so an engine's or an external provider's 429 is not rewritten.
- internal/xds/translator/httpfilters.go ``newOrderedHTTPFilter``: custom_response is ordered
  first (0) "to ensure it sees local replies", before the global rate limit (303).
- Not read at the pinned Envoy tag: Envoy's local_response_policy.cc (read at a stored revision)
  answers by sending a new local reply with the configured body and headers, so the
  ``x-ratelimit-*`` headers of the refused reply are not expected to reach the caller; the body
  and ``Retry-After`` say what they said.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from modelplane.compose.inferencecluster import components
from modelplane.compose.shared.frontdoor import RETRY_AFTER, budget_spent
from tests.compose.inferencecluster.support import cluster, installing, manifest, resources

Obj = dict[str, Any]
CRDS = Path(__file__).resolve().parents[1] / "upstream" / "crds"
EG_RATE_LIMIT_NAME = "envoy-ratelimit"
EG_RATE_LIMIT_LABELS = {
    "app.kubernetes.io/name": EG_RATE_LIMIT_NAME,
    "app.kubernetes.io/component": "ratelimit",
    "app.kubernetes.io/managed-by": "envoy-gateway",
}
EG_TASK_REDIS_IMAGE = "redis:6.0.6"
LIMITED_GATEWAY = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "InferenceGateway",
    "metadata": {"name": "front"},
    "spec": {"clusterName": "east", "limits": [{"requestsPerMinute": 60}]},
}


def composed() -> dict[str, Obj]:
    return resources(installing(cluster(), gateways=[LIMITED_GATEWAY], replicas=[]))


def rate_limit_config() -> Obj:
    values = composed()[components.ENVOY_GATEWAY]["spec"]["forProvider"]["values"]
    config: Obj = values["config"]["envoyGateway"]["rateLimit"]
    return config


def test_the_backend_has_the_shape_of_envoy_gateways_rate_limit_type() -> None:
    config = rate_limit_config()
    assert set(config) == {"backend"}  # failClosed unset: traffic passes if Redis is down
    assert set(config["backend"]) == {"type", "redis"}
    assert config["backend"]["type"] == "Redis"  # the enum's only value
    assert set(config["backend"]["redis"]) == {"url"}


def test_the_url_is_the_host_and_port_the_rate_limit_service_reads_verbatim() -> None:
    url = rate_limit_config()["backend"]["redis"]["url"]
    assert "://" not in url
    host, port = url.rsplit(":", 1)
    service = manifest(composed()[components.RATE_LIMIT_REDIS_SERVICE])
    meta = service["metadata"]
    assert host == f"{meta['name']}.{meta['namespace']}.svc.cluster.local"
    assert int(port) == service["spec"]["ports"][0]["port"] == 6379


def test_the_redis_is_never_taken_for_envoy_gateways_own_rate_limit_objects() -> None:
    for key in (
        components.RATE_LIMIT_REDIS,
        components.RATE_LIMIT_REDIS_SERVICE,
        components.RATE_LIMIT_REDIS_POLICY,
    ):
        meta = manifest(composed()[key])["metadata"]
        assert meta["name"] != EG_RATE_LIMIT_NAME
        labels = meta["labels"]
        assert not all(labels.get(k) == v for k, v in EG_RATE_LIMIT_LABELS.items())


def test_the_redis_admits_the_pods_envoy_gateway_labels_its_rate_limit_service_with() -> None:
    assert components.RATE_LIMIT_SERVICE_LABELS == EG_RATE_LIMIT_LABELS
    policy = manifest(composed()[components.RATE_LIMIT_REDIS_POLICY])["spec"]
    [rule] = policy["ingress"]
    assert rule["from"] == [{"podSelector": {"matchLabels": EG_RATE_LIMIT_LABELS}}]


def test_the_rate_limit_service_itself_is_left_to_envoy_gateway() -> None:
    kinds = [
        manifest(obj)["kind"]
        for obj in composed().values()
        if obj["kind"] == "Object" and manifest(obj)["metadata"].get("name") == EG_RATE_LIMIT_NAME
    ]
    assert kinds == []


def test_the_redis_image_is_the_one_envoy_gateways_task_runs() -> None:
    assert components.REDIS_IMAGE == EG_TASK_REDIS_IMAGE


def response_override_schema() -> Obj:
    crd = yaml.safe_load((CRDS / "gateway.envoyproxy.io_backendtrafficpolicies.yaml").read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    items: Obj = spec["properties"]["responseOverride"]["items"]
    return items


def test_the_override_answers_only_envoys_own_replies() -> None:
    source = response_override_schema()["properties"]["source"]
    assert budget_spent()["source"] == "Local"
    assert "Local" in source["enum"]


def test_the_custom_response_sets_headers_so_retry_after_is_sent() -> None:
    response = response_override_schema()["properties"]["response"]["properties"]
    assert "header" in response
    assert budget_spent()["response"]["header"]["set"] == [
        {"name": "Retry-After", "value": RETRY_AFTER}
    ]


def test_the_body_is_json_whose_only_operators_read_the_refused_reply() -> None:
    body = budget_spent()["response"]["body"]["inline"]
    for operator in ("%RESP(X-RATELIMIT-LIMIT)%", "%RESP(X-RATELIMIT-RESET)%"):
        body = body.replace(operator, "-")
    assert "%" not in body
    assert json.loads(body)["error"]["code"] == 429
