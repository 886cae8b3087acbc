"""What KEDA v2.20.2 makes of a ScaledObject, as data and small models of its code.

Read from github.com/kedacore/keda at tag v2.20.2 (68a5b5028f35); each fact below names its file.

- pkg/scalers/prometheus_scaler.go ``prometheusMetadata``: the keys the prometheus scaler parses
  from a trigger's ``metadata`` (``keda:"name=..., order=triggerMetadata"`` tags), with their Go
  types, which are optional and which default (``IgnoreNullValues bool
  keda:"name=ignoreNullValues, order=triggerMetadata, default=true"``), and its embedded
  ``PrometheusAuth *authentication.Config`` whose triggerMetadata keys are in
  pkg/scalers/authentication/authentication_types.go. ``ExecutePromQuery``: an empty result, or
  NaN/Inf, reads 0 when ``ignoreNullValues``; a result of more than one element is an error
  ("prometheus query %s returned multiple elements"). ``GetMetricsAndActivity``: the trigger is
  active when ``val > s.metadata.ActivationThreshold``.
- pkg/scalers/scalersconfig/typed_config.go: ``setConfigValueHelper`` parses a ``float64`` with
  ``json.Unmarshal`` and a ``bool`` with ``strconv.ParseBool``; a metadata key the scaler
  does not parse is ignored, and reported ("Unmatched input property %s in scaler %s", a
  Warning event, by ``checkUnexpectedParameterExist``) only when the operator runs with
  ``KEDA_CHECK_UNEXPECTED_SCALERS_PARAMS=enabled``.
- apis/keda/v1alpha1/scaletriggers_types.go ``ScaleTriggers``: ``type``, ``name``,
  ``useCachedMetrics``, ``metadata map[string]string``, ``authenticationRef`` (``name``,
  ``kind``), ``metricType``; pkg/scalers/scaler.go ``GetMetricTargetType``: ``Utilization`` is
  refused, empty is ``AverageValue``; ``GetMetricTargetMili`` / ``quantityFromFloat64``: the
  threshold becomes the HPA target ``resource.MustParse(fmt.Sprintf("%.3f", value))``.
- apis/keda/v1alpha1/gvkr.go ``ParseGVKR``: an empty ``scaleTargetRef.apiVersion`` is
  ``apps/v1``, an empty ``kind`` is ``Deployment``.
- controllers/keda/scaledobject_controller.go ``checkTargetResourceIsScalable``: the target is
  checked through its scale subresource (``r.ScaleClient.Scales(ns).Get(ctx, gr, name)``; an
  object without one is refused, ``ScaleTargetNoSubresourceMsg``);
  pkg/scaling/executor/scale_scaledobjects.go ``updateScaleOnScaleTarget`` writes
  ``scale.Spec.Replicas`` through ``e.scaleClient.Scales(ns).Update``; pkg/scaling/resolver/
  scale_resolvers.go ``GetCurrentReplicas`` reads a custom resource's ``spec.replicas`` from the
  object ("in practice most implementations use spec.replicas ... best effort heuristic"), else
  from the scale subresource.
- controllers/keda/hpa.go ``newHPAForScaledObject``: the HPA's ``Behavior`` is
  ``scaledObject.Spec.Advanced.HorizontalPodAutoscalerConfig.Behavior`` as it stands (changed
  only by the paused-scale-in/out annotations, which Modelplane does not set); its min and max
  are ``GetHPAMinReplicas`` (``minReplicaCount`` when above 0, else 1) and ``GetHPAMaxReplicas``
  (``maxReplicaCount``, else 100; apis/keda/v1alpha1/scaledobject_types.go); ``getHPAName``:
  ``advanced.horizontalPodAutoscalerConfig.name`` when set, else ``keda-hpa-<ScaledObject
  name>`` (``getDefaultHpaName``), recorded in the ScaledObject's ``status.hpaName``.
- pkg/scaling/executor/scale_scaledobjects.go ``RequestScale`` (no idle replicas, no fallback, no
  failing trigger): ``minReplicaCount`` unset is 0; active at 0 replicas, ``scaleFromZeroOrIdle``
  writes ``minReplicaCount`` when above 0, else 1; inactive above 0 replicas with a minimum of 0,
  ``scaleToZeroOrIdle`` writes 0 once ``lastActiveTime + cooldownPeriod`` has passed
  (``defaultCooldownPeriod = 5 * 60``, pkg/scaling/executor/scale_executor.go); inactive below
  the minimum, it writes ``minReplicaCount``; otherwise the HPA scales. A ScaledObject annotated
  ``autoscaling.keda.sh/force-activation: "true"`` is active whatever its triggers read
  (``scaledObject.NeedToForceActivation()``, apis/keda/v1alpha1/scaledobject_types.go
  ``getBoolAnnotation``), and pkg/scaling/scale_handler.go ``checkScalers`` reads the
  ScaledObject afresh on every poll, so the annotation counts from the next poll.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modelplane.kube import objects

REPOSITORY = "kedacore/keda"
TAG = "v2.20.2"
COMMIT = "68a5b5028f35b22d50597c69819ab32c4e92f21a"
PROMETHEUS_SCALER = "pkg/scalers/prometheus_scaler.go"
AUTHENTICATION = "pkg/scalers/authentication/authentication_types.go"
SCALE_TRIGGERS = "apis/keda/v1alpha1/scaletriggers_types.go"


@dataclass(frozen=True)
class Param:
    """One trigger metadata key a scaler parses."""

    go_type: str
    required: bool = False
    default: str | None = None
    source: str = PROMETHEUS_SCALER


PROMETHEUS_METADATA: dict[str, Param] = {
    "serverAddress": Param("string", required=True),
    "query": Param("string", required=True),
    "queryParameters": Param("map[string]string"),
    "threshold": Param("float64", required=True),
    "activationThreshold": Param("float64", default="0"),
    "namespace": Param("string"),
    "customHeaders": Param("map[string]string"),
    "ignoreNullValues": Param("bool", default="true"),
    "unsafeSsl": Param("bool", default="false"),
    "awsRegion": Param("string"),
    "timeout": Param("time.Duration"),
    "identityOwner": Param("string"),
    # authentication.Config, the keys it also reads from triggerMetadata.
    "authModes": Param("[]authentication.Type", source=AUTHENTICATION),
    "authMode": Param("[]authentication.Type", source=AUTHENTICATION),
    "apiKey": Param("string", source=AUTHENTICATION),
    "method": Param("string", default="header", source=AUTHENTICATION),
    "keyParamName": Param("string", source=AUTHENTICATION),
}
"""The prometheus scaler's ``prometheusMetadata`` (and its ``authentication.Config``)."""

TRIGGER_FIELDS = frozenset(
    {"type", "name", "useCachedMetrics", "metadata", "authenticationRef", "metricType"}
)
AUTHENTICATION_REF_FIELDS = frozenset({"name", "kind"})
METRIC_TYPES = frozenset({"AverageValue", "Value"})
"""``GetMetricTargetType`` refuses ``Utilization`` for a scaler's external metric."""

DEFAULT_TARGET_API_VERSION = "apps/v1"
DEFAULT_TARGET_KIND = "Deployment"
DEFAULT_COOLDOWN_SECONDS = 300
DEFAULT_MIN_REPLICA_COUNT = 0
DEFAULT_HPA_MAX_REPLICAS = 100
REPLICAS_FIELD = ("spec", "replicas")
"""Where ``GetCurrentReplicas`` first looks for a custom resource's replica count."""
FORCE_ACTIVATION = "autoscaling.keda.sh/force-activation"
"""``ForceActivationAnnotation`` (apis/keda/v1alpha1/scaledobject_types.go)."""


def parses_as_float64(value: str) -> bool:
    """Whether ``json.Unmarshal`` reads ``value`` into a Go ``float64``."""
    try:
        parsed = json.loads(value)
    except ValueError:
        return False
    return isinstance(parsed, int | float) and not isinstance(parsed, bool)


def milli_target(threshold: float) -> float:
    """The HPA target KEDA makes of a threshold (``quantityFromFloat64``: ``%.3f``)."""
    if threshold != threshold or threshold in (float("inf"), float("-inf")) or threshold < 0:
        return 0.0
    return float(f"{threshold:.3f}")


def is_active(value: float, activation_threshold: float = 0.0) -> bool:
    return value > activation_threshold


def _spec(scaled_object: Mapping[str, Any]) -> Mapping[str, Any]:
    spec: Mapping[str, Any] = scaled_object["spec"]
    return spec


def _hpa_config(scaled_object: Mapping[str, Any]) -> Mapping[str, Any]:
    advanced = _spec(scaled_object).get("advanced") or {}
    config: Mapping[str, Any] = advanced.get("horizontalPodAutoscalerConfig") or {}
    return config


def hpa_name(scaled_object: Mapping[str, Any]) -> str:
    """``getHPAName`` (controllers/keda/hpa.go)."""
    return _hpa_config(scaled_object).get("name") or f"keda-hpa-{scaled_object['metadata']['name']}"


def hpa_behavior(scaled_object: Mapping[str, Any]) -> Any:
    """The HPA's ``spec.behavior`` (``newHPAForScaledObject``, no pause annotations)."""
    return _hpa_config(scaled_object).get("behavior")


def hpa_min_replicas(scaled_object: Mapping[str, Any]) -> int:
    minimum = _spec(scaled_object).get("minReplicaCount")
    return int(minimum) if minimum is not None and int(minimum) > 0 else 1


def hpa_max_replicas(scaled_object: Mapping[str, Any]) -> int:
    return int(_spec(scaled_object).get("maxReplicaCount", DEFAULT_HPA_MAX_REPLICAS))


def _bool_annotation(annotations: Mapping[str, Any], key: str) -> bool:
    """``getBoolAnnotation``: absent is false; a value ``strconv.ParseBool`` cannot parse is
    true."""
    return key in annotations and annotations[key] not in {"0", "f", "F", "FALSE", "false", "False"}


@dataclass(frozen=True)
class ScaleWrite:
    """What ``RequestScale`` writes to the target's scale subresource, and when."""

    replicas: int
    after_cooldown_seconds: int = 0


def request_scale(
    scaled_object: Mapping[str, Any], current: int, active: bool
) -> ScaleWrite | None:
    """``RequestScale`` for a ScaledObject without idleReplicaCount or fallback, every trigger
    answering; None where KEDA leaves the count to the HPA."""
    spec = _spec(scaled_object)
    minimum = int(spec.get("minReplicaCount", DEFAULT_MIN_REPLICA_COUNT))
    if active or _bool_annotation(objects.annotations(scaled_object), FORCE_ACTIVATION):
        return ScaleWrite(minimum if minimum > 0 else 1) if current == 0 else None
    if current > 0 and minimum == 0:
        return ScaleWrite(0, int(spec.get("cooldownPeriod", DEFAULT_COOLDOWN_SECONDS)))
    if current < minimum:
        return ScaleWrite(minimum)
    return None


def poll(
    scaled_object: Mapping[str, Any],
    current: int,
    active: bool,
    now: float,
    last_active: int | None,
) -> tuple[int | None, int | None]:
    """One poll of ``RequestScale`` at ``now``: ``lastActiveTime`` after it, in whole seconds,
    and the replicas it writes (None: none). Active or forced, it records ``now`` (waking from
    zero, or above it: ``result.LastActiveTime``, persisted by pkg/scaling/scale_handler.go
    ``checkScalers`` as a ``metav1.Time``, which keeps whole seconds); inactive above zero with a
    minimum of 0, ``scaleToZeroOrIdle`` writes 0 once ``lastActiveTime + cooldownPeriod`` is
    before ``now``."""
    write = request_scale(scaled_object, current, active)
    forced = _bool_annotation(objects.annotations(scaled_object), FORCE_ACTIVATION)
    if active or forced:
        return int(now), write.replicas if write else None
    if write is None or write.replicas != 0:
        return last_active, write.replicas if write else None
    cooled = last_active is not None and last_active + write.after_cooldown_seconds < now
    return last_active, 0 if cooled else None
