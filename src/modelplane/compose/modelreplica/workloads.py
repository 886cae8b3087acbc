"""One workload per engine, chosen by its member roles and the cluster's stack.

- Standalone                      -> apps/v1 Deployment, replicas = copies
- Leader + Worker, Standard stack -> LeaderWorkerSet, replicas = copies, size = 1 + worker.nodes
- Leader + Worker, Dynamo stack   -> Grove PodCliqueSet, one gang (scaling group replica) per copy

Each workload Object is Ready only when every copy is: the readiness queries compare ready
counts with the desired count and hold false (not error) while status is still missing.
"""

from __future__ import annotations

from functools import lru_cache

from modelplane import labels
from modelplane.compose.modelreplica.claims import claim_template, member_claim
from modelplane.compose.modelreplica.context import ReplicaContext
from modelplane.compose.modelreplica.labelsets import label_value, owned, role_of
from modelplane.compose.modelreplica.names import (
    GANG_GROUP,
    LEADER_CLIQUE,
    NAMESPACE_KEY,
    claim_key,
    gang_status_key,
    leaderworkerset_name,
    podcliqueset_name,
    scaling_group_name,
    worker_clique,
    workload_key,
    workload_name,
)
from modelplane.compose.modelreplica.pods import PodTemplate, member_pod, member_spec
from modelplane.compose.modelreplica.remote import wrap
from modelplane.compose.shared.remote import (
    NEVER_DELETE,
    OBSERVE_ONLY,
    cel_readiness,
    remote_namespace,
)
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.structs import frozen


class EngineShapeError(ValueError):
    """An engine the XRD would have rejected; the message names the field."""


_CURRENT = (
    "has(object.status) && has(object.status.observedGeneration)",
    "object.status.observedGeneration == object.metadata.generation",
)
# A Deployment's Available condition honours maxUnavailable, so count copies instead.
DEPLOYMENT_READY = cel_readiness(
    *_CURRENT,
    "has(object.status.updatedReplicas)",
    "object.status.updatedReplicas >= object.spec.replicas",
    "has(object.status.availableReplicas)",
    "object.status.availableReplicas >= object.spec.replicas",
)
# readyReplicas counts groups whose leader and every worker are ready. LeaderWorkerSet publishes
# observedGeneration only since lws#698 (v0.8 never does), so it is checked only when present;
# updatedReplicas already counts groups at the current template.
LEADERWORKERSET_READY = cel_readiness(
    "has(object.status)",
    "(!has(object.status.observedGeneration)"
    " || object.status.observedGeneration == object.metadata.generation)",
    "has(object.status.updatedReplicas)",
    "object.status.updatedReplicas >= object.spec.replicas",
    "has(object.status.readyReplicas)",
    "object.status.readyReplicas >= object.spec.replicas",
)
# A PodCliqueSet is available once its scaling group meets minAvailable (one gang); whether
# every gang is up is read from the scaling group itself (GANGS_READY).
PODCLIQUESET_READY = cel_readiness(
    *_CURRENT,
    "object.spec.replicas > 0",
    "has(object.status.availableReplicas)",
    "object.status.availableReplicas >= object.spec.replicas",
)
GANGS_READY = cel_readiness(
    "has(object.spec.replicas) && has(object.status)",
    "has(object.status.availableReplicas)",
    "object.status.availableReplicas >= object.spec.replicas",
)

# Both stacks hand gangs to KAI: a LeaderWorkerSet group as one PodGroup of 1 + worker.nodes
# pods (its LWS grouper), a Grove scaling-group copy as one PodGang.
GANG_SCHEDULER = "kai-scheduler"
# The label LeaderWorkerSet gives every pod of one group (and only that group).
LWS_GROUP_KEY_LABEL = "leaderworkerset.sigs.k8s.io/group-key"
KAI_QUEUE_LABEL = "kai.scheduler/queue"
KAI_QUEUE = "modelplane"
# The gang's copy index on each of its pods, and the PodGang (one per copy) they belong to
# (operator/api/common/labels.go).
GROVE_COPY_LABEL = "grove.io/podcliquescalinggroup-replica-index"
GROVE_GANG_LABEL = "grove.io/podgang"

GANG_INDEX_ENV = "MODELPLANE_GANG_INDEX"
LEADER_ADDRESS_ENV = "MODELPLANE_LEADER_ADDRESS"
RANK_ENV = "MODELPLANE_RANK"
GANG_SIZE_ENV = "MODELPLANE_GANG_SIZE"


def compose_workloads(ctx: ReplicaContext) -> dict[str, Obj]:
    """The remote namespace, then each engine's workload and claim templates, all wrapped."""
    resources = {
        NAMESPACE_KEY: wrap(
            ctx, NAMESPACE_KEY, remote_namespace(ctx.namespace), management_policies=NEVER_DELETE
        )
    }
    for engine in ctx.spec["engines"]:
        resources.update(engine_resources(ctx, engine))
    return resources


def engine_resources(ctx: ReplicaContext, engine: Obj) -> dict[str, Obj]:
    """The engine's wrapped workload Object(s) and ResourceClaimTemplates, by resource key."""
    members = engine["members"]
    name = engine["name"]
    key = workload_key(name)
    out: dict[str, Obj] = {}
    # One Standalone member, or a Leader and a Worker: shape.problem refused any other engine.
    roles = {role_of(m): m for m in members}
    if "Standalone" in roles:
        workload = deployment(ctx, engine, roles["Standalone"])
        out[key] = wrap(ctx, key, workload, readiness=DEPLOYMENT_READY)
    elif ctx.stack == "Dynamo":
        pcs = podcliqueset(ctx, engine, roles["Leader"], roles["Worker"])
        out[key] = wrap(ctx, key, pcs, readiness=PODCLIQUESET_READY)
        out[gang_status_key(name)] = wrap(
            ctx,
            gang_status_key(name),
            _scaling_group_ref(ctx, pcs["metadata"]["name"]),
            readiness=GANGS_READY,
            management_policies=OBSERVE_ONLY,
        )
    else:
        lws = leaderworkerset(ctx, engine, roles["Leader"], roles["Worker"])
        out[key] = wrap(ctx, key, lws, readiness=LEADERWORKERSET_READY)
    for member in members:
        if member.get("deviceRequests"):
            key = claim_key(name, role_of(member), member_claim(ctx, member).revision)
            out[key] = wrap(ctx, key, claim_template(ctx, engine, member))
    return out


_ONE_AT_A_TIME = frozen(
    {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}
)


def deployment(ctx: ReplicaContext, engine: Obj, member: Obj) -> Obj:
    pod = member_pod(ctx, engine, member, _required_spec(member, None, engine))
    selector = {labels.REPLICA: label_value(ctx.name), labels.ENGINE: label_value(engine["name"])}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _metadata(ctx, engine, workload_name(ctx.name, engine["name"])),
        "spec": {
            "replicas": _copies(engine),
            "selector": {"matchLabels": selector},
            # The scheduler places copies on exactly the devices they need, so a surge pod
            # would find no free GPU and stall the rollout: replace one copy at a time.
            "strategy": _ONE_AT_A_TIME,
            "template": pod.as_template(),
        },
    }


def leaderworkerset(ctx: ReplicaContext, engine: Obj, leader: Obj, worker: Obj) -> Obj:
    size = 1 + _worker_nodes(worker)
    env = _lws_env(size)
    spread = _one_per_node(ctx.name, engine["name"], LWS_GROUP_KEY_LABEL)

    def pod(member: Obj, partner: Obj) -> PodTemplate:
        spec = _required_spec(member, partner, engine)
        return member_pod(
            ctx, engine, member, spec, gang_env=env, scheduler=GANG_SCHEDULER, affinity=spread
        )

    leader_pod, worker_pod = pod(leader, worker), pod(worker, leader)
    metadata = _metadata(ctx, engine, leaderworkerset_name(ctx.name, engine["name"]))
    # KAI's pod grouper reads the queue from the gang's top owner, the LeaderWorkerSet.
    metadata["labels"] = {**metadata["labels"], KAI_QUEUE_LABEL: KAI_QUEUE}
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": metadata,
        "spec": {
            "replicas": _copies(engine),
            # LeaderReady would deadlock engines whose leader is ready only once workers join.
            "startupPolicy": "LeaderCreated",
            "leaderWorkerTemplate": {
                "size": size,
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": leader_pod.as_template(),
                "workerTemplate": worker_pod.as_template(),
            },
        },
    }


@lru_cache(maxsize=64)
def _lws_env(size: int) -> list[Obj]:
    # LWS prepends LWS_* to each container's env, so these references expand.
    env: list[Obj] = [
        {"name": LEADER_ADDRESS_ENV, "value": "$(LWS_LEADER_ADDRESS)"},
        {"name": RANK_ENV, "value": "$(LWS_WORKER_INDEX)"},
        {"name": GANG_SIZE_ENV, "value": str(size)},
    ]
    return frozen(env)


_PUBLISH_NOT_READY = frozen({"publishNotReadyAddresses": True})


def podcliqueset(ctx: ReplicaContext, engine: Obj, leader: Obj, worker: Obj) -> Obj:
    nodes = _worker_nodes(worker)
    name = podcliqueset_name(ctx.name, engine["name"])
    spread = _one_per_node(ctx.name, engine["name"], GROVE_GANG_LABEL)

    def pod(member: Obj, partner: Obj, rank: int) -> PodTemplate:
        spec = _required_spec(member, partner, engine)
        env = _grove_env(name, ctx.namespace, 1 + nodes, rank)
        return member_pod(
            ctx, engine, member, spec, gang_env=env, scheduler=GANG_SCHEDULER, affinity=spread
        )

    cliques = [_clique(LEADER_CLIQUE, pod(leader, worker, 0))]
    cliques += [_clique(worker_clique(r), pod(worker, leader, r)) for r in range(1, nodes + 1)]
    return {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodCliqueSet",
        "metadata": _metadata(ctx, engine, name),
        "spec": {
            # Grove defaults replicas to 0; copies scale the gang, never the set.
            "replicas": 1,
            "template": {
                # Workers dial the leader before it is ready (it is ready once they join).
                "headlessServiceConfig": _PUBLISH_NOT_READY,
                "cliques": cliques,
                # minAvailable 1: gang 0 forms the base PodGang and every further copy its own,
                # so each copy's leader and workers are scheduled together, copies independently.
                "podCliqueScalingGroups": [
                    {
                        "name": GANG_GROUP,
                        "cliqueNames": [c["name"] for c in cliques],
                        "replicas": _copies(engine),
                        "minAvailable": 1,
                    }
                ],
            },
        },
    }


@lru_cache(maxsize=256)
def _grove_env(pcs: str, namespace: str, size: int, rank: int) -> list[Obj]:
    # Grove v0.1.0-alpha.11 appends its GROVE_* variables after the template's env, and
    # Kubernetes expands $(VAR) only against variables defined earlier, so nothing here may
    # reference them. The leader's name is deterministic (Grove's namegen.go): pod hostname
    # <pcs>-0-<group>-<copy>-leader-0 under the headless Service <pcs>-0; only the copy index
    # varies per gang, read from the pod's own label into a variable defined first. The rank is
    # written per clique (one clique per worker rank), since no label numbers a gang's pods.
    leader_host = f"{pcs}-0-{GANG_GROUP}-$({GANG_INDEX_ENV})-{LEADER_CLIQUE}-0"
    env: list[Obj] = [
        {
            "name": GANG_INDEX_ENV,
            "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{GROVE_COPY_LABEL}']"}},
        },
        {
            "name": LEADER_ADDRESS_ENV,
            "value": f"{leader_host}.{pcs}-0.{namespace}.svc.cluster.local",
        },
        {"name": RANK_ENV, "value": str(rank)},
        {"name": GANG_SIZE_ENV, "value": str(size)},
    ]
    return frozen(env)


@lru_cache(maxsize=256)
def _one_per_node(replica: str, engine: str, gang_label: str) -> Obj:
    # Members of one gang on distinct nodes, whatever share of a node each claims: two members
    # on one node would share its NICs and its failure. The API server narrows the selector to
    # the pod's own gang (matchLabelKeys), so other gangs of the engine may share nodes.
    # Not managed-by: Grove overwrites it on its pods (grove-operator).
    mine = {k: v for k, v in owned(replica, engine).items() if k != labels.MANAGED_BY}
    term = {
        "labelSelector": {"matchLabels": mine},
        "matchLabelKeys": [gang_label],
        "topologyKey": "kubernetes.io/hostname",
    }
    return frozen({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})


def _clique(name: str, pod: PodTemplate) -> Obj:
    clique: Obj = {"name": name, "labels": {**pod.labels, KAI_QUEUE_LABEL: KAI_QUEUE}}
    if pod.annotations:
        clique["annotations"] = pod.annotations
    clique["spec"] = {
        "roleName": name,
        # One pod per clique (the leader, or one worker rank); a gang needs every one.
        "replicas": 1,
        "minAvailable": 1,
        "podSpec": pod.spec,
    }
    return clique


def _scaling_group_ref(ctx: ReplicaContext, pcs_name: str) -> Obj:
    return {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodCliqueScalingGroup",
        "metadata": {"name": scaling_group_name(pcs_name), "namespace": ctx.namespace},
    }


def _metadata(ctx: ReplicaContext, engine: Obj, name: str) -> Obj:
    return {"name": name, "namespace": ctx.namespace, "labels": owned(ctx.name, engine["name"])}


def _copies(engine: Obj) -> int:
    return int(engine.get("copies", 1))


def _worker_nodes(worker: Obj) -> int:
    return int(objects.dig(worker, "worker", "nodes", default=1))


def _required_spec(member: Obj, partner: Obj | None, engine: Obj) -> Obj:
    spec = member_spec(member, partner)
    if spec is None:
        raise EngineShapeError(
            f"engine {engine['name']!r}: member {role_of(member)} has no template.spec"
            + ("" if partner is None else " and neither has its partner")
        )
    return spec
