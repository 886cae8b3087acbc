"""The HPA KEDA creates for a ModelDeployment, as Kubernetes v1.35.4 runs it.

The models and their sources (pkg/controller/podautoscaler/horizontal.go and
replica_calculator.go, pkg/apis/autoscaling/v2/defaults.go and validation/validation.go, at
k8s.io/kubernetes v1.35.4, the version the e2e tier builds) are in ``tests/conformance/hpa.py``.
The behavior is the one ``scaled_object`` composes, which KEDA hands to the HPA unchanged
(tests/conformance/test_keda.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from modelplane.compose.modeldeployment.autoscaling import MetricsEndpoint, scaled_object
from tests.conformance import hpa, keda

Obj = dict[str, Any]
XRD = Path(__file__).resolve().parents[2] / "apis" / "modeldeployments" / "definition.yaml"
ENDPOINT = MetricsEndpoint("http://thanos-query.monitoring:9090")
TARGETS = {
    "waitingRequestsPerReplica": 4,
    "kvCacheUtilization": 80,
    "timeToFirstToken": {"p90": "800ms"},
    "interTokenLatency": {"p90": "60ms"},
}


def composed(behavior: Obj, targets: Obj | None = None) -> Obj:
    md = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": "qwen", "namespace": "ml-team"},
        "spec": {
            "replicas": 2,
            "autoscaling": {
                "maxReplicas": 12,
                "targets": targets or TARGETS,
                "behavior": behavior,
            },
        },
    }
    return scaled_object(md, ENDPOINT)


def rules(direction: str, **rule: int) -> Obj:
    behavior: Obj = keda.hpa_behavior(composed({direction: rule}))
    return dict(behavior[direction])


def _version() -> Obj:
    [version] = yaml.safe_load(XRD.read_text())["spec"]["versions"]
    return dict(version)


def _behavior_schema(direction: str) -> Obj:
    autoscaling = _version()["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "autoscaling"
    ]
    schema: Obj = autoscaling["properties"]["behavior"]["properties"][direction]["properties"]
    return schema


# Steps: a Pods policy bounds the replicas added or removed within its period.


def test_a_scale_up_step_adds_at_most_max_replicas_per_step() -> None:
    up = rules("scaleUp", maxReplicasPerStep=4, periodSeconds=60)
    assert hpa.scale_up_limit(3, up) == 7


def test_a_scale_up_step_counts_what_was_added_within_its_period() -> None:
    up = rules("scaleUp", maxReplicasPerStep=4, periodSeconds=60)
    assert hpa.scale_up_limit(7, up, ups=[hpa.Event(age=30, replicas=4)]) == 7
    assert hpa.scale_up_limit(7, up, ups=[hpa.Event(age=90, replicas=4)]) == 11


def test_a_scale_down_step_removes_at_most_max_replicas_per_step() -> None:
    down = rules("scaleDown", maxReplicasPerStep=1, periodSeconds=120)
    assert hpa.scale_down_limit(5, down) == 4
    # One removed a minute ago: none more until the period has passed.
    assert hpa.scale_down_limit(4, down, downs=[hpa.Event(age=60, replicas=1)]) == 4
    assert hpa.scale_down_limit(4, down, downs=[hpa.Event(age=130, replicas=1)]) == 3


def test_a_step_without_a_period_is_a_minute() -> None:
    # Modelplane's default, not the HPA's (15 s): the step's period is always written.
    up = rules("scaleUp", maxReplicasPerStep=2)
    assert up["policies"] == [{"type": "Pods", "value": 2, "periodSeconds": 60}]


# Windows: the HPA holds the recommendation within the window's recommendations.


def test_a_scale_down_window_holds_the_highest_recent_recommendation() -> None:
    window = rules("scaleDown", stabilizationWindowSeconds=300)["stabilizationWindowSeconds"]
    assert hpa.stabilized(6, 3, [(100, 6)], up_window=0, down_window=window) == 6
    assert hpa.stabilized(6, 3, [(400, 6)], up_window=0, down_window=window) == 3


def test_a_scale_up_window_of_zero_follows_the_recommendation_at_once() -> None:
    window = rules("scaleUp", stabilizationWindowSeconds=0)["stabilizationWindowSeconds"]
    assert hpa.stabilized(2, 6, [(10, 2)], up_window=window, down_window=300) == 6


# The XRD admits only what the HPA's validation admits.


@pytest.mark.parametrize("direction", ["scaleUp", "scaleDown"])
def test_the_xrds_window_is_within_the_hpas(direction: str) -> None:
    window = _behavior_schema(direction)["stabilizationWindowSeconds"]
    assert window["minimum"] >= 0
    assert window["maximum"] <= hpa.MAX_STABILIZATION_WINDOW_SECONDS


@pytest.mark.parametrize("direction", ["scaleUp", "scaleDown"])
def test_the_xrds_step_period_is_within_the_hpas(direction: str) -> None:
    period = _behavior_schema(direction)["periodSeconds"]
    assert period["minimum"] > 0
    assert period["maximum"] <= hpa.MAX_PERIOD_SECONDS


@pytest.mark.parametrize("direction", ["scaleUp", "scaleDown"])
def test_the_xrds_step_is_a_positive_policy_value(direction: str) -> None:
    assert _behavior_schema(direction)["maxReplicasPerStep"]["minimum"] > 0


@pytest.mark.parametrize("direction", ["scaleUp", "scaleDown"])
def test_every_composed_policy_is_one_the_hpa_accepts(direction: str) -> None:
    for policy in rules(direction, maxReplicasPerStep=1, periodSeconds=1800)["policies"]:
        assert policy["type"] in hpa.POLICY_TYPES
        assert 0 < policy["periodSeconds"] <= hpa.MAX_PERIOD_SECONDS


# The waiting target: an AverageValue, which the HPA divides by the replicas itself.


def _trigger(name: str) -> Obj:
    so = composed({})
    [trigger] = [t for t in so["spec"]["triggers"] if t["name"] == name]
    return dict(trigger)


def test_the_waiting_target_is_an_average_over_the_fleet_total() -> None:
    waiting = _trigger("waiting")
    assert waiting["metricType"] == "AverageValue"
    assert waiting["metadata"]["query"].startswith("sum(")


def test_the_waiting_target_asks_for_one_replica_per_target_waiting_requests() -> None:
    # 17 requests waiting across the fleet, 4 a replica: 5 replicas, whatever runs now.
    threshold = float(_trigger("waiting")["metadata"]["threshold"])
    assert hpa.external_average_value(status_replicas=2, usage=17, target=threshold) == 5


# What the HPA needs from the ModelDeployment's scale subresource.


def test_the_scale_subresource_gives_the_hpa_a_selector() -> None:
    assert "labelSelectorPath" in _version()["subresources"]["scale"]


@pytest.mark.parametrize("name", ["waiting", "kv-cache", "ttft-p90", "itl-p90"])
def test_every_target_is_computed_without_pods_on_the_control_plane(name: str) -> None:
    """Each trigger is an AverageValue: the HPA divides the fleet-wide total by the threshold and
    lists no pod. Two replicas each 1.5 times over the target ask for three (the HPA reads
    quantities in thousandths, hence the rounding)."""
    trigger = _trigger(name)
    assert trigger["metricType"] == "AverageValue"
    threshold = float(trigger["metadata"]["threshold"])
    assert hpa.external_average_value(2, round(2 * threshold * 1.5, 3), threshold) == 3
