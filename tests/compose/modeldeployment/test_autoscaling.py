"""A ModelDeployment's autoscaling targets become a KEDA ScaledObject on its scale subresource
(docs/design/autoscaling.md); ``spec.replicas`` stays within the bounds its owner set."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from modelplane.compose.modeldeployment.autoscaling import (
    MetricsEndpoint,
    desired_replicas,
    scaled_object,
    seconds,
    selector,
    triggers,
)
from modelplane.kube.admission import Admission
from tests.fleet.builders import deployment as fleet_deployment
from tests.fleet.xrd import errors

UPSTREAM_CRDS = Path(__file__).resolve().parents[3] / "tests" / "upstream" / "crds"
ENDPOINT = MetricsEndpoint("http://thanos-query.monitoring:9090")
ALL_TARGETS = {
    "waitingRequestsPerReplica": 4,
    "kvCacheUtilization": 80,
    "timeToFirstToken": {"p90": "800ms"},
    "interTokenLatency": {"p90": "0.06s"},
}


@functools.cache
def keda() -> Admission:
    return Admission.from_paths([UPSTREAM_CRDS])


def deployment(**scaling: Any) -> dict[str, Any]:
    autoscaling = {"maxReplicas": 8, "targets": ALL_TARGETS, **scaling}
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": "qwen", "namespace": "ml-team"},
        "spec": {"replicas": 2, "autoscaling": autoscaling},
    }


def by_name(md: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in scaled_object(md, ENDPOINT)["spec"]["triggers"]}


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


def test_scaling_to_zero_is_not_offered_yet() -> None:
    [error] = admitted(minReplicas=0)
    assert "spec.autoscaling.minReplicas" in error


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
