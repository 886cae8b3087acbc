"""Where a deployment's ModelCache stages its weights: the only clusters its replicas may use.

A ModelReplica with ``spec.modelCacheRef`` mounts the claim its ModelCache composes on the
replica's cluster; on a cluster the cache does not select that claim never exists, and the pods
stay Pending. So a deployment that references a cache requires it (by name, in its namespace)
and gives the scheduler the cache's clusterSelector as one more constraint, beside its own:
a cluster must satisfy both (a label both name with different values admits no cluster).

Until the cache is read, where it stages is unknown: nothing new is placed (kept replicas stay
where they are) and ``ModelCacheResolved`` says so. A cache that does not exist holds new
placements the same way, with a Warning naming it; replicas already placed keep running, as
their weights are already on their cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.apis import API_VERSION
from modelplane.compose.shared.cache import cache_selector, stages_on
from modelplane.composer import Condition, Event, Requirement, namespace_of, namespace_said
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.reasons import ModelDeployment
from modelplane.scheduling.fleet import Admits, Cluster

CACHE = "model-cache"
RESOLVED = ModelDeployment.MODEL_CACHE_RESOLVED


@dataclass(frozen=True)
class Footprint:
    """What the referenced ModelCache means for placement; nothing when none is referenced."""

    requirements: dict[str, Requirement] = field(default_factory=dict)
    admits: Admits | None = None
    hold: str = ""
    """Why nothing new may be placed ("" when placement may proceed)."""
    condition: Condition | None = None
    events: tuple[Event, ...] = ()
    cache: Obj | None = None
    """The ModelCache read, whose status says which revisions are hydrated where."""


def footprint(md: Obj, required: Mapping[str, list[Any]]) -> Footprint:
    ref = objects.dig(md, "spec", "template", "spec", "modelCacheRef")
    if not isinstance(ref, Mapping) or not ref.get("name"):
        return Footprint()
    name, namespace = str(ref["name"]), namespace_of(md)
    requirements = {
        CACHE: Requirement(API_VERSION, "ModelCache", match_name=name, namespace=namespace)
    }
    items = required.get(CACHE)
    # An answer for another name is one to the requirement of a previous reference.
    cache = next((c for c in items or () if _identity(c) == (namespace, name)), None)
    if cache is None:
        # A cache "not found" must say where it was looked for, and why there.
        read = items is not None and not items
        return _unresolved(requirements, name, namespace_said(md), read=read)
    selector = cache_selector(cache)
    where = ", ".join(f"{k}={v}" for k, v in sorted(selector.items()))

    def admits(cluster: Cluster) -> str:
        if stages_on(cache, cluster.labels):
            return ""
        return f"ModelCache {name} does not stage on it (clusterSelector {where})"

    message = f"ModelCache {name} stages on " + (
        f"clusters labelled {where}" if selector else "every cluster"
    )
    return Footprint(
        requirements,
        admits=admits if selector else None,
        condition=Condition(RESOLVED, "True", ModelDeployment.MODEL_CACHE_RESOLVED, message),
        cache=cache,
    )


def _unresolved(
    requirements: dict[str, Requirement], name: str, namespace: str, read: bool
) -> Footprint:
    """New placements held: the cache is not read yet (``read`` False), or read and absent."""
    if not read:
        hold = f"ModelCache {name} is not read yet, so where it stages the weights is unknown"
        reading = f"reading ModelCache {name}; new replicas are held and existing ones kept"
        unread = Condition(RESOLVED, "Unknown", ModelDeployment.MODEL_CACHE_UNRESOLVED, reading)
        return Footprint(requirements, hold=f"new replicas are held: {hold}", condition=unread)
    message = (
        f"ModelCache {name} not found in namespace {namespace}: new replicas are held "
        "until it exists; existing replicas are kept"
    )
    return Footprint(
        requirements,
        hold=f"new replicas are held: ModelCache {name} not found in namespace {namespace}",
        condition=Condition(RESOLVED, "False", ModelDeployment.MODEL_CACHE_NOT_FOUND, message),
        events=(Event("Warning", message, ModelDeployment.MODEL_CACHE_NOT_FOUND),),
    )


def _identity(obj: Mapping[str, Any]) -> tuple[str, str]:
    return namespace_of(obj), objects.name(obj)
