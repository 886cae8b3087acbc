"""The InferenceCluster composition: reach a cluster, brought or provisioned, prepare it to
serve, and publish what it offers.

``compose_cluster`` runs in stages: refuse a spec no fleet could fix, read the fleet (pool
classes and the replicas admitted to the pools, ``allocation.py``), reach the cluster, then
guard it, connect, install and publish. An ``Existing`` cluster is reached through its
kubeconfig Secret; an EKS, GKE or AKS cluster is provisioned first (``managed/``: its cloud
resources, pools grown to what the admitted replicas need) and then reached through the
connection secret its cloud writes. Either gets two ClusterProviderConfigs (provider-kubernetes'
and provider-helm's) and, once both exist (a managed cluster: once it and its system pool are
Ready), its serving stack (``stack.py``: Helm Releases and Objects, each component Managed or
External) with the Usages that order its deletion, and, while ModelReplicas or
InferenceGateways run on it, ClusterUsages that refuse the cluster's own deletion. Status
carries what ModelReplicas, the front door and the scheduler read: ``providerConfigRef``,
``gateway``, ``gpuPools``, ``servingStack``, the ``allocation`` of its pools to the replicas
placed here (the cluster admits them, so deployments need not list the fleet's replicas), and
the ``StackReady`` condition the scheduler places new replicas by. Any other source (Nebius,
Vultr) is refused with a condition, and what was composed before is carried forward.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from modelplane.apis import API_VERSION
from modelplane.compose.inferencecluster.allocation import (
    Allotted,
    allocation,
    nodes_per_pool,
    replicas_on,
)
from modelplane.compose.inferencecluster.components import RATE_LIMIT_REDIS
from modelplane.compose.inferencecluster.crds import BUNDLES
from modelplane.compose.inferencecluster.gateway import (
    GATEWAY,
    gateway_address,
    gateway_class_name,
    gateway_not_programmed,
)
from modelplane.compose.inferencecluster.handover import handover
from modelplane.compose.inferencecluster.managed import CLOUDS, Managed, managed_cluster
from modelplane.compose.inferencecluster.pools import gpu_pools, pools_condition
from modelplane.compose.inferencecluster.prerequisites import held
from modelplane.compose.inferencecluster.providers import provider_config_for
from modelplane.compose.inferencecluster.releases import HELM_CONFIG_API_VERSION
from modelplane.compose.inferencecluster.stack import Built, built_for
from modelplane.compose.inferencecluster.status import (
    STACK_READY,
    ComponentState,
    component_state,
    stack_condition,
    waiting_condition,
)
from modelplane.compose.inferencecluster.target import MANAGED, Target, target_of
from modelplane.compose.inferencecluster.usages import (
    REPLICA_GUARD,
    gateway_guard,
    guarded_replicas,
    replica_guard,
)
from modelplane.compose.inferencecluster.waves import (
    PREVIOUS_WAVE,
    Plan,
    plan,
    published_revision,
    up_to_date,
)
from modelplane.compose.shared.evidence import Lookup, listed_and_found, look_up_unlisted
from modelplane.compose.shared.fleetsecrets import trust_bundle_problem
from modelplane.composer import (
    CLASSES,
    Condition,
    ConditionStatus,
    Desired,
    Event,
    Inputs,
    Ready,
    Requirement,
    Result,
)
from modelplane.kube import objects
from modelplane.kube.names import LABEL_VALUE_MAX, dns_label
from modelplane.kube.objects import Obj
from modelplane.labels import CLUSTER
from modelplane.observed import carried, observed_ready, ready_as_observed
from modelplane.reasons import InferenceCluster
from modelplane.scheduling.fleet import pool_class_names

REPLICAS = "model-replicas"
GATEWAYS = "inference-gateways"
GATEWAY_GUARD = "gateway-guard/"
PROVIDER_CONFIG = "provider-config"
HELM_PROVIDER_CONFIG = "helm-provider-config"
GUARDED_GATEWAY = "guarded-gateway"
"""Requirements asking for a guarded gateway by name: ``guarded-gateway/<name>``."""
CLASS_BY_NAME = "class"
"""Requirements asking for a node pool's class the list does not hold: ``class/<name>``."""
GUARDED_REPLICA = "guarded-replica"
"""Requirements asking for a guarded replica by name: ``guarded-replica/<namespace>/<name>``."""
__all__ = ["CLASSES", "GATEWAY", "GATEWAYS", "HELM_PROVIDER_CONFIG", "PROVIDER_CONFIG", "REPLICAS"]


def compose_cluster(inputs: Inputs) -> Result:
    cluster = inputs.composite
    source = str(objects.dig(cluster, "spec", "cluster", "source", default=""))
    if source != "Existing" and source not in CLOUDS:
        return _unsupported(inputs, source)
    name = str(cluster["metadata"]["name"])
    problem = _refused(cluster, name)
    if problem:
        return Result.failed(problem)
    gateways = _read_gateways(inputs)
    t = replace(
        target_of(cluster, dns_label(name)), rate_limits=_rate_limits(inputs, name, gateways)
    )
    fleet = _read_fleet(inputs, cluster)
    reach = _reach(inputs, source, t, fleet)
    if isinstance(reach, str):
        return Result.failed(reach)
    result = _asking(name, source, fleet, reach)
    # The guard first: no later fault may drop the protection of replicas running here.
    _guard(inputs, name, result, _gateway_guards(inputs, name, gateways, result))
    _connect(inputs.observed, reach, result)
    states = _install(inputs, reach, result)
    result.status = _status(cluster, inputs.observed, fleet, reach, states, result)
    # InUse is a fact, not a fault: last, so the first condition not True is what keeps the
    # cluster from serving (what `render -o tree` and a reader of `describe` look at first).
    result.conditions.sort(key=lambda c: c.type == InferenceCluster.IN_USE)
    result.ready = _readiness(result.conditions)
    return result


@dataclass(frozen=True)
class _Fleet:
    """What the cluster reads of the fleet: its pools' classes (None: not read yet), the
    by-name lookups that fill them in and the allocation's, and the replicas it admits."""

    classes: list[Obj] | None
    class_lookup: Lookup
    lookups: dict[str, Requirement]
    admitted: Allotted


@dataclass(frozen=True)
class _Reach:
    """How the cluster is reached and served: its target at its wave, the connection it is
    reached by (a managed cluster's own), and the cloud resources when Modelplane provisions
    it."""

    wave: Plan
    existing: Obj
    managed: Managed | None

    @property
    def target(self) -> Target:
        return self.wave.target


def _refused(cluster: Obj, name: str) -> str | None:
    """Why the cluster cannot be composed whatever the fleet holds, if it cannot."""
    if len(name) > LABEL_VALUE_MAX:
        # Crossplane drops root-level XRD rules, so this cannot be refused at admission.
        return (
            f"InferenceCluster name {name!r} is longer than {LABEL_VALUE_MAX} characters: "
            "replicas placed here carry it as a label value, so none could be; use a shorter name"
        )
    # Refused at admission too; a composite admitted before the rule existed stops here.
    return trust_bundle_problem(cluster)


def _read_fleet(inputs: Inputs, cluster: Obj) -> _Fleet:
    # A pool's class the list does not hold is asked for by name: only nothing back is evidence
    # that the pool lost its devices (and its place in status.gpuPools).
    classes, class_lookup = listed_and_found(
        inputs, CLASSES, CLASS_BY_NAME, "InferenceClass", pool_class_names([cluster])
    )
    lookups: dict[str, Requirement] = {}
    admitted = allocation(inputs, inputs.required.get(REPLICAS), classes, lookups)
    return _Fleet(classes, class_lookup, lookups, admitted)


def _reach(inputs: Inputs, source: str, t: Target, fleet: _Fleet) -> _Reach | str:
    """The cluster's connection and target, or why its spec cannot be built."""
    cluster = inputs.composite
    managed: Managed | None = None
    if source in CLOUDS:
        # A managed pool is grown to what its admitted replicas need.
        needed = nodes_per_pool(cluster, fleet.admitted, fleet.classes)
        found = managed_cluster(cluster, source, fleet.classes, inputs.observed, t, needed)
        if isinstance(found, str):
            return f"InferenceCluster {found}"
        managed = found
    # Modelplane's default versions reach the cluster in its wave, not on the next poll.
    wave = plan(cluster, t, inputs.observed, inputs.required.get(PREVIOUS_WAVE))
    existing = managed.existing() if managed else cluster["spec"]["cluster"].get("existing") or {}
    if not isinstance(existing.get("secretRef"), Mapping) or not existing["secretRef"].get("name"):
        return (
            "InferenceCluster spec.cluster.existing.secretRef.name is required for source Existing"
        )
    bundle = wave.target.setting("inferenceExtension", BUNDLES[0])
    if bundle.managed and bundle.version not in BUNDLES:
        return (
            f"InferenceCluster spec.servingStack.inferenceExtension.version {bundle.version!r} "
            f"is not a bundle Modelplane ships; use one of {', '.join(BUNDLES)}"
        )
    return _Reach(wave, existing, managed)


def _asking(name: str, source: str, fleet: _Fleet, reach: _Reach) -> Result:
    """The result begun: what the cluster reads next, and the conditions of its source."""
    result = Result(
        requirements={
            CLASSES: Requirement(API_VERSION, "InferenceClass"),
            REPLICAS: Requirement(API_VERSION, "ModelReplica", match_labels={CLUSTER: name}),
            GATEWAYS: Requirement(API_VERSION, "InferenceGateway"),
            **fleet.class_lookup.requirements,
            **fleet.lookups,
        },
        conditions=[_source_supported(source)],
    )
    # Only a cluster Modelplane provisions has pools it can see come up.
    if reach.managed:
        result.conditions.append(reach.managed.pools_condition())
    if reach.wave.requirement is not None:
        result.requirements[PREVIOUS_WAVE] = reach.wave.requirement
    return result


def _connect(observed: Mapping[str, Obj], reach: _Reach, result: Result) -> None:
    """The managed cluster's cloud resources, and the ProviderConfigs that reach the cluster."""
    managed, t = reach.managed, reach.target
    for key, obj in (managed.resources if managed else {}).items():
        result.resources[key] = Desired(obj, ready_as_observed(observed.get(key)))
    result.resources[PROVIDER_CONFIG] = Desired(
        provider_config_for(t.kubernetes_config, reach.existing), _exists(observed, PROVIDER_CONFIG)
    )
    result.resources[HELM_PROVIDER_CONFIG] = Desired(
        provider_config_for(t.helm_config, reach.existing, HELM_CONFIG_API_VERSION),
        _exists(observed, HELM_PROVIDER_CONFIG),
    )


def _install(inputs: Inputs, reach: _Reach, result: Result) -> list[ComponentState]:
    """The serving stack once the cluster can take it, and the condition saying how far it is;
    the state of each component."""
    observed, managed = inputs.observed, reach.managed
    built = built_for(reach.target)
    ready = {key: observed_ready(obj) for key, obj in observed.items()}
    waits = held(built.resources, observed, ready)
    states = [
        component_state(p.name, p.mode, p.version, keys, observed, ready, waits)
        for p, keys in zip(built.stack.parts, built.keys, strict=True)
    ]
    if managed and not managed.ready and not any(key in observed for key in built.resources):
        # Installed once the cluster and its nodes are Ready; once composed, always composed.
        result.conditions.append(managed.provisioning())
    elif _may_install(observed, built.resources):
        handed = _compose_stack(inputs, reach, built, ready, waits, result)
        result.conditions.append(stack_condition(states))
        result.conditions.extend(handed)
    else:
        # A release or Object naming a ProviderConfig that does not exist yet only errors until
        # it does: compose them once both exist, and from then on always.
        result.conditions.append(waiting_condition(states, reach.target.kubernetes_config))
    return states


def _compose_stack(
    inputs: Inputs,
    reach: _Reach,
    built: Built,
    ready: dict[str, bool],
    waits: dict[str, str],
    result: Result,
) -> list[Condition]:
    """The stack's resources on the cluster (but those ``waits`` holds back until a
    prerequisite is ready), the Usages ordering their deletion, and the hand-overs between
    Managed and External components; the hand-overs' conditions."""
    observed, managed, t = inputs.observed, reach.managed, reach.target
    on_cluster = {**built.resources, **(managed.provisioned.on_cluster if managed else {})}
    for key, obj in on_cluster.items():
        if key not in waits:
            result.resources[key] = Desired(obj, "True" if ready.get(key) else "False")
    usages = {**built.usages, **(managed.usages(t, on_cluster) if managed else {})}
    for key, obj in usages.items():
        result.resources[key] = Desired(obj, _exists(observed, key))
    handed = handover(built.stack.parts, result.resources, observed)
    for key, obj in handed.resources.items():
        result.resources[key] = Desired(obj, "True" if ready.get(key) else "False")
    return handed.conditions(inputs.composite)


def _status(
    cluster: Obj,
    observed: Mapping[str, Obj],
    fleet: _Fleet,
    reach: _Reach,
    states: list[ComponentState],
    result: Result,
) -> Obj:
    """What the cluster publishes; the conditions of its gateway, revision and pools go into
    ``result``."""
    t = reach.target
    status: Obj = {"providerConfigRef": {"name": t.kubernetes_config}}
    status["gateway"] = _gateway_status(cluster, t, observed.get(GATEWAY), result)
    status["servingStack"] = {"components": [s.published() for s in states]}
    stack_ready = any(c.type == STACK_READY and c.status == "True" for c in result.conditions)
    revision = published_revision(cluster, reach.wave, stack_ready)
    if revision:
        status["servingStack"]["revision"] = revision
    result.conditions.append(up_to_date(reach.wave, revision))
    storage_class = objects.dig(reach.existing, "cache", "storageClassName")
    if storage_class:
        status["cache"] = {"storageClassName": storage_class}
    pools = _pools_status(cluster, fleet, result)
    if pools is not None:
        status["gpuPools"] = pools
    if fleet.admitted.published is not None:
        status["allocation"] = fleet.admitted.published
    return status


def _pools_status(cluster: Obj, fleet: _Fleet, result: Result) -> list[Obj] | None:
    """``status.gpuPools`` (None: none to publish), and the PoolsResolved condition."""
    if fleet.classes is not None:
        pools, missing = gpu_pools(objects.spec(cluster).get("nodePools") or [], fleet.classes)
        result.conditions.append(pools_condition(pools, missing))
        return pools
    reading = ", ".join(fleet.class_lookup.asked()) or "InferenceClasses"
    waiting = InferenceCluster.WAITING_FOR_CLASSES
    result.conditions.append(
        Condition(InferenceCluster.POOLS_RESOLVED, "Unknown", waiting, f"reading {reading}")
    )
    # Not read yet is no evidence a pool changed: the scheduler keeps reading the last ones.
    return objects.status(cluster).get("gpuPools")


SERVES = (
    InferenceCluster.SOURCE_SUPPORTED,
    InferenceCluster.STACK_READY,
    InferenceCluster.GATEWAY_READY,
    InferenceCluster.POOLS_RESOLVED,
)
"""The conditions that must all be True for the cluster to take replicas and serve them."""


def _readiness(conditions: list[Condition]) -> Ready:
    """Not ready while any condition it serves by is not True (a pool whose class is missing
    takes no replica, whatever the stack's resources report); else as its composed resources."""
    held = [c for c in conditions if c.type in SERVES]
    return "False" if any(c.status != "True" for c in held) else "Unspecified"


def _guard(inputs: Inputs, name: str, result: Result, gateways: str) -> None:
    """The replica guard, and the InUse condition saying what holds the cluster (``gateways``:
    the gateways' part of it, or "")."""
    replicas = inputs.required.get(REPLICAS)
    held = inputs.observed.get(REPLICA_GUARD)
    if replicas is None:
        # Not read yet: keep the guard as it stands rather than lift it on no evidence.
        if held is not None:
            result.resources[REPLICA_GUARD] = Desired(carried(held), "True")
        return
    running: Sequence[Mapping[str, Any]] = list(replicas)
    if not running and held is not None:
        # An empty list is no evidence the replicas went: ask for each guarded one by name.
        still, pending = replicas_on(
            inputs, GUARDED_REPLICA, guarded_replicas(held), name, result.requirements
        )
        if pending:
            result.resources[REPLICA_GUARD] = Desired(carried(held), "True")
            unread = (
                f"no ModelReplica is listed on this cluster; the guard stays until the "
                f"{pending} replicas it was composed for are read by name"
            )
            reason = InferenceCluster.REPLICAS_RUNNING
            result.conditions.append(Condition(InferenceCluster.IN_USE, "True", reason, unread))
            return
        running = still
    if running:
        guard = replica_guard(name, running)
        result.resources[REPLICA_GUARD] = Desired(guard, _exists(inputs.observed, REPLICA_GUARD))
        reason = InferenceCluster.REPLICAS_RUNNING
        message = "; ".join(m for m in (str(guard["spec"]["reason"]), gateways) if m)
    elif gateways:
        reason = InferenceCluster.GATEWAYS_HOSTED
        message = gateways
    else:
        reason = InferenceCluster.NO_REPLICAS
        message = (
            f"no ModelReplica labelled {CLUSTER}={name} (as a ModelDeployment labels each it "
            "places) runs on this cluster"
        )
    in_use: ConditionStatus = "True" if running or gateways else "False"
    result.conditions.append(Condition(InferenceCluster.IN_USE, in_use, reason, message))


@dataclass(frozen=True)
class _Gateways:
    """The InferenceGateways as read: those listed, and the guarded ones the list does not
    hold, asked for by name."""

    listed: list[Obj]
    lookup: Lookup

    def hosted(self, cluster: str) -> list[Obj]:
        """Those read (listed or found by name) that run on ``cluster``."""
        return [
            g
            for g in [*self.listed, *self.lookup.found.values()]
            if objects.spec(g).get("clusterName") == cluster
        ]


def _read_gateways(inputs: Inputs) -> _Gateways | None:
    """The gateways as read; None while the list is not fetched yet."""
    gateways = inputs.required.get(GATEWAYS)
    if gateways is None:
        return None
    listed = list(gateways)
    # A guarded gateway the list does not hold is asked for by name: the guard goes only once
    # nothing comes back (or it runs elsewhere now), never on a list that lags.
    guarded = {
        k.removeprefix(GATEWAY_GUARD) for k in inputs.observed if k.startswith(GATEWAY_GUARD)
    }
    lookup = look_up_unlisted(
        inputs, GUARDED_GATEWAY, API_VERSION, "InferenceGateway", guarded, listed
    )
    return _Gateways(listed, lookup)


def _rate_limits(inputs: Inputs, name: str, read: _Gateways | None) -> bool:
    """Whether a gateway hosted here sets ``spec.limits``. While the gateways are not all read,
    as last composed (the rate-limit Redis observed): a list that lags must neither restart
    Envoy Gateway without its backend nor add one on no evidence."""
    if read is None or read.lookup.pending:
        return RATE_LIMIT_REDIS in inputs.observed
    return any(objects.spec(g).get("limits") for g in read.hosted(name))


def _gateway_guards(inputs: Inputs, name: str, read: _Gateways | None, result: Result) -> str:
    """A ClusterUsage per InferenceGateway running on the cluster; what InUse says of them."""
    if read is None:
        # Not read yet: keep every guard as it stands rather than lift one on no evidence.
        for key, held in inputs.observed.items():
            if key.startswith(GATEWAY_GUARD):
                result.resources[key] = Desired(carried(held), "True")
        return ""
    lookup = read.lookup
    result.requirements.update(lookup.requirements)
    for gateway in sorted(lookup.pending):
        key = GATEWAY_GUARD + gateway
        result.resources[key] = Desired(carried(inputs.observed[key]), "True")
    hosted = sorted(str(g["metadata"]["name"]) for g in read.hosted(name))
    for gateway in hosted:
        key = GATEWAY_GUARD + gateway
        result.resources[key] = Desired(gateway_guard(name, gateway), _exists(inputs.observed, key))
    if not hosted:
        return ""
    noun = "InferenceGateway" if len(hosted) == 1 else "InferenceGateways"
    return (
        f"{noun} {', '.join(hosted)} on this cluster: a front Gateway holds Envoy Gateway's "
        "GatewayClass finalizer, so the cluster is deleted only once they are; delete them first"
    )


def _gateway_status(
    cluster: Obj, t: Target, observed: Mapping[str, Any] | None, result: Result
) -> Obj:
    published = objects.mapping(cluster, "status", "gateway")
    gw = t.gateway
    # Only the Gateway's own report withdraws an address (a new one, or Programmed=False); not
    # observed yet, re-created, or read before its status was written, the last one stands.
    observed_address = gateway_address(observed)
    not_programmed = gateway_not_programmed(observed) if not observed_address else ""
    last = str(published.get("address") or "")
    address = observed_address or ("" if not_programmed else last)
    if gw.mode == MANAGED:
        class_name = gw.class_name
    else:
        class_name = gateway_class_name(observed) or str(published.get("className") or "")
    status: Obj = {"name": gw.name, "namespace": gw.namespace}
    if class_name:
        status["className"] = class_name
    status["fleetHostname"] = gw.fleet_hostname
    if address:
        status["address"] = address
        note = ""
        if observed is None:
            note = " (as published; not observed yet)"
        elif not observed_address:
            note = " (as last published; the Gateway reports no address yet)"
        reason = InferenceCluster.ADDRESS_ASSIGNED
        message = f"gateway address {address}{note}"
    elif not_programmed:
        reason = InferenceCluster.GATEWAY_NOT_PROGRAMMED
        message = (
            f"Gateway {gw.namespace}/{gw.name} on the cluster is not programmed "
            f"({not_programmed}); replicas placed here are not reachable until it is"
        )
    else:
        reason = InferenceCluster.WAITING_FOR_GATEWAY
        message = (
            f"Gateway {gw.namespace}/{gw.name} on the cluster has no address yet; replicas "
            "placed here are not reachable until it has one"
        )
    ready: ConditionStatus = "True" if address else "False"
    result.conditions.append(Condition(InferenceCluster.GATEWAY_READY, ready, reason, message))
    return status


def _may_install(observed: Mapping[str, Any], resources: Mapping[str, Obj]) -> bool:
    configs = PROVIDER_CONFIG in observed and HELM_PROVIDER_CONFIG in observed
    return configs or any(key in observed for key in resources)


def _exists(observed: Mapping[str, Any], key: str) -> Ready:
    return "True" if key in observed else "Unspecified"


def _source_supported(source: str) -> Condition:
    if source in CLOUDS:
        reason = InferenceCluster.MANAGED
        message = f"an {source} cluster Modelplane provisions"
    else:
        reason = InferenceCluster.EXISTING
        message = "a brought-your-own cluster"
    return Condition(InferenceCluster.SOURCE_SUPPORTED, "True", reason, message)


def _unsupported(inputs: Inputs, source: str) -> Result:
    # Nothing is composed for a cloud source, but anything already composed (the source was
    # edited away from Existing) is carried forward: replicas may still reach the cluster by it.
    message = (
        f"cluster.source {source or '(unset)'} is not supported: Modelplane provisions EKS, GKE "
        "and AKS clusters only (the Nebius and Vultr providers' CRDs are not published where "
        "they can be validated against). Use one of those, or bring the cluster as source "
        "Existing with a kubeconfig secretRef; nothing is composed"
    )
    reason = InferenceCluster.UNSUPPORTED_SOURCE
    return Result(
        resources={k: Desired(carried(o)) for k, o in sorted(inputs.observed.items())},
        conditions=[Condition(InferenceCluster.SOURCE_SUPPORTED, "False", reason, message)],
        events=[Event("Warning", message, reason)],
        ready="False",
    )
