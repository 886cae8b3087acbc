"""A ModelDeployment's autoscaling targets become a KEDA ScaledObject on its scale subresource
(docs/design/autoscaling.md); ``spec.replicas`` stays within the bounds its owner set."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pytest

from modelplane.compose.modeldeployment.autoscaling import (
    FRONT_DOOR,
    activation_query,
    desired_replicas,
    scaled_object,
    seconds,
    selector,
    triggers,
    woken_by,
)
from modelplane.compose.shared.metricsconfig import MetricsEndpoint
from modelplane.kube.admission import Admission
from tests import promql
from tests.fleet.builders import deployment as fleet_deployment
from tests.fleet.xrd import errors
from tests.upstream_crds import upstream

ENDPOINT = MetricsEndpoint("http://thanos-query.monitoring:9090")
ALL_TARGETS = {
    "waitingRequestsPerReplica": 4,
    "kvCacheUtilization": 80,
    "timeToFirstToken": {"p90": "800ms"},
    "interTokenLatency": {"p90": "0.06s"},
}


def keda() -> Admission:
    return upstream()


def deployment(**scaling: Any) -> dict[str, Any]:
    autoscaling = {"maxReplicas": 8, "targets": ALL_TARGETS, **scaling}
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": "qwen", "namespace": "ml-team"},
        "spec": {"replicas": 2, "autoscaling": autoscaling},
    }


def by_name(md: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return by_name_of(scaled_object(md, ENDPOINT))


def by_name_of(so: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in so["spec"]["triggers"]}


def test_the_scaled_object_passes_kedas_crd() -> None:
    md = deployment(minReplicas=1, behavior={"scaleDown": {"maxReplicasPerStep": 1}})
    assert [str(e) for e in keda().admit(scaled_object(md, ENDPOINT)).errors] == []


def test_the_scaled_object_drives_the_deployments_scale_subresource() -> None:
    spec = scaled_object(deployment(minReplicas=2), ENDPOINT)["spec"]
    assert spec["scaleTargetRef"] == {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelDeployment",
        "name": "qwen",
    }
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (2, 8)


def test_queries_select_the_deployments_engines_by_the_labels_prometheus_copies() -> None:
    assert selector("ml-team", "qwen") == (
        '{modelplane_ai_deployment="qwen",modelplane_ai_deployment_namespace="ml-team"}'
    )


def test_waiting_requests_are_summed_and_divided_by_replicas_by_the_hpa() -> None:
    waiting = by_name(deployment())["waiting"]
    assert waiting["metricType"] == "AverageValue"
    assert waiting["metadata"]["threshold"] == "4"
    assert waiting["metadata"]["query"].startswith("sum(vllm:num_requests_waiting{")
    assert " or sglang:num_queue_reqs{" in waiting["metadata"]["query"]


def test_kv_cache_utilisation_is_summed_over_replicas_against_a_fraction() -> None:
    kv = by_name(deployment())["kv-cache"]
    assert kv["metricType"] == "AverageValue"
    assert kv["metadata"]["threshold"] == "0.8"
    assert kv["metadata"]["query"].startswith(
        "sum(avg by (modelplane_ai_replica) (vllm:kv_cache_usage_perc{"
    )


@pytest.mark.parametrize(
    ("trigger", "histogram", "threshold"),
    [
        ("ttft-p90", "time_to_first_token_seconds_bucket", "0.8"),
        ("itl-p90", "inter_token_latency_seconds_bucket", "0.06"),
    ],
)
def test_latency_targets_read_the_p90_of_both_engines_histograms(
    trigger: str, histogram: str, threshold: str
) -> None:
    t = by_name(deployment())[trigger]
    query = t["metadata"]["query"]
    assert query.startswith("histogram_quantile(0.9, sum by (le) (")
    assert f"rate(vllm:{histogram}{{" in query and f"rate(sglang:{histogram}{{" in query
    assert (t["metricType"], t["metadata"]["threshold"]) == ("AverageValue", threshold)


def test_a_latency_is_multiplied_by_the_replicas_that_report() -> None:
    query = by_name(deployment())["ttft-p90"]["metadata"]["query"]
    assert ") * count(count by (modelplane_ai_replica) (vllm:num_requests_waiting{" in query


def test_only_the_targets_set_become_triggers() -> None:
    assert [t.name for t in triggers({"kvCacheUtilization": 70}, "ns", "md")] == ["kv-cache"]


def test_behavior_becomes_the_hpas_windows_and_step_policies() -> None:
    md = deployment(
        behavior={
            "scaleUp": {"stabilizationWindowSeconds": 0, "maxReplicasPerStep": 4},
            "scaleDown": {
                "stabilizationWindowSeconds": 300,
                "maxReplicasPerStep": 1,
                "periodSeconds": 120,
            },
        }
    )
    behavior = scaled_object(md, ENDPOINT)["spec"]["advanced"]["horizontalPodAutoscalerConfig"][
        "behavior"
    ]
    assert behavior["scaleUp"] == {
        "stabilizationWindowSeconds": 0,
        "policies": [{"type": "Pods", "value": 4, "periodSeconds": 60}],
    }
    assert behavior["scaleDown"]["policies"] == [{"type": "Pods", "value": 1, "periodSeconds": 120}]


def test_the_platforms_authentication_is_named_on_every_trigger() -> None:
    endpoint = MetricsEndpoint(
        "https://q:9090", {"name": "reader", "kind": "ClusterTriggerAuthentication"}
    )
    so = scaled_object(deployment(), endpoint)
    assert {t["authenticationRef"]["name"] for t in so["spec"]["triggers"]} == {"reader"}
    assert [str(e) for e in keda().admit(so).errors] == []


@pytest.mark.parametrize(("replicas", "expected"), [(0, 2), (2, 2), (5, 5), (20, 8), (None, 2)])
def test_replicas_stay_within_the_autoscaling_bounds(replicas: int | None, expected: int) -> None:
    spec = deployment(minReplicas=2)["spec"]
    if replicas is None:
        del spec["replicas"]
    else:
        spec["replicas"] = replicas
    assert desired_replicas(spec) == expected


def test_manual_mode_reads_replicas_as_written() -> None:
    assert desired_replicas({"replicas": 5}) == 5


def test_no_named_prometheus_is_no_endpoint() -> None:
    assert MetricsEndpoint.from_config(None) is None
    assert MetricsEndpoint.from_config({"data": {"prometheus": {}}}) is None
    named = MetricsEndpoint.from_config({"data": {"prometheus": {"serverAddress": "http://q"}}})
    assert named == MetricsEndpoint("http://q")


@pytest.mark.parametrize(("text", "value"), [("800ms", 0.8), ("1.5s", 1.5), ("2s", 2.0)])
def test_durations_read_in_seconds(text: str, value: float) -> None:
    assert seconds(text) == value


def test_a_duration_in_another_unit_is_refused() -> None:
    with pytest.raises(ValueError, match="'1m'"):
        seconds("1m")


def admitted(**scaling: Any) -> list[str]:
    md = fleet_deployment(replicas=2)
    md["spec"]["autoscaling"] = {"maxReplicas": 4, "targets": {"kvCacheUtilization": 80}, **scaling}
    return errors("modeldeployments", md)


def test_the_xrd_admits_an_autoscaled_deployment() -> None:
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 300, "maxReplicasPerStep": 1}}
    assert admitted(minReplicas=2, behavior=behavior) == []


def test_a_minimum_above_the_maximum_is_refused() -> None:
    [error] = admitted(minReplicas=5)
    assert "autoscaling.minReplicas must not exceed autoscaling.maxReplicas" in error


def test_autoscaling_without_a_target_is_refused() -> None:
    [error] = admitted(targets={})
    assert "spec.autoscaling.targets" in error


SLEEPS: dict[str, Any] = {"minReplicas": 0, "scaleToZero": {"idleSeconds": 900}}


def test_the_xrd_admits_a_deployment_that_may_sleep() -> None:
    assert admitted(**SLEEPS) == []


def test_a_minimum_of_zero_without_scale_to_zero_is_refused() -> None:
    [error] = admitted(minReplicas=0)
    assert error.startswith("spec.autoscaling.minReplicas: ")
    assert "spec.autoscaling.minReplicas 0 requires spec.autoscaling.scaleToZero" in error


@pytest.mark.parametrize("minimum", [1, None], ids=["one", "unset"])
def test_scale_to_zero_without_a_minimum_of_zero_is_refused(minimum: int | None) -> None:
    scaling: dict[str, Any] = {"scaleToZero": {"idleSeconds": 900}}
    if minimum is not None:
        scaling["minReplicas"] = minimum
    [error] = admitted(**scaling)
    assert error.startswith("spec.autoscaling.scaleToZero: ")
    assert "spec.autoscaling.scaleToZero requires spec.autoscaling.minReplicas 0" in error


@pytest.mark.parametrize("idle", [30, 86400])
def test_idle_seconds_within_the_range_are_admitted(idle: int) -> None:
    assert admitted(minReplicas=0, scaleToZero={"idleSeconds": idle}) == []


@pytest.mark.parametrize("idle", [29, 86401])
def test_idle_seconds_outside_the_range_are_refused(idle: int) -> None:
    [error] = admitted(minReplicas=0, scaleToZero={"idleSeconds": idle})
    assert error.startswith("spec.autoscaling.scaleToZero.idleSeconds: ")


def test_scale_to_zero_without_idle_seconds_is_refused() -> None:
    assert "spec.autoscaling.scaleToZero.idleSeconds: Required value" in admitted(
        minReplicas=0, scaleToZero={}
    )


def test_zero_replicas_are_admitted_for_a_deployment_that_may_sleep() -> None:
    md = fleet_deployment(replicas=0)
    md["spec"]["autoscaling"] = {"maxReplicas": 4, "targets": {"kvCacheUtilization": 80}, **SLEEPS}
    assert errors("modeldeployments", md) == []


@pytest.mark.parametrize("minimum", [1, None], ids=["autoscaled", "manual"])
def test_zero_replicas_are_refused_for_a_deployment_that_may_not_sleep(minimum: int | None) -> None:
    md = fleet_deployment(replicas=0)
    if minimum is not None:
        md["spec"]["autoscaling"] = {
            "minReplicas": minimum,
            "maxReplicas": 4,
            "targets": {"kvCacheUtilization": 80},
        }
    [error] = errors("modeldeployments", md)
    assert error.startswith("spec.replicas: ")
    assert "spec.replicas may be 0 only when spec.autoscaling.minReplicas is 0" in error


def test_a_latency_target_in_minutes_is_refused() -> None:
    [error] = admitted(targets={"timeToFirstToken": {"p90": "1m"}})
    assert "spec.autoscaling.targets.timeToFirstToken.p90" in error


def test_a_latency_target_below_a_millisecond_is_refused() -> None:
    [error] = admitted(targets={"interTokenLatency": {"p90": "0.4ms"}})
    assert "interTokenLatency.p90 must be at least 1ms" in error


def phased_queries() -> dict[str, str]:
    md = deployment()
    md["spec"]["template"] = {"spec": {"serving": {"mode": "PrefillDecode"}}}
    return {name: t["metadata"]["query"] for name, t in by_name(md).items()}


@pytest.mark.parametrize("trigger", ["waiting", "ttft-p90"])
def test_a_prefill_decode_deployment_reads_queue_and_first_token_from_prefill(
    trigger: str,
) -> None:
    query = phased_queries()[trigger]
    assert 'llm_d_ai_role="prefill"' in query
    assert 'llm_d_ai_role="decode"' not in query


@pytest.mark.parametrize("trigger", ["kv-cache", "itl-p90"])
def test_a_prefill_decode_deployment_reads_kv_and_inter_token_from_decode(trigger: str) -> None:
    query = phased_queries()[trigger]
    assert 'llm_d_ai_role="decode"' in query
    assert 'llm_d_ai_role="prefill"' not in query


def test_a_prefill_decode_latency_counts_every_replica_whatever_its_phase() -> None:
    count = phased_queries()["itl-p90"].split(" * ", 1)[1]
    assert "llm_d_ai_role" not in count


def test_an_aggregated_deployment_reads_every_engine() -> None:
    assert all(
        "llm_d_ai_role" not in t["metadata"]["query"] for t in by_name(deployment()).values()
    )


# Scale to zero: the front door wakes it, and only the front door keeps it awake.

MODELS = "httproute/gateways/models-main/rule/0"
FRONT = "httproute/gateways/front-main/rule/0"


def sleeping(clusters: Sequence[str] = (MODELS, FRONT)) -> dict[str, Any]:
    return scaled_object(deployment(**SLEEPS), ENDPOINT, clusters)


def test_a_deployment_that_may_sleep_wakes_on_the_request_rate_of_its_front_door() -> None:
    trigger = by_name_of(sleeping())[FRONT_DOOR]
    assert trigger["metadata"]["query"].startswith(
        'sum(rate(envoy_cluster_upstream_rq_total{envoy_cluster_name=~"'
    )
    assert trigger["metadata"]["query"].endswith('"}[1m]))')


@pytest.mark.parametrize("cluster", [MODELS, FRONT])
def test_the_front_door_query_matches_every_cluster_published(cluster: str) -> None:
    assert promql.selects(activation_query([MODELS, FRONT]), cluster)


@pytest.mark.parametrize(
    "other",
    [
        "httproute/gateways/models-main/rule/1",
        "httproute/gateways/models-mainx/rule/0",
        "httproute/gateways/models-main/rule/0x",
    ],
)
def test_the_front_door_query_matches_no_other_cluster(other: str) -> None:
    assert not promql.selects(activation_query([MODELS, FRONT]), other)


def test_a_dot_in_a_cluster_name_matches_only_a_dot() -> None:
    query = activation_query(["httproute/a.b/r/rule/0"])
    assert not promql.selects(query, "httproute/aXb/r/rule/0")


def test_the_front_door_query_reads_the_same_whatever_the_order_or_repeats() -> None:
    assert activation_query([MODELS, FRONT, MODELS]) == activation_query([FRONT, MODELS])


def test_the_first_request_through_the_front_door_wakes_it() -> None:
    metadata = by_name_of(sleeping())[FRONT_DOOR]["metadata"]
    assert metadata["activationThreshold"] == "0"
    assert metadata["ignoreNullValues"] == "true"


def test_the_front_door_never_asks_the_hpa_for_a_second_replica() -> None:
    trigger = by_name_of(sleeping())[FRONT_DOOR]
    assert trigger["metricType"] == "AverageValue"
    # ceil(rate / threshold) for a front gateway far busier than any serves.
    assert math.ceil(100_000 / float(trigger["metadata"]["threshold"])) == 1


@pytest.mark.parametrize("trigger", ["waiting", "kv-cache", "ttft-p90", "itl-p90"])
def test_no_load_reading_keeps_a_deployment_that_may_sleep_awake(trigger: str) -> None:
    activation = float(by_name_of(sleeping())[trigger]["metadata"]["activationThreshold"])
    # A thousand replicas each at full KV use, a minute's latency, or a million waiting.
    assert activation > max(1000 * 1.0, 1000 * 60.0, 1_000_000)


def test_a_deployment_that_may_not_sleep_keeps_kedas_default_activation() -> None:
    assert all("activationThreshold" not in t["metadata"] for t in by_name(deployment()).values())


def test_it_sleeps_after_its_idle_seconds_and_not_before_them_when_new() -> None:
    spec = sleeping()["spec"]
    assert (spec["cooldownPeriod"], spec["initialCooldownPeriod"]) == (900, 900)


def test_a_deployment_something_wakes_has_a_minimum_of_zero() -> None:
    assert sleeping()["spec"]["minReplicaCount"] == 0


def test_a_deployment_nothing_wakes_keeps_one_replica_and_never_sleeps() -> None:
    spec = sleeping(clusters=())["spec"]
    assert spec["minReplicaCount"] == 1
    assert FRONT_DOOR not in {t["name"] for t in spec["triggers"]}
    assert "cooldownPeriod" not in spec and "initialCooldownPeriod" not in spec


def test_a_deployment_that_may_not_sleep_ignores_front_door_clusters() -> None:
    md = deployment(minReplicas=1)
    assert scaled_object(md, ENDPOINT, [MODELS]) == scaled_object(md, ENDPOINT)


def test_the_scaled_object_of_a_deployment_that_may_sleep_passes_kedas_crd() -> None:
    assert [str(e) for e in keda().admit(sleeping()).errors] == []


def test_the_scaled_object_remembers_the_clusters_it_wakes_on() -> None:
    assert woken_by(sleeping([MODELS, FRONT, MODELS])) == sorted([MODELS, FRONT])


def test_a_scaled_object_that_cannot_sleep_wakes_on_nothing() -> None:
    assert woken_by(sleeping(clusters=())) == []
    assert woken_by(None) == []


def test_zero_replicas_stay_zero_for_a_deployment_something_wakes() -> None:
    assert desired_replicas({**deployment(**SLEEPS)["spec"], "replicas": 0}) == 0


def test_zero_replicas_are_placed_as_one_for_a_deployment_nothing_wakes() -> None:
    spec = {**deployment(**SLEEPS)["spec"], "replicas": 0}
    assert desired_replicas(spec, wakes=False) == 1
