"""A ModelDeployment with spec.autoscaling, reconciled through the FunctionRunner: it composes
the ScaledObject once the platform names its Prometheus, places the replica count the bounds
allow, and says what KEDA's HPA last decided, without ever making the deployment's readiness
depend on its autoscaler (docs/design/autoscaling.md)."""

from __future__ import annotations

import copy
import functools
from typing import Any

import pytest

from modelplane.compose.modeldeployment.autoscaler import HPA, METRICS
from modelplane.compose.modeldeployment.autoscaling import SCALED_OBJECT
from modelplane.kube.admission import Admission
from tests.compose.through import Response, deployment_required, reconcile_deployment, run
from tests.fleet.builders import deployment, fleet, with_condition
from tests.upstream_crds import UPSTREAM_CRDS

Obj = dict[str, Any]
CONFIG = {
    "apiVersion": "apiextensions.crossplane.io/v1beta1",
    "kind": "EnvironmentConfig",
    "metadata": {"name": "modelplane-autoscaling"},
    "data": {"prometheus": {"serverAddress": "http://thanos-query.monitoring:9090"}},
}


@functools.cache
def keda() -> Admission:
    return Admission.from_paths([UPSTREAM_CRDS / "keda.sh_scaledobjects.yaml"])


def autoscaled(replicas: int = 2, **scaling: Any) -> Obj:
    md = deployment(replicas=replicas)
    md["spec"]["autoscaling"] = {
        "maxReplicas": 3,
        "targets": {"waitingRequestsPerReplica": 4},
        **scaling,
    }
    return md


def hpa(desired: int = 2, *, limited: str = "DesiredWithinRange") -> Obj:
    obj = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "keda-hpa-qwen", "namespace": "ml"},
        "status": {
            "desiredReplicas": desired,
            "currentReplicas": 2,
            "lastScaleTime": "2026-12-05T10:00:00Z",
        },
    }
    message = "the desired replica count is more than the maximum replica count"
    return with_condition(obj, "ScalingLimited", "True", limited, message)


def scaled_object_observed(ready: str = "True", message: str = "ScaledObject is ready") -> Obj:
    rsp = reconciled(autoscaled(), config=[CONFIG])
    observed = copy.deepcopy(rsp.resources[SCALED_OBJECT])
    return with_condition(observed, "Ready", ready, "ScaledObjectReady", message)


def reconciled(
    md: Obj,
    observed: dict[str, Obj] | None = None,
    *,
    config: list[Obj] | None = None,
    hpas: list[Obj] | None = None,
) -> Response:
    return reconcile_deployment(
        md,
        fleet("east", "west", "north"),
        observed,
        unrouted=True,
        **{METRICS: config, HPA: hpas},
    )


def placed(rsp: Response) -> int:
    return sum(1 for r in rsp.resources.values() if r["kind"] == "ModelReplica")


def test_a_manual_deployment_composes_no_scaled_object_and_asks_for_nothing_more() -> None:
    rsp = reconciled(deployment(replicas=2))
    assert SCALED_OBJECT not in rsp.resources
    assert "Autoscaling" not in rsp.conditions
    assert METRICS not in rsp.by_name and HPA not in rsp.by_name


def test_an_autoscaled_deployment_asks_for_the_named_prometheus_and_kedas_hpa() -> None:
    rsp = reconciled(autoscaled())
    assert rsp.by_name[METRICS] == ("EnvironmentConfig", "modelplane-autoscaling", None)
    assert rsp.by_name[HPA] == ("HorizontalPodAutoscaler", "keda-hpa-qwen", "ml")


def test_until_the_environment_config_is_read_the_autoscaler_is_unknown() -> None:
    rsp = reconciled(autoscaled())
    status, reason, message = rsp.condition("Autoscaling")
    assert (status, reason) == ("Unknown", "WaitingForAutoscaler")
    assert "modelplane-autoscaling" in message
    assert SCALED_OBJECT not in rsp.resources


def test_without_a_named_prometheus_replicas_stand_as_written() -> None:
    rsp = reconciled(autoscaled(replicas=2), config=[])
    status, reason, message = rsp.condition("Autoscaling")
    assert (status, reason) == ("False", "NoMetricsEndpoint")
    assert "does not exist" in message
    assert SCALED_OBJECT not in rsp.resources
    assert placed(rsp) == 2


def test_a_config_without_a_server_address_is_named_as_such() -> None:
    empty = {**CONFIG, "data": {"prometheus": {}}}
    _, reason, message = reconciled(autoscaled(), config=[empty]).condition("Autoscaling")
    assert reason == "NoMetricsEndpoint"
    assert "has no data.prometheus.serverAddress" in message


def test_a_scaled_object_composed_before_is_kept_while_the_prometheus_is_not_named() -> None:
    observed = {SCALED_OBJECT: scaled_object_observed()}
    rsp = reconciled(autoscaled(), observed, config=[])
    assert rsp.resources[SCALED_OBJECT]["spec"] == observed[SCALED_OBJECT]["spec"]


def test_a_named_prometheus_composes_a_scaled_object_kedas_crd_admits() -> None:
    rsp = reconciled(autoscaled(), config=[CONFIG])
    so = rsp.resources[SCALED_OBJECT]
    assert so["spec"]["scaleTargetRef"]["name"] == "qwen"
    assert so["spec"]["triggers"][0]["metadata"]["serverAddress"] == (
        "http://thanos-query.monitoring:9090"
    )
    assert [str(e) for e in keda().admit(so).errors] == []


def test_the_scaled_object_never_holds_back_the_deployments_readiness() -> None:
    rsp = reconciled(
        autoscaled(), {SCALED_OBJECT: scaled_object_observed("False")}, config=[CONFIG]
    )
    assert rsp.ready[SCALED_OBJECT] == "READY_TRUE"


def test_a_scaled_object_keda_has_not_judged_yet_leaves_the_autoscaler_unknown() -> None:
    rsp = reconciled(autoscaled(), config=[CONFIG])
    status, reason, message = rsp.condition("Autoscaling")
    assert (status, reason) == ("Unknown", "WaitingForAutoscaler")
    assert "KEDA" in message


def test_a_scaled_object_keda_refuses_is_reported_with_kedas_words() -> None:
    refused = scaled_object_observed("False", 'prometheus query "sum(x)" failed: 400')
    rsp = reconciled(autoscaled(), {SCALED_OBJECT: refused}, config=[CONFIG], hpas=[])
    status, reason, message = rsp.condition("Autoscaling")
    assert (status, reason) == ("False", "AutoscalerNotReady")
    assert 'prometheus query "sum(x)" failed: 400' in message


def test_a_ready_scaled_object_waits_for_its_hpa_to_be_read() -> None:
    rsp = reconciled(autoscaled(), {SCALED_OBJECT: scaled_object_observed()}, config=[CONFIG])
    status, reason, message = rsp.condition("Autoscaling")
    assert (status, reason) == ("Unknown", "WaitingForAutoscaler")
    assert "keda-hpa-qwen" in message


def test_the_hpas_last_decision_is_the_deployments_autoscaling_status() -> None:
    observed = {SCALED_OBJECT: scaled_object_observed()}
    rsp = reconciled(autoscaled(minReplicas=1), observed, config=[CONFIG], hpas=[hpa(3)])
    assert rsp.status["autoscaling"] == {
        "minReplicas": 1,
        "maxReplicas": 3,
        "desiredReplicas": 3,
        "currentReplicas": 2,
        "lastScaleTime": "2026-12-05T10:00:00Z",
    }
    status, reason, message = rsp.condition("Autoscaling")
    assert (status, reason) == ("True", "Scaling")
    assert "asks for 3 replicas (last scaled 2026-12-05T10:00:00Z)" in message


def test_load_past_max_replicas_says_the_autoscaler_is_at_its_ceiling() -> None:
    observed = {SCALED_OBJECT: scaled_object_observed()}
    limited = hpa(3, limited="TooManyReplicas")
    rsp = reconciled(autoscaled(replicas=3), observed, config=[CONFIG], hpas=[limited])
    status, reason, message = rsp.condition("Autoscaling")
    assert (status, reason) == ("True", "AtMaxReplicas")
    assert "more than the maximum replica count" in message


@pytest.mark.parametrize(("written", "expected"), [(5, 3), (1, 2)])
def test_replicas_outside_the_bounds_are_placed_clamped_and_said(
    written: int, expected: int
) -> None:
    md = autoscaled(replicas=written, minReplicas=2)
    observed = {SCALED_OBJECT: scaled_object_observed()}
    rsp = reconciled(md, observed, config=[CONFIG], hpas=[hpa()])
    assert placed(rsp) == expected
    assert (
        f"spec.replicas {written} is outside [2, 3]: {expected} placed"
        in rsp.condition("Autoscaling")[2]
    )


def test_turning_autoscaling_off_drops_the_scaled_object() -> None:
    rsp = reconciled(deployment(replicas=2), {SCALED_OBJECT: scaled_object_observed()})
    assert SCALED_OBJECT not in rsp.resources


def test_a_malformed_deployment_stays_fatal_with_autoscaling() -> None:
    md = autoscaled()
    del md["spec"]["template"]["spec"]
    rsp = run(md, {}, deployment_required(fleet("east"), unrouted=True, **{METRICS: [CONFIG]}))
    assert rsp.fatal is not None and "spec.template.spec" in rsp.fatal


def test_an_autoscaled_deployment_reports_the_selector_the_hpa_requires() -> None:
    assert reconciled(autoscaled()).status["selector"] == "modelplane.ai/deployment=qwen"


def test_a_manual_deployment_reports_no_selector() -> None:
    assert "selector" not in reconciled(deployment(replicas=2)).status
