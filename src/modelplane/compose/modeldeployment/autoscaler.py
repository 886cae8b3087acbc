"""The deployment composer's autoscaling stage: the replica count placement reads, the
ScaledObject that drives it, and what KEDA's HPA last decided (docs/design/autoscaling.md).

KEDA writes ``spec.replicas`` through the scale subresource. Placement reads that number clamped
into ``[minReplicas, maxReplicas]``; the ScaledObject is composed once the platform has named its
fleet-wide Prometheus, and kept as last composed while that name cannot be read (nothing that
scales is dropped because a lookup came back empty). Its state and the HPA's are reported in
``status.autoscaling`` and the ``Autoscaling`` condition, never in the deployment's readiness:
a deployment whose autoscaler is down still serves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.compose.modeldeployment.autoscaling import (
    METRICS_CONFIG,
    SCALED_OBJECT,
    MetricsEndpoint,
    desired_replicas,
    scaled_object,
)
from modelplane.composer import Condition, Desired, Inputs, Requirement, Result, carried
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.labels import DEPLOYMENT
from modelplane.reasons import ModelDeployment

METRICS = "autoscaling-metrics"
"""The requirement for the EnvironmentConfig naming the fleet-wide Prometheus."""
HPA = "autoscaling-hpa"
"""The requirement for the HorizontalPodAutoscaler KEDA makes from the ScaledObject."""
ENVIRONMENT_CONFIG_API = "apiextensions.crossplane.io/v1beta1"
HPA_PREFIX = "keda-hpa-"
"""KEDA names the HPA it drives after the ScaledObject (checked in tests/conformance)."""

AUTOSCALING = ModelDeployment.AUTOSCALING


@dataclass(frozen=True)
class Scaling:
    """What the autoscaling stage adds to the deployment's result."""

    composite: Obj
    """The deployment as placement reads it: ``spec.replicas`` within the bounds."""
    resources: dict[str, Desired] = field(default_factory=dict)
    requirements: dict[str, Requirement] = field(default_factory=dict)
    condition: Condition | None = None
    status: Obj | None = None

    def into(self, result: Result) -> Result:
        """``result`` with the ScaledObject, the lookups and the report added (a fatal result
        applies nothing, so it is left as it is)."""
        if result.fatal is not None or self.condition is None:
            return result
        result.resources.update(self.resources)
        result.requirements.update(self.requirements)
        result.conditions.append(self.condition)
        result.status["autoscaling"] = self.status or {}
        # The HPA refuses a scale target that reports no selector, whatever its metrics are.
        result.status["selector"] = f"{DEPLOYMENT}={objects.name(self.composite)}"
        return result


def hpa_name(md: Mapping[str, Any]) -> str:
    return HPA_PREFIX + objects.name(md)


def requirements(md: Mapping[str, Any]) -> dict[str, Requirement]:
    config = Requirement(ENVIRONMENT_CONFIG_API, "EnvironmentConfig", match_name=METRICS_CONFIG)
    hpa = Requirement(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        match_name=hpa_name(md),
        namespace=objects.namespace(md) or None,
    )
    return {METRICS: config, HPA: hpa}


def stage(inputs: Inputs) -> Scaling:
    """The autoscaling stage of ``inputs``' deployment; a deployment without
    ``spec.autoscaling`` passes through unchanged (a ScaledObject composed before is then not
    desired, and goes)."""
    md = inputs.composite
    spec = objects.spec(md)
    scaling = spec.get("autoscaling")
    if not scaling:
        return Scaling(md)
    replicas = desired_replicas(spec)
    composite = md
    if replicas != spec["replicas"]:
        composite = {**md, "spec": {**spec, "replicas": replicas}}
    low, high = int(scaling.get("minReplicas", 1)), int(scaling["maxReplicas"])
    bounds = {"minReplicas": low, "maxReplicas": high}
    asks = requirements(md)
    observed = inputs.observed.get(SCALED_OBJECT)
    if METRICS not in inputs.required:
        waiting = Condition(
            AUTOSCALING,
            "Unknown",
            ModelDeployment.WAITING_FOR_AUTOSCALER,
            f"reading the EnvironmentConfig {METRICS_CONFIG}",
        )
        return Scaling(composite, _kept(observed), asks, waiting, bounds)
    configs = inputs.required[METRICS]
    endpoint = MetricsEndpoint.from_config(configs[0] if configs else None)
    if endpoint is None:
        return Scaling(composite, _kept(observed), asks, _no_endpoint(bool(configs)), bounds)
    # Ready regardless of KEDA's own report: the deployment serves whatever its autoscaler says;
    # the Autoscaling condition carries KEDA's state.
    resources = {SCALED_OBJECT: Desired(scaled_object(md, endpoint), "True")}
    hpa = _first(inputs.required.get(HPA))
    status = {**bounds, **_decided(hpa)}
    clamped = _clamped(spec, replicas)
    return Scaling(composite, resources, asks, _judge(observed, hpa, clamped), status)


def _kept(observed: Obj | None) -> dict[str, Desired]:
    return {} if observed is None else {SCALED_OBJECT: Desired(carried(observed), "True")}


def _first(objs: list[Obj] | None) -> Obj | None:
    return objs[0] if objs else None


def _no_endpoint(config_exists: bool) -> Condition:
    missing = "has no data.prometheus.serverAddress" if config_exists else "does not exist"
    return Condition(
        AUTOSCALING,
        "False",
        ModelDeployment.NO_METRICS_ENDPOINT,
        f"the EnvironmentConfig {METRICS_CONFIG} {missing}: no fleet-wide Prometheus to read "
        "load from, so spec.replicas stands as written",
    )


def _decided(hpa: Obj | None) -> Obj:
    """What KEDA's HPA last decided, as status.autoscaling shows it."""
    status = objects.status(hpa)
    out: Obj = {}
    for key in ("desiredReplicas", "currentReplicas", "lastScaleTime"):
        if status.get(key) is not None:
            out[key] = status[key]
    return out


def _clamped(spec: Mapping[str, Any], replicas: int) -> str:
    written = spec["replicas"]
    if written == replicas:
        return ""
    scaling = spec["autoscaling"]
    low, high = int(scaling.get("minReplicas", 1)), int(scaling["maxReplicas"])
    return f"; spec.replicas {written} is outside [{low}, {high}]: {replicas} placed"


def _judge(observed: Obj | None, hpa: Obj | None, clamped: str) -> Condition:
    """The Autoscaling condition from KEDA's report on the ScaledObject and its HPA's."""
    ready = objects.condition(observed, "Ready")
    if ready is None:
        return Condition(
            AUTOSCALING,
            "Unknown",
            ModelDeployment.WAITING_FOR_AUTOSCALER,
            "the ScaledObject reports no Ready condition yet (is KEDA running?)" + clamped,
        )
    if ready.get("status") != "True":
        message = str(ready.get("message") or ready.get("reason") or "not Ready")
        return Condition(
            AUTOSCALING,
            "False",
            ModelDeployment.AUTOSCALER_NOT_READY,
            f"KEDA: {message}" + clamped,
        )
    if hpa is None:
        return Condition(
            AUTOSCALING,
            "Unknown",
            ModelDeployment.WAITING_FOR_AUTOSCALER,
            f"the HorizontalPodAutoscaler {hpa_name_of(observed)} is not read yet" + clamped,
        )
    limited = objects.condition(hpa, "ScalingLimited")
    if limited is not None and limited.get("reason") == "TooManyReplicas":
        return Condition(
            AUTOSCALING,
            "True",
            ModelDeployment.AT_MAX_REPLICAS,
            f"HPA: {limited.get('message', '')}" + clamped,
        )
    return Condition(AUTOSCALING, "True", ModelDeployment.SCALING, _last(hpa) + clamped)


def hpa_name_of(scaled: Obj | None) -> str:
    """The HPA KEDA reports for the ScaledObject, or the name it gives one."""
    reported = objects.status(scaled).get("hpaName")
    return str(reported) if reported else HPA_PREFIX + objects.name(scaled)


def _last(hpa: Obj) -> str:
    status = objects.status(hpa)
    desired, when = status.get("desiredReplicas"), status.get("lastScaleTime")
    if desired is None:
        return "the autoscaler has not decided yet"
    said = f"the autoscaler asks for {desired} replicas"
    return f"{said} (last scaled {when})" if when else said
