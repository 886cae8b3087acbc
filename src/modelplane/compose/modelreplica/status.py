"""What the replica reports: the ModelServing condition (the SERVING column) and its events.

Everything here is read from observed composed resources, as provider-kubernetes reports them:
an Object's ``Ready`` condition comes from its readiness policy, and
``status.atProvider.manifest`` is the remote object as last seen, status included. Nothing counts
as ready merely because its Object exists on the control plane.

ModelServing is deliberately weaker than Crossplane's Ready: one ready copy of every engine with
a routed path is enough to serve, while Ready waits for every copy of everything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from modelplane.compose.modelreplica import picker, routing
from modelplane.compose.modelreplica.context import ReplicaContext
from modelplane.compose.modelreplica.names import gang_status_key, workload_key
from modelplane.compose.shared.cache import (
    UNVERSIONED,
    held_on,
    hydrated_revisions,
    pinned_revision,
    replica_weights,
)
from modelplane.compose.shared.remote import OBSERVED_MANIFEST, refused
from modelplane.composer import Condition, Event
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.observed import observed_ready
from modelplane.reasons import ModelReplica

# What a user needs to hear about each part of the routing path when it is not ready.
ROUTING_PARTS: dict[str, str] = {
    routing.POOL_KEY: "InferencePool not created",
    routing.ROUTE_KEY: "HTTPRoute not accepted by the gateway",
    picker.DEPLOYMENT_KEY: "endpoint picker not available",
    picker.SERVICE_KEY: "endpoint picker Service not created",
    picker.CONFIG_KEY: "endpoint picker config not created",
    picker.SERVICE_ACCOUNT_KEY: "endpoint picker ServiceAccount not created",
    picker.ROLE_KEY: "endpoint picker Role not created",
    picker.ROLE_BINDING_KEY: "endpoint picker RoleBinding not created",
}


@dataclass(frozen=True)
class EngineCopies:
    engine: str
    desired: int
    ready: int | None
    """Ready copies, or None while the workload is not yet observed on the cluster."""
    refused: str | None = None
    """Why the cluster refused the workload (its Object's Synced=False message), if it did."""

    def describe(self) -> str:
        if self.ready is None and self.refused:
            return f"{self.engine}: not deployed: {self.refused}"
        if self.ready is None:
            return f"{self.engine}: not yet deployed"
        return f"{self.engine}: {self.ready}/{self.desired} copies ready"


@dataclass(frozen=True)
class Serving:
    condition: Condition
    events: list[Event]


def model_serving(ctx: ReplicaContext) -> Serving:
    """ModelServing from the observed state, plus events for the transitions users care about.

    Each engine's copies are read from its workload (and, for a Grove gang, the scaling group
    observed beside it); the routing path from this package's own resources. The previous
    ModelServing condition (on the observed replica) decides which transition, if any, this
    call reports.
    """
    copies = tuple(engine_copies(ctx.observed, e) for e in ctx.engines)
    counts = ", ".join(c.describe() for c in copies)
    pending = [c.engine for c in copies if c.ready is None]
    idle = [c.engine for c in copies if c.ready == 0]
    blocked = [
        what for key, what in ROUTING_PARTS.items() if not observed_ready(ctx.observed.get(key))
    ]
    if pending:
        cluster = str(ctx.spec.get("clusterName") or objects.name(ctx.cluster))
        condition = _false(
            ModelReplica.DEPLOYING, f"deploying on {cluster}: {counts}{_cache_wait(ctx)}"
        )
    elif idle:
        condition = _false(
            ModelReplica.NO_READY_COPY, f"{_names(idle)} no ready copy: {counts}{_cache_wait(ctx)}"
        )
    elif blocked:
        condition = _false(ModelReplica.ROUTING_NOT_READY, f"{'; '.join(blocked)}: {counts}")
    else:
        message = f"serving at {routing.path_prefix(ctx)}: {counts}"
        condition = Condition(ModelReplica.MODEL_SERVING, "True", ModelReplica.SERVING, message)
    return Serving(condition, transition_events(ctx.replica, condition))


def transition_events(replica: Obj, condition: Condition) -> list[Event]:
    """An event when serving starts or stops; none while the condition holds its status.

    A composer has no memory, so the previous status comes from the condition Crossplane wrote
    on the replica after the last call.
    """
    before = str((objects.condition(replica, ModelReplica.MODEL_SERVING) or {}).get("status"))
    if condition.status == "True" and before != "True":
        return [Event("Normal", f"Serving: {condition.message}", reason=ModelReplica.SERVING)]
    if condition.status != "True" and before == "True":
        return [Event("Warning", f"Stopped serving: {condition.message}", reason=condition.reason)]
    return []


def remote(obj: Obj | None) -> Obj | None:
    """The remote object as provider-kubernetes last observed it, if it has."""
    return objects.dig(obj, *OBSERVED_MANIFEST) or None


def engine_copies(observed: Mapping[str, Obj], engine: Obj) -> EngineCopies:
    name = engine["name"]
    desired = int(engine.get("copies", 1))
    workload = remote(observed.get(workload_key(name)))
    if workload is None:
        return EngineCopies(name, desired, None, refused(observed.get(workload_key(name))))
    ready = ready_copies(workload)
    if workload.get("kind") == "PodCliqueSet":
        # The set counts itself available from one gang (minAvailable 1); the scaling group
        # observed beside it counts every gang, once provider-kubernetes has read it.
        gangs = remote(observed.get(gang_status_key(name)))
        if gangs is not None:
            ready = ready_copies(gangs)
    return EngineCopies(name, desired, ready)


def ready_copies(manifest: Obj) -> int:
    """Copies of a workload that can take traffic, from the remote object's own status.

    Deployment: ready pods (one per copy). LeaderWorkerSet: ready groups, each a whole gang.
    PodCliqueScalingGroup: available gangs. PodCliqueSet: available set replicas; its one
    replica is available once a gang is, so it says "at least one copy", not how many.
    """
    status = manifest.get("status") or {}
    kind = manifest.get("kind")
    if kind in ("Deployment", "LeaderWorkerSet"):
        return int(status.get("readyReplicas") or 0)
    if kind in ("PodCliqueSet", "PodCliqueScalingGroup"):
        return int(status.get("availableReplicas") or 0)
    return 0


def _cache_wait(ctx: ReplicaContext) -> str:
    """What the pods' model-cache wait is waiting on, while the cache is not Ready here."""
    if not ctx.model_cache:
        return ""
    cluster = str(ctx.spec.get("clusterName", ""))
    here = held_on(ctx.model_cache, cluster)
    name = ctx.model_cache_name
    if here is None:
        return f"; the pods wait for ModelCache {name}, which reports nothing for {cluster} yet"
    revision = replica_weights(ctx.model_cache, pinned_revision(ctx.replica), cluster).revision
    if revision == UNVERSIONED or revision in hydrated_revisions(ctx.model_cache, cluster):
        return ""
    if here.get("phase") == "Ready":
        return f"; the pods wait for revision {revision} of ModelCache {name} on {cluster}"
    detail = f": {here['message']}" if here.get("message") else ""
    return f"; the pods wait for ModelCache {name} on {cluster}: {here.get('phase')}{detail}"


def _false(reason: str, message: str) -> Condition:
    return Condition(ModelReplica.MODEL_SERVING, "False", reason, message)


def _names(engines: list[str]) -> str:
    return f"{engines[0]} has" if len(engines) == 1 else f"{', '.join(engines)} have"
