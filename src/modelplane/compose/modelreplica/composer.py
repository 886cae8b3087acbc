"""The ModelReplica composer: inputs -> the replica's remote objects on its pinned cluster.

Flow: check the shape -> require the InferenceCluster (and ModelCache) -> if either is not
usable yet, hold (compose nothing on the first reconcile, carry observed resources forward
after) -> otherwise compose the namespace and each engine's workload and claims -> mark each
desired resource ready only when observed ready.

Routing (InferencePool, endpoint picker, HTTPRoute) joins the workloads in the desired state,
and the ModelServing condition is read from the observed state of both.
"""

from __future__ import annotations

from modelplane.apis import API_VERSION
from modelplane.compose.modelreplica import (
    network,
    objectives,
    parallelism,
    picker,
    pools,
    revision,
    routing,
    status,
    wiring,
)
from modelplane.compose.modelreplica.context import ReplicaContext
from modelplane.compose.modelreplica.shape import problem
from modelplane.compose.modelreplica.workloads import EngineShapeError, compose_workloads
from modelplane.composer import (
    Condition,
    Desired,
    Event,
    Inputs,
    Ready,
    Requirement,
    Result,
    namespace_of,
    namespace_said,
)
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.observed import ready_as_observed
from modelplane.reasons import ModelReplica

CLUSTER_REQUIREMENT = "cluster"
CACHE_REQUIREMENT = "modelcache"
# What the composer passes through whole (containers: only their names, ports and the engine's
# env/resources lists are looked at) or digests whole (the picker config): read as views, these
# cost nothing to read and one protobuf copy to write back.
LAZY_COMPOSITE = (
    "spec.engines[].members[].template.spec.containers[]",
    "spec.engines[].members[].template.spec.imagePullSecrets",
    "spec.serving.endpointPicker.template.spec.containers[]",
    "spec.serving.endpointPicker.template.spec.imagePullSecrets",
    "spec.serving.endpointPicker.config",
)


def compose_replica(inputs: Inputs) -> Result:
    replica = inputs.composite
    bad = problem(replica) or picker.serving_problem(replica["spec"].get("serving"))
    if bad is not None:
        return Result.failed(f"ModelReplica is invalid: {bad}")
    requirements = _requirements(replica)
    unlabelable = pools.unlabelable(replica)
    if unlabelable is not None:
        return pools.refused(dict(inputs.observed), requirements, unlabelable)
    ctx = _context(inputs, requirements)
    if isinstance(ctx, Result):
        return ctx
    try:
        workloads = compose_workloads(ctx)
    except EngineShapeError as e:
        return Result.failed(f"ModelReplica is invalid: {e}")
    resources = _resources(ctx, workloads)
    result = Result(
        resources={
            key: Desired(obj, _readiness(key, inputs.observed.get(key)))
            for key, obj in resources.items()
        },
        requirements=requirements,
    )
    _report(ctx, resources, result)
    return result


def _context(inputs: Inputs, requirements: dict[str, Requirement]) -> ReplicaContext | Result:
    """What the replica is composed from, or a held result while its cluster (with its provider
    config) or its cache is not usable yet."""
    replica = inputs.composite
    spec = replica["spec"]
    cluster = _first(inputs.required.get(CLUSTER_REQUIREMENT))
    cache_name = objects.dig(spec, "modelCacheRef", "name")
    cache = _first(inputs.required.get(CACHE_REQUIREMENT)) if cache_name else None
    if cluster is None:
        why = f"InferenceCluster {spec['clusterName']!r} is not available"
        return _hold(inputs, requirements, ModelReplica.WAITING_FOR_CLUSTER, why)
    provider_config = objects.dig(cluster, "status", "providerConfigRef", "name")
    if not provider_config:
        why = f"InferenceCluster {spec['clusterName']!r} has no status.providerConfigRef yet"
        return _hold(inputs, requirements, ModelReplica.WAITING_FOR_CLUSTER, why)
    if cache_name and cache is None:
        why = f"ModelCache {cache_name!r} is not available in namespace {namespace_said(replica)}"
        return _hold(inputs, requirements, ModelReplica.WAITING_FOR_MODEL_CACHE, why)
    return ReplicaContext(
        replica=replica,
        cluster=cluster,
        provider_config=str(provider_config),
        observed=inputs.observed,
        model_cache=cache,
    )


def _resources(ctx: ReplicaContext, workloads: dict[str, Obj]) -> dict[str, Obj]:
    """The replica's remote objects: its workloads, routing and network, release-marked."""
    resources = dict(workloads)
    resources.update(routing.compose_routing(ctx))
    # Separate objects, never in a pod template: composed at once, they restart nothing.
    resources.update(network.compose_network(ctx))
    # A caller's priority on this replica's pool: the objective the fleet hop names from it.
    resources.update(objectives.compose_objectives(ctx, routing.pool_name(ctx.name)))
    resources = objectives.served(ctx, resources)
    # Until its deployment's rollout reaches it, what this release adds to pods waits.
    return revision.held(ctx.replica, revision.marked(ctx.replica, resources), ctx.observed)


def _readiness(key: str, observed: Obj | None) -> Ready:
    # An objective only lends requests a priority: the replica never waits for its cluster to
    # apply one (unapplied, requests are served at priority 0).
    if key in objectives.KEYS:
        return objectives.objective_ready(observed)
    return ready_as_observed(observed)


def _report(ctx: ReplicaContext, resources: dict[str, Obj], result: Result) -> None:
    """The ModelServing and revision conditions, and the warnings, onto ``result``."""
    spec = ctx.replica["spec"]
    serving = status.model_serving(ctx)
    result.conditions.append(serving.condition)
    result.events.extend(serving.events)
    for warning in picker.image_warnings(spec.get("serving")):
        result.events.append(Event("Warning", warning, picker.UNKNOWN_RELEASE))
    # Which stamp that status describes: the deployment trusts it only for the stamp it gave.
    ready = revision.revision_ready(ctx.replica, resources, ctx.observed)
    if ready is not None:
        result.conditions.append(ready)
    # Composed all the same: the engine may read the gang's variables some other way.
    for warning in wiring.gang_warnings(spec["engines"], stack=ctx.stack):
        result.events.append(Event("Warning", warning, wiring.REASON))
    for warning in parallelism.parallelism_warnings(spec["engines"]):
        result.events.append(Event("Warning", warning, parallelism.REASON))


def _requirements(replica: Obj) -> dict[str, Requirement]:
    spec = replica["spec"]
    cluster = Requirement(API_VERSION, "InferenceCluster", match_name=spec["clusterName"])
    requirements = {CLUSTER_REQUIREMENT: cluster}
    cache_ref = spec.get("modelCacheRef")
    if cache_ref:
        requirements[CACHE_REQUIREMENT] = Requirement(
            API_VERSION, "ModelCache", match_name=cache_ref["name"], namespace=namespace_of(replica)
        )
    return requirements


def _hold(inputs: Inputs, requirements: dict[str, Requirement], reason: str, why: str) -> Result:
    """Inputs are missing: compose nothing new, and never let Crossplane delete what runs."""
    observed = inputs.observed
    if not observed:
        return Result(
            requirements=requirements,
            conditions=[
                Condition(
                    ModelReplica.MODEL_SERVING, "False", reason, f"{why}; nothing composed yet"
                )
            ],
            events=[Event("Normal", f"{why}; waiting before composing", reason)],
            ready="False",  # nothing composed, so nothing runs: not Available
        )
    message = (
        f"{why}; keeping the {len(observed)} composed resources exactly as last observed "
        "until it returns, so nothing running is torn down"
    )
    return Result.held(
        observed,
        requirements=requirements,
        conditions=[Condition(ModelReplica.MODEL_SERVING, "False", reason, message)],
        events=[Event("Warning", message, reason)],
    )


def _first(items: list[Obj] | None) -> Obj | None:
    return items[0] if items else None
