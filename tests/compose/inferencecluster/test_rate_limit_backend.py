"""The rate-limit backend of the serving stack: a Redis in Envoy Gateway's namespace, and Envoy
Gateway configured to use it, composed only while an InferenceGateway hosted on the cluster sets
``spec.limits`` (Envoy Gateway refuses a global rate limit without a backend; every other
cluster's stack is as before). While the gateways are not read, what was composed stays.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import kubernetes_validate

from modelplane.compose.inferencecluster.components import (
    ENVOY_GATEWAY,
    RATE_LIMIT_REDIS,
    RATE_LIMIT_REDIS_POLICY,
    RATE_LIMIT_REDIS_SERVICE,
)
from modelplane.compose.inferencecluster.composer import GUARDED_GATEWAY
from modelplane.composer import Result

from .support import cluster, created, installing, manifest, resources, run, upstream
from .test_chart_values import (
    test_every_value_set_is_one_the_pinned_chart_reads as check_chart_values,
)

Obj = dict[str, Any]
KUBERNETES = "1.34"
REDIS_KEYS = {RATE_LIMIT_REDIS, RATE_LIMIT_REDIS_SERVICE, RATE_LIMIT_REDIS_POLICY}
URL = "modelplane-ratelimit-redis.envoy-gateway-system.svc.cluster.local:6379"


def gateway(name: str = "front", cluster_name: str = "east", limits: bool = True) -> Obj:
    spec: Obj = {"clusterName": cluster_name}
    if limits:
        spec["limits"] = [{"requestsPerMinute": 60}]
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceGateway",
        "metadata": {"name": name},
        "spec": spec,
    }


def eg_config(result: Result) -> Obj:
    values = resources(result)[ENVOY_GATEWAY]["spec"]["forProvider"]["values"]
    config: Obj = values["config"]["envoyGateway"]
    return config


def test_a_hosted_gateway_with_limits_gets_a_redis_in_envoy_gateways_namespace() -> None:
    result = installing(cluster(), gateways=[gateway()], replicas=[])
    composed = resources(result)
    kinds = {manifest(composed[k])["kind"]: manifest(composed[k]) for k in REDIS_KEYS}
    assert set(kinds) == {"Deployment", "Service", "NetworkPolicy"}
    for obj in kinds.values():
        assert obj["metadata"]["namespace"] == "envoy-gateway-system"
        assert obj["metadata"]["name"] == "modelplane-ratelimit-redis"
    assert kinds["Service"]["spec"]["ports"][0]["port"] == 6379


def test_only_envoy_gateways_rate_limit_service_may_reach_the_redis() -> None:
    result = installing(cluster(), gateways=[gateway()], replicas=[])
    composed = resources(result)
    policy = manifest(composed[RATE_LIMIT_REDIS_POLICY])["spec"]
    redis = manifest(composed[RATE_LIMIT_REDIS])["spec"]["selector"]
    assert policy["podSelector"] == redis
    assert policy["policyTypes"] == ["Ingress"]
    [rule] = policy["ingress"]
    assert [f["podSelector"]["matchLabels"]["app.kubernetes.io/name"] for f in rule["from"]] == [
        "envoy-ratelimit"
    ]
    assert rule["ports"] == [{"protocol": "TCP", "port": 6379}]


def test_envoy_gateway_is_configured_with_the_redis_as_its_rate_limit_backend() -> None:
    result = installing(cluster(), gateways=[gateway()], replicas=[])
    assert eg_config(result)["rateLimit"] == {"backend": {"type": "Redis", "redis": {"url": URL}}}


def test_the_redis_runs_the_image_envoy_gateways_own_task_runs() -> None:
    result = installing(cluster(), gateways=[gateway()], replicas=[])
    pod = manifest(resources(result)[RATE_LIMIT_REDIS])["spec"]["template"]["spec"]
    assert [c["image"] for c in pod["containers"]] == ["redis:6.0.6"]


def test_without_a_gateway_nothing_of_the_backend_is_composed() -> None:
    result = installing(cluster(), gateways=[], replicas=[])
    assert not REDIS_KEYS & set(result.resources)
    assert "rateLimit" not in eg_config(result)


def test_a_hosted_gateway_without_limits_adds_no_backend() -> None:
    result = installing(cluster(), gateways=[gateway(limits=False)], replicas=[])
    assert not REDIS_KEYS & set(result.resources)
    assert "rateLimit" not in eg_config(result)


def test_limits_of_a_gateway_on_another_cluster_add_no_backend() -> None:
    result = installing(cluster(), gateways=[gateway(cluster_name="west")], replicas=[])
    assert not REDIS_KEYS & set(result.resources)
    assert "rateLimit" not in eg_config(result)


def test_an_external_envoy_gateway_gets_no_redis() -> None:
    ic = cluster(servingStack={"envoyGateway": {"mode": "External"}})
    result = installing(ic, gateways=[gateway()], replicas=[])
    assert not REDIS_KEYS & set(result.resources)


def test_while_the_gateways_are_not_read_the_backend_composed_stays() -> None:
    ic = cluster()
    composed = installing(ic, gateways=[gateway()], replicas=[])
    result = run(ic, created(composed), replicas=[])
    assert set(result.resources) >= REDIS_KEYS
    assert eg_config(result)["rateLimit"]["backend"]["redis"]["url"] == URL


def test_while_the_gateways_are_not_read_no_backend_is_added() -> None:
    ic = cluster()
    composed = installing(ic, gateways=[], replicas=[])
    result = run(ic, created(composed), replicas=[])
    assert not REDIS_KEYS & set(result.resources)
    assert "rateLimit" not in eg_config(result)


def test_while_a_guarded_gateway_missing_from_the_list_is_not_read_back_the_backend_stays() -> None:
    ic = cluster()
    composed = installing(ic, gateways=[gateway()], replicas=[])
    # The list lags: the gateway is asked for by name and nothing is known until it answers.
    result = run(ic, created(composed), gateways=[], replicas=[])
    assert f"{GUARDED_GATEWAY}/front" in result.requirements
    assert set(result.resources) >= REDIS_KEYS
    assert "rateLimit" in eg_config(result)


def test_the_backend_goes_once_the_hosted_gateway_drops_its_limits() -> None:
    ic = cluster()
    composed = installing(ic, gateways=[gateway()], replicas=[])
    result = run(ic, created(composed), gateways=[gateway(limits=False)], replicas=[])
    assert not REDIS_KEYS & set(result.resources)
    assert "rateLimit" not in eg_config(result)


def test_the_values_with_a_backend_are_ones_the_pinned_chart_reads() -> None:
    result = installing(cluster(), gateways=[gateway()], replicas=[])
    provider = resources(result)[ENVOY_GATEWAY]["spec"]["forProvider"]
    # config.envoyGateway is the chart's pass-through of the EnvoyGateway file, whose rateLimit
    # shape tests/conformance/test_envoy_rate_limit_backend.py checks against its Go type.
    check_chart_values(provider["chart"]["name"], provider["chart"]["version"], provider["values"])


def test_the_backend_objects_pass_the_upstream_crds_and_kubernetes_schemas() -> None:
    result = installing(cluster(), gateways=[gateway()], replicas=[])
    for key in sorted(REDIS_KEYS):
        obj = resources(result)[key]
        assert [str(e) for e in upstream().admit(copy.deepcopy(obj)).errors] == [], key
        remote = json.loads(json.dumps(manifest(obj)))
        kubernetes_validate.validate(remote, KUBERNETES, strict=True)
