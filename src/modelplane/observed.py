"""Observed objects, as every composer reads them: whether Crossplane found a
composed resource ready, and its desired form when a composer that cannot decide carries it
forward (deleting nothing)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.composer import Condition, Desired, Ready
from modelplane.kube.objects import condition

Obj = dict[str, Any]
# Server-set metadata (uid, resourceVersion, managedFields, ...) would conflict if sent back.
_METADATA_KEPT = ("name", "namespace", "generateName", "labels", "annotations")


def observed_ready(obj: Mapping[str, Any] | None) -> bool:
    """Whether an observed composed resource reports Ready=True (its readiness policy held)."""
    c = condition(obj, "Ready")
    return c is not None and c.get("status") == "True"


def ready_as_observed(obj: Mapping[str, Any] | None) -> Ready:
    """A desired resource is ready exactly when its observed counterpart is, never sooner."""
    return "True" if observed_ready(obj) else "False"


def carried(observed: Obj) -> Obj:
    """The desired form of an observed resource: what was applied, without status or
    server-owned metadata."""
    out = {k: v for k, v in observed.items() if k not in ("metadata", "status")}
    metadata = observed.get("metadata") or {}
    out["metadata"] = {k: metadata[k] for k in _METADATA_KEPT if k in metadata}
    return out


def carry_forward(observed: Mapping[str, Obj]) -> dict[str, Desired]:
    """Every observed resource as desired, each ready exactly when it is observed ready."""
    return {
        name: Desired(carried(obj), ready_as_observed(obj))
        for name, obj in sorted(observed.items())
    }


def closed(composite: Mapping[str, Any], done: Condition) -> list[Condition]:
    """``done``, the final form of a condition a composer sets only while something lasts, once
    the composite reports that condition: Crossplane keeps a condition a function stops
    returning as it was last set (crossplane v2.3.4 internal/controller/apiextensions/composite/
    reconciler.go ``handleCommonCompositionResult`` only sets those returned), so without it the
    last "in progress" message would stand forever."""
    return [done] if condition(composite, done.type) is not None else []
