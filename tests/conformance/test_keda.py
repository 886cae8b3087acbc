"""The ScaledObject Modelplane composes, as KEDA v2.20.2 reads it.

The facts, each with its file at kedacore/keda v2.20.2, are in ``tests/conformance/keda.py``:
the prometheus scaler's metadata keys, types and defaults (pkg/scalers/prometheus_scaler.go),
how a trigger and its threshold are read (apis/keda/v1alpha1/scaletriggers_types.go,
pkg/scalers/scalersconfig/typed_config.go, pkg/scalers/scaler.go), that a custom resource is
scaled through its scale subresource (controllers/keda/scaledobject_controller.go,
pkg/scaling/executor/scale_scaledobjects.go, pkg/scaling/resolver/scale_resolvers.go), the HPA
KEDA creates (controllers/keda/hpa.go) and how ``minReplicaCount`` 0 and 1 or more are handled
(pkg/scaling/executor/scale_scaledobjects.go ``RequestScale``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from modelplane.compose.modeldeployment.autoscaling import (
    FORCE_ACTIVATION,
    held_awake,
    scaled_object,
)
from modelplane.compose.shared import scaletozero
from modelplane.compose.shared.metricsconfig import MetricsEndpoint
from modelplane.kube.admission import Admission
from tests.conformance import keda

Obj = dict[str, Any]
XRD = Path(__file__).resolve().parents[2] / "apis" / "modeldeployments" / "definition.yaml"
ENDPOINT = MetricsEndpoint(
    "http://thanos-query.monitoring:9090",
    {"name": "thanos-reader", "kind": "ClusterTriggerAuthentication"},
)
TARGETS = {
    "waitingRequestsPerReplica": 4,
    "kvCacheUtilization": 80,
    "timeToFirstToken": {"p90": "800ms"},
    "interTokenLatency": {"p90": "60ms"},
}
BEHAVIOR = {
    "scaleUp": {"stabilizationWindowSeconds": 0, "maxReplicasPerStep": 4, "periodSeconds": 60},
    "scaleDown": {"stabilizationWindowSeconds": 300, "maxReplicasPerStep": 1, "periodSeconds": 120},
}


FRONT_DOOR = (
    scaletozero.rule_cluster("gateways", "models-main"),
    scaletozero.rule_cluster("gateways", "front-main"),
)
"""The clusters a ModelService selecting the deployment publishes (``status.activation``)."""
KEDA_CRD = Path(__file__).resolve().parents[1] / "upstream" / "crds" / "keda.sh_scaledobjects.yaml"


def deployment(**scaling: Any) -> Obj:
    autoscaling = {"maxReplicas": 12, "targets": TARGETS, "behavior": BEHAVIOR, **scaling}
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelDeployment",
        "metadata": {"name": "qwen", "namespace": "ml-team"},
        "spec": {"replicas": 2, "autoscaling": autoscaling},
    }


def composed(*, clusters: Sequence[str] = FRONT_DOOR, **scaling: Any) -> Obj:
    """The ScaledObject of a deployment with ``scaling``, behind a ModelService whose front door
    publishes ``clusters`` (only a deployment that may sleep reads them)."""
    return scaled_object(deployment(**scaling), ENDPOINT, clusters)


def trigger_ids(t: Obj) -> str:
    return str(t["name"])


SLEEPS: Obj = {"minReplicas": 0, "scaleToZero": {"idleSeconds": 900}}
LOAD_TRIGGERS = composed()["spec"]["triggers"]
SLEEPY_TRIGGERS = composed(**SLEEPS)["spec"]["triggers"]
TRIGGERS = [*LOAD_TRIGGERS, *(t for t in SLEEPY_TRIGGERS if t["name"] == "front-door")]
"""Every trigger kind composed: one per target, and the front door of one that may sleep."""


@functools.cache
def crd() -> Admission:
    return Admission.from_paths([KEDA_CRD])


def _scale_subresource() -> Obj:
    [version] = yaml.safe_load(XRD.read_text())["spec"]["versions"]
    scale: Obj = version["subresources"]["scale"]
    return scale


# (a) The prometheus scaler's metadata.


def test_every_target_becomes_a_trigger() -> None:
    # Guards the parametrized tests below against an empty list.
    assert len(LOAD_TRIGGERS) == len(TARGETS)


def test_a_deployment_that_may_sleep_has_one_trigger_more_than_its_targets() -> None:
    assert len(SLEEPY_TRIGGERS) == len(TARGETS) + 1


@pytest.mark.parametrize("scaling", [{}, SLEEPS], ids=["awake", "may-sleep"])
def test_the_scaled_object_passes_kedas_crd(scaling: Obj) -> None:
    assert [str(e) for e in crd().admit(composed(**scaling)).errors] == []


@pytest.mark.parametrize("trigger", SLEEPY_TRIGGERS, ids=trigger_ids)
def test_every_activation_threshold_of_a_deployment_that_may_sleep_parses(trigger: Obj) -> None:
    assert keda.parses_as_float64(trigger["metadata"]["activationThreshold"])


@pytest.mark.parametrize("trigger", TRIGGERS, ids=trigger_ids)
def test_every_trigger_is_the_prometheus_scaler(trigger: Obj) -> None:
    assert trigger["type"] == "prometheus"


@pytest.mark.parametrize("trigger", TRIGGERS, ids=trigger_ids)
def test_every_trigger_field_is_one_keda_reads(trigger: Obj) -> None:
    assert set(trigger) <= keda.TRIGGER_FIELDS


@pytest.mark.parametrize("trigger", TRIGGERS, ids=trigger_ids)
def test_every_metadata_key_is_one_the_prometheus_scaler_parses(trigger: Obj) -> None:
    # KEDA ignores any other key, silently unless KEDA_CHECK_UNEXPECTED_SCALERS_PARAMS is set.
    assert set(trigger["metadata"]) - set(keda.PROMETHEUS_METADATA) == set()


@pytest.mark.parametrize("trigger", TRIGGERS, ids=trigger_ids)
def test_every_key_the_prometheus_scaler_requires_is_set(trigger: Obj) -> None:
    required = {k for k, p in keda.PROMETHEUS_METADATA.items() if p.required}
    assert required - set(trigger["metadata"]) == set()


@pytest.mark.parametrize("trigger", TRIGGERS, ids=trigger_ids)
def test_every_metadata_value_is_a_string(trigger: Obj) -> None:
    # ScaleTriggers.Metadata is a map[string]string.
    assert all(isinstance(v, str) for v in trigger["metadata"].values())


@pytest.mark.parametrize("trigger", TRIGGERS, ids=trigger_ids)
def test_every_float_value_parses_as_keda_parses_a_float64(trigger: Obj) -> None:
    floats = {k for k, p in keda.PROMETHEUS_METADATA.items() if p.go_type == "float64"}
    for key in floats & set(trigger["metadata"]):
        assert keda.parses_as_float64(trigger["metadata"][key]), key


@pytest.mark.parametrize("trigger", TRIGGERS, ids=trigger_ids)
def test_every_threshold_survives_kedas_milli_quantity(trigger: Obj) -> None:
    threshold = float(trigger["metadata"]["threshold"])
    assert keda.milli_target(threshold) == pytest.approx(threshold)


@pytest.mark.parametrize("trigger", TRIGGERS, ids=trigger_ids)
def test_every_metric_type_is_one_a_scaler_accepts(trigger: Obj) -> None:
    assert trigger["metricType"] in keda.METRIC_TYPES


@pytest.mark.parametrize("trigger", TRIGGERS, ids=trigger_ids)
def test_a_deployment_without_series_reads_zero_rather_than_failing(trigger: Obj) -> None:
    # ignoreNullValues (default true) turns an empty result or NaN into 0: a new deployment
    # whose engines have not been scraped yet is not an error.
    param = keda.PROMETHEUS_METADATA["ignoreNullValues"]
    assert trigger["metadata"].get("ignoreNullValues", param.default) == "true"


@pytest.mark.parametrize("trigger", TRIGGERS, ids=trigger_ids)
def test_every_query_returns_at_most_one_sample(trigger: Obj) -> None:
    # ExecutePromQuery fails on a result of more than one element: the outermost expression
    # aggregates without grouping (the quantile's ``by (le)`` is consumed inside it).
    query = trigger["metadata"]["query"]
    outer = re.match(r"^(sum|avg|histogram_quantile)\(", query)
    assert outer is not None, query
    if outer.group(1) == "histogram_quantile":
        assert query.startswith("histogram_quantile(0.9, sum by (le) ("), query
    else:
        assert not re.match(r"^\w+ (by|without) ", query), query


@pytest.mark.parametrize("trigger", TRIGGERS, ids=trigger_ids)
def test_the_platforms_authentication_reference_is_one_keda_reads(trigger: Obj) -> None:
    assert set(trigger["authenticationRef"]) <= keda.AUTHENTICATION_REF_FIELDS


# (b) A custom resource is scaled through its scale subresource.


def test_the_scale_target_names_its_api_version_and_kind() -> None:
    # ParseGVKR reads an empty apiVersion as apps/v1 and an empty kind as Deployment.
    ref = composed()["spec"]["scaleTargetRef"]
    assert (ref["apiVersion"], ref["kind"]) == ("modelplane.ai/v1alpha1", "ModelDeployment")


def test_the_scale_target_has_the_scale_subresource_keda_reads_and_writes() -> None:
    assert "specReplicasPath" in _scale_subresource()


def test_keda_reads_the_replicas_the_scale_subresource_maps() -> None:
    # GetCurrentReplicas reads a custom resource's spec.replicas before its /scale: both must
    # be the same field.
    assert _scale_subresource()["specReplicasPath"] == "." + ".".join(keda.REPLICAS_FIELD)


# (c) The behavior reaches the HPA unchanged.


def test_the_hpa_keda_creates_has_the_composed_behavior() -> None:
    assert keda.hpa_behavior(composed()) == {
        "scaleUp": {
            "stabilizationWindowSeconds": 0,
            "policies": [{"type": "Pods", "value": 4, "periodSeconds": 60}],
        },
        "scaleDown": {
            "stabilizationWindowSeconds": 300,
            "policies": [{"type": "Pods", "value": 1, "periodSeconds": 120}],
        },
    }


def test_the_hpa_keda_creates_has_the_deployments_bounds() -> None:
    so = composed(minReplicas=2)
    assert (keda.hpa_min_replicas(so), keda.hpa_max_replicas(so)) == (2, 12)


# (d) minReplicaCount 0 and 1 or more.


def test_the_minimum_is_always_written() -> None:
    # KEDA reads an absent minReplicaCount as 0, which would let it scale the deployment to zero.
    so = composed()
    assert so["spec"].get("minReplicaCount", keda.DEFAULT_MIN_REPLICA_COUNT) == 1


@pytest.mark.parametrize("active", [True, False])
@pytest.mark.parametrize("current", [1, 2, 12])
def test_keda_never_takes_a_deployment_with_a_minimum_of_one_to_zero(
    active: bool, current: int
) -> None:
    write = keda.request_scale(composed(), current, active)
    assert write is None or write.replicas >= 1


def test_keda_restores_the_minimum_of_a_deployment_below_it() -> None:
    assert keda.request_scale(composed(minReplicas=2), 0, active=False) == keda.ScaleWrite(2)


def test_keda_wakes_a_deployment_at_zero_to_one() -> None:
    so = composed(minReplicas=0, scaleToZero={"idleSeconds": 900})
    assert keda.request_scale(so, 0, active=True) == keda.ScaleWrite(1)


def test_keda_wakes_a_deployment_nothing_could_wake_to_its_one_replica() -> None:
    # No ModelService publishes a front door for it: it keeps one replica, asleep or not.
    so = composed(clusters=(), **SLEEPS)
    assert keda.request_scale(so, 0, active=False) == keda.ScaleWrite(1)


def test_keda_never_puts_a_deployment_nothing_could_wake_to_sleep() -> None:
    assert keda.request_scale(composed(clusters=(), **SLEEPS), 2, active=False) is None


def test_the_front_door_asks_the_hpa_for_one_replica_at_most() -> None:
    [front] = [t for t in SLEEPY_TRIGGERS if t["name"] == "front-door"]
    target = keda.milli_target(float(front["metadata"]["threshold"]))
    # AverageValue: the HPA asks ceil(total / target); a front gateway's request rate is far
    # below 100,000 a second.
    assert 0 < 100_000 / target <= 1


def test_the_hpa_of_a_deployment_that_may_sleep_keeps_one_replica() -> None:
    # The HPA scales 1..max; KEDA alone takes the deployment to and from zero.
    so = composed(minReplicas=0, scaleToZero={"idleSeconds": 900})
    assert keda.hpa_min_replicas(so) == 1


def test_a_trigger_is_active_only_above_its_activation_threshold() -> None:
    activation = float(keda.PROMETHEUS_METADATA["activationThreshold"].default or "0")
    assert not keda.is_active(0.0, activation)
    assert keda.is_active(0.001, activation)


# (e) The HPA Modelplane reads status.autoscaling from.


def test_the_hpa_keda_creates_is_named_keda_hpa_and_the_deployment() -> None:
    assert keda.hpa_name(composed()) == "keda-hpa-qwen"


def test_a_deployment_that_may_sleep_goes_to_zero_after_its_idle_seconds() -> None:
    so = composed(minReplicas=0, scaleToZero={"idleSeconds": 900})
    assert keda.request_scale(so, 2, active=False) == keda.ScaleWrite(0, 900)


def test_a_deployment_held_awake_is_never_put_to_sleep() -> None:
    so = held_awake(composed(minReplicas=0, scaleToZero={"idleSeconds": 900}))
    assert keda.request_scale(so, 1, active=False) is None


def test_the_annotation_that_holds_it_awake_is_the_one_keda_reads() -> None:
    assert FORCE_ACTIVATION == keda.FORCE_ACTIVATION
