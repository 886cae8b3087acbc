"""What the HorizontalPodAutoscaler of Kubernetes v1.35.4 (the e2e tier's k8s.io/kubernetes,
e2e/tools/kubernetes/go.mod) does with the HPA KEDA creates, as small models of its code.

Read from k8s.io/kubernetes v1.35.4 (the module, the tree of github.com/kubernetes/kubernetes at
that tag):

- pkg/controller/podautoscaler/horizontal.go ``calculateScaleUpLimitWithScalingRules`` /
  ``calculateScaleDownLimitWithBehaviors``: per policy, ``periodStartReplicas := currentReplicas
  - replicasAddedInCurrentPeriod + replicasDeletedInCurrentPeriod`` (``getReplicasChangePerPeriod``
  sums the scale events younger than ``periodSeconds``); a ``Pods`` policy proposes
  ``periodStartReplicas + policy.Value`` up and ``periodStartReplicas - policy.Value`` down; with
  ``selectPolicy`` Max (the default) the largest change of all policies wins.
  ``stabilizeRecommendationWithBehaviors``: the recommendation is held between the lowest
  recommendation of the last ``scaleUp.stabilizationWindowSeconds`` and the highest of the last
  ``scaleDown.stabilizationWindowSeconds`` (the new one included).
- ``computeReplicasForMetrics`` first calls ``validateAndParseSelector(hpa,
  scale.Status.Selector)``: an empty selector is "selector is required", condition ScalingActive
  False, reason InvalidSelector ("the HPA target's scale is missing a selector"), for every
  metric type. ``computeStatusForExternalMetric``: an ``AverageValue`` target goes to
  ``GetExternalPerPodMetricReplicas(statusReplicas, ...)``, a ``Value`` target to
  ``GetExternalMetricReplicas(specReplicas, ..., selector)``.
- pkg/controller/podautoscaler/replica_calculator.go ``GetExternalPerPodMetricReplicas``:
  ``usageRatio := usage / (targetUsagePerPod * statusReplicas)``; outside the tolerance the
  proposal is ``ceil(usage / targetUsagePerPod)``, no pod read. ``GetExternalMetricReplicas`` ->
  ``getUsageRatioReplicaCount``: with current replicas above 0 and outside the tolerance,
  ``ceil(usageRatio * readyPodCount)``, where ``getReadyPodsCount`` lists the pods of the HPA's
  namespace matching the scale's selector ("no pods returned by selector while calculating
  replica count" when there are none); at 0 replicas, ``ceil(usageRatio)``.
- pkg/controller/podautoscaler/config/v1alpha1/defaults.go: tolerance 0.1, scale-down
  stabilisation 5 minutes. pkg/apis/autoscaling/v2/defaults.go: a behavior's unset rule is the
  default (scale up: window 0, Pods 4 and Percent 100 per 15 s, Max; scale down: Percent 100 per
  15 s), an unset field of a set rule likewise. pkg/apis/autoscaling/validation/validation.go:
  ``stabilizationWindowSeconds`` in [0, ``MaxStabilizationWindowSeconds`` = 3600], a policy's
  ``value`` above 0, its ``periodSeconds`` in (0, ``MaxPeriodSeconds`` = 1800].
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MODULE = "k8s.io/kubernetes"
VERSION = "v1.35.4"
HORIZONTAL = "pkg/controller/podautoscaler/horizontal.go"
REPLICA_CALCULATOR = "pkg/controller/podautoscaler/replica_calculator.go"

TOLERANCE = 0.1
MAX_STABILIZATION_WINDOW_SECONDS = 3600
MAX_PERIOD_SECONDS = 1800
POLICY_TYPES = frozenset({"Pods", "Percent"})


@dataclass(frozen=True)
class Event:
    """A scale event ``age`` seconds ago that changed the count by ``replicas``."""

    age: int
    replicas: int


def _changed(period: int, events: Sequence[Event]) -> int:
    """``getReplicasChangePerPeriod``."""
    return sum(e.replicas for e in events if e.age < period)


def scale_up_limit(
    current: int,
    rules: Mapping[str, Any],
    ups: Sequence[Event] = (),
    downs: Sequence[Event] = (),
) -> int:
    """``calculateScaleUpLimitWithScalingRules`` under the default ``selectPolicy`` (Max)."""
    proposals = []
    for policy in rules["policies"]:
        period = policy["periodSeconds"]
        start = current - _changed(period, ups) + _changed(period, downs)
        if policy["type"] == "Pods":
            proposals.append(start + policy["value"])
        else:
            proposals.append(math.ceil(start * (1 + policy["value"] / 100)))
    return max(proposals)


def scale_down_limit(
    current: int,
    rules: Mapping[str, Any],
    ups: Sequence[Event] = (),
    downs: Sequence[Event] = (),
) -> int:
    """``calculateScaleDownLimitWithBehaviors`` under the default ``selectPolicy`` (Max)."""
    proposals = []
    for policy in rules["policies"]:
        period = policy["periodSeconds"]
        start = current - _changed(period, ups) + _changed(period, downs)
        if policy["type"] == "Pods":
            proposals.append(start - policy["value"])
        else:
            proposals.append(int(start * (1 - policy["value"] / 100)))
    return min(proposals)


def stabilized(
    current: int,
    desired: int,
    history: Sequence[tuple[int, int]],
    up_window: int,
    down_window: int,
) -> int:
    """``stabilizeRecommendationWithBehaviors``; ``history`` holds (age in seconds,
    recommendation) of earlier recommendations."""
    up = min([desired] + [r for age, r in history if age < up_window])
    down = max([desired] + [r for age, r in history if age < down_window])
    return min(max(current, up), down)


class NoPodsError(Exception):
    """``getReadyPodsCount``: no pods returned by selector while calculating replica count."""


def external_average_value(status_replicas: int, usage: float, target: float) -> int | None:
    """``GetExternalPerPodMetricReplicas``: the proposal, None to keep ``status_replicas``."""
    ratio = usage / (target * status_replicas) if status_replicas else math.inf
    if abs(1.0 - ratio) <= TOLERANCE:
        return None
    return math.ceil(usage / target)


def external_value(current: int, usage: float, target: float, ready_pods: int | None) -> int:
    """``GetExternalMetricReplicas``; ``ready_pods`` None when the selector lists no pod."""
    ratio = usage / target
    if current == 0:
        return math.ceil(ratio)
    if abs(1.0 - ratio) <= TOLERANCE:
        return current
    if ready_pods is None:
        raise NoPodsError("no pods returned by selector while calculating replica count")
    return math.ceil(ratio * ready_pods)
