"""Scale to zero behind the front door: what a ModelDeployment allowed to sleep and the
ModelServices that select it agree on (docs/design/autoscaling.md, "Scale to zero behind the
front door").

A deployment may sleep when ``spec.autoscaling.minReplicas`` is 0 (the XRD admits 0 only with
``scaleToZero``). Asleep, it has no replica and no ModelEndpoint, so a ModelService tells it
from a selector that matches nothing by the deployment itself: the labels its replicas would
carry (``replica_labels``). Each ModelService publishes in ``status.activation.clusters`` the
Envoy clusters its front-door rules send a request through, asleep or awake; the deployment's
ScaledObject wakes on their request rate (``ACTIVATION_SERIES``), the one counter Envoy keeps
for a request the front gateway sends upstream to the sentinel lane (a direct response is
counted per listener only: tests/conformance/test_scale_to_zero_path.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.composer import namespace_of
from modelplane.kube import objects
from modelplane.labels import DEPLOYMENT, DEPLOYMENT_NAMESPACE

ACTIVATION_SERIES = "envoy_cluster_upstream_rq_total"
"""Envoy's per-cluster request counter, labelled ``envoy_cluster_name`` by its Prometheus stats."""
ACTIVATION_PATH = ("status", "activation", "clusters")
"""Where a ModelService publishes the clusters of its front-door rules."""


def rule_cluster(namespace: str, route: str, index: int = 0) -> str:
    """The Envoy cluster of an HTTPRoute rule, as Envoy Gateway v1.8.1 names it
    (``internal/gatewayapi/helpers.go`` ``irRouteDestinationName``)."""
    return f"httproute/{namespace}/{route}/rule/{index}"


def may_sleep(md: Mapping[str, Any]) -> bool:
    """Whether the deployment's autoscaler may take it to zero replicas."""
    scaling = objects.spec(md).get("autoscaling") or {}
    return bool(scaling) and int(scaling.get("minReplicas", 1)) == 0


def asleep(md: Mapping[str, Any]) -> bool:
    """Whether the deployment is at zero because its autoscaler put it there."""
    return may_sleep(md) and int(objects.spec(md).get("replicas", 1)) == 0


def replica_labels(md: Mapping[str, Any]) -> dict[str, str]:
    """The labels every replica of the deployment carries, whatever its cluster and index
    (``modeldeployment/stamp.py``)."""
    template = objects.spec(md).get("template") or {}
    labels = {str(k): str(v) for k, v in objects.labels(template).items()}
    labels[DEPLOYMENT] = objects.name(md)
    labels[DEPLOYMENT_NAMESPACE] = namespace_of(md)
    return labels


def selects(match_labels: Mapping[str, str], md: Mapping[str, Any]) -> bool:
    """Whether a selector's matchLabels would match the deployment's replicas (and so their
    ModelEndpoints, which carry their labels)."""
    labels = replica_labels(md)
    return bool(match_labels) and all(labels.get(k) == v for k, v in match_labels.items())


def activation_clusters(ms: Mapping[str, Any]) -> list[str]:
    """The clusters a ModelService published, or none yet."""
    published = objects.dig(ms, *ACTIVATION_PATH)
    return [str(c) for c in published] if isinstance(published, list) else []
