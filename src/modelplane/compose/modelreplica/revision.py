"""A replica stamped at another pods revision keeps the pods it runs.

A ModelDeployment stamps each replica with the pods revision it was updated at
(``modelplane.ai/pods-revision``, a stamped annotation: a new revision rolls out through the
deployment's strategy like a template change). Until its rollout reaches a replica stamped at
another revision, the replica keeps its pod-bearing objects (workloads, the picker's Deployment
and ConfigMap) exactly as observed, so an upgrade of Modelplane restarts no engine or picker by
itself. A replica that no deployment placed is composed as it is, always.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.compose.pods_revision import bears_pods, pods_revision
from modelplane.labels import DEPLOYMENT, PODS_REVISION
from modelplane.observed import carried

Obj = dict[str, Any]


def held(
    replica: Mapping[str, Any], resources: dict[str, Obj], observed: Mapping[str, Obj]
) -> dict[str, Obj]:
    """``resources``, with the observed pod-bearing objects kept as they run while the replica's
    deployment stamped it at another pods revision (its rollout has not reached it yet)."""
    meta = replica.get("metadata") or {}
    if DEPLOYMENT not in (meta.get("labels") or {}):
        return resources
    if (meta.get("annotations") or {}).get(PODS_REVISION) == pods_revision():
        return resources
    out = dict(resources)
    for key, obj in resources.items():
        running = observed.get(key)
        if running is not None and bears_pods(obj):
            out[key] = carried(running)
    return out
