"""The series labels fleet-wide queries select by, as Prometheus Operator makes them.

kube-prometheus-stack 88.5.3 ships Prometheus Operator v0.93.1. Read at v0.93.0
(github.com/prometheus-operator/prometheus-operator; the mirror holds no v0.93.1 tag, and
pkg/prometheus/promcfg.go is unchanged from v0.93.0 to main at 6adcebc50, 2026-08-08):

- ``generatePodMonitorConfig`` relabels each of a PodMonitor's ``podTargetLabels`` from
  ``__meta_kubernetes_pod_label_<sanitized>`` to the target label ``<sanitized>``, with regex
  ``(.+)``: a pod without the label gives its series none (a standalone replica's pods).
- ``sanitizeLabelName`` replaces every character outside ``[a-zA-Z0-9_]`` with ``_``.
- ``buildExternalLabels`` sets ``prometheus`` (namespace/name) and ``prometheus_replica`` (pod
  name) itself, and ``zone`` under topology sharding; a user external label of one of those
  names is ignored with a warning, any other is kept.
"""

from __future__ import annotations

import re

from tests.compose.inferencecluster.support import (
    cluster,
    installing,
    manifest,
    releases,
    resources,
)

# promcfg.go, invalidLabelCharRE.
_INVALID = re.compile(r"[^a-zA-Z0-9_]")
RESERVED_EXTERNAL_LABELS = {"prometheus", "prometheus_replica", "zone"}


def sanitized(name: str) -> str:
    return _INVALID.sub("_", name)


def test_the_engine_series_carry_the_label_names_the_autoscaling_queries_select_by() -> None:
    # docs/design/autoscaling.md, "The queries": S selects on these two names.
    engines = manifest(resources(installing(cluster()))["podmonitor-engines"])
    names = {sanitized(label) for label in engines["spec"]["podTargetLabels"]}
    assert {"modelplane_ai_deployment", "modelplane_ai_deployment_namespace"} <= names


def test_the_cluster_external_label_is_not_one_the_operator_overrides() -> None:
    values = releases(installing(cluster()))["prometheus"]["spec"]["forProvider"]["values"]
    external = values["prometheus"]["prometheusSpec"]["externalLabels"]
    assert external.keys() and not external.keys() & RESERVED_EXTERNAL_LABELS
