"""Observed objects, as every composer reads them: whether Crossplane found a composed resource
ready, its desired form when a composer that cannot decide carries it forward (deleting
nothing), both defined beside the result type in ``composer`` and named here too, whether a
provider-kubernetes Object has applied its manifest (``applied``), and the final form of a
condition that only lasts while something does (``closed``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.composer import Condition, carried, carry_forward, observed_ready, ready_as_observed
from modelplane.kube.objects import condition

# Defined beside the result type, whose ``Result.held`` carries every observed resource forward;
# composers read them from here as before.
__all__ = ["applied", "carried", "carry_forward", "closed", "observed_ready", "ready_as_observed"]


def applied(obj: Mapping[str, Any] | None) -> bool:
    """Whether an observed provider-kubernetes Object has applied its manifest: Ready (its
    readiness policy held: for a policy, created) and Synced (its last apply succeeded)."""
    synced = condition(obj, "Synced")
    return observed_ready(obj) and synced is not None and synced.get("status") == "True"


def closed(composite: Mapping[str, Any], done: Condition) -> list[Condition]:
    """``done``, the final form of a condition a composer sets only while something lasts, once
    the composite reports that condition: Crossplane keeps a condition a function stops
    returning as it was last set (crossplane v2.3.4 internal/controller/apiextensions/composite/
    reconciler.go ``handleCommonCompositionResult`` only sets those returned), so without it the
    last "in progress" message would stand forever."""
    return [done] if condition(composite, done.type) is not None else []
