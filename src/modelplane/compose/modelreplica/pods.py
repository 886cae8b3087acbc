"""One member's pod template: the user's containers plus what placement and wiring need.

Modelplane touches only the ``engine`` container (claims, shared memory, cache, gang and
cache env, the serving port and default probe, SGLang's ``--enable-metrics``); every other
container passes through as the user wrote it, in the user's order.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from modelplane import labels
from modelplane.compose.modelreplica.claims import member_claim
from modelplane.compose.modelreplica.context import ReplicaContext
from modelplane.compose.modelreplica.labelsets import (
    deployment_of,
    is_serving_role,
    pod_labels,
    role_of,
    stamped,
    with_engine_type,
)
from modelplane.compose.modelreplica.names import claim_template_name
from modelplane.compose.modelreplica.sglang import with_metrics
from modelplane.compose.shared.cache import (
    CACHE_MOUNT_PATH,
    CACHE_VOLUME,
    UNVERSIONED,
    Weights,
    cache_claim_name,
    pinned_revision,
    replica_weights,
)
from modelplane.compose.shared.gpu_taint import GPU_TOLERATION
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.structs import frozen

ENGINE_CONTAINER = "engine"
CLAIM = "devices"
SHM_VOLUME = "dshm"
HTTP_PORT_NAME = "http"
# vLLM and SGLang /health can take over a second under load; the 1s default flaps.
DEFAULT_PROBE_TIMINGS = {"initialDelaySeconds": 30, "periodSeconds": 10, "timeoutSeconds": 5}


_SHM_VOLUMES = frozen([{"name": SHM_VOLUME, "emptyDir": {"medium": "Memory"}}])
_SHM_MOUNTS = frozen([{"name": SHM_VOLUME, "mountPath": "/dev/shm"}])
# The hydration Job is the cache's only writer: engines read it, mounted read-only.
_CACHE_MOUNT = frozen({"name": CACHE_VOLUME, "mountPath": CACHE_MOUNT_PATH, "readOnly": True})
_SHM_AND_CACHE_MOUNTS = frozen([*_SHM_MOUNTS, _CACHE_MOUNT])
_CLAIMS = frozen([{"name": CLAIM}])


@lru_cache(maxsize=256)
def _cache_env(weights: Weights) -> list[Obj]:
    env = [
        {"name": "HF_HUB_CACHE", "value": weights.hub_cache},
        {"name": "MODELPLANE_MODEL_CACHE", "value": weights.hub_cache},
        # Resolve the repo from the cache alone: never download beside the Job, nor take
        # huggingface_hub's file locks on shared storage.
        {"name": "HF_HUB_OFFLINE", "value": "1"},
    ]
    if weights.revision != UNVERSIONED:
        # For an engine's own flag ($(MODELPLANE_MODEL_REVISION)); none is needed: the
        # revision's cache resolves the default revision to this one.
        env.append({"name": "MODELPLANE_MODEL_REVISION", "value": weights.revision})
    return frozen(env)


CACHE_WAIT_CONTAINER = "model-cache-wait"
# $0 is the marker; the engine's own image runs it, already pulled for the engine.
_WAIT_FOR_MARKER = (
    'until [ -f "$0" ]; do echo "waiting for the model cache to be hydrated: $0"; sleep 10; done'
)
_GPU_TOLERATIONS = frozen([GPU_TOLERATION])


@lru_cache(maxsize=64)
def _default_probe(port: int) -> Obj:
    return frozen({"httpGet": {"path": "/health", "port": port}, **DEFAULT_PROBE_TIMINGS})


@dataclass(frozen=True)
class PodTemplate:
    labels: dict[str, str]
    annotations: dict[str, str] | None
    spec: Obj

    def as_template(self) -> Obj:
        """A PodTemplateSpec (Deployment, LeaderWorkerSet)."""
        metadata: Obj = {"labels": self.labels}
        if self.annotations:
            metadata["annotations"] = self.annotations
        return {"metadata": metadata, "spec": self.spec}


def member_spec(member: Obj, partner: Obj | None) -> Obj | None:
    """The member's template.spec; a gang member without one runs its partner's containers.

    That mirrors LeaderWorkerSet, where a leader without a template runs the worker's.
    """
    spec = objects.dig(member, "template", "spec")
    if spec is None and partner is not None:
        spec = objects.dig(partner, "template", "spec")
    return spec


def member_pod(
    ctx: ReplicaContext,
    engine: Obj,
    member: Obj,
    spec: Obj,
    *,
    gang_env: list[Obj] | None = None,
    scheduler: str | None = None,
    affinity: Obj | None = None,
) -> PodTemplate:
    role = role_of(member)
    claims = bool(member.get("deviceRequests"))
    weights = _weights(ctx) if ctx.model_cache_name is not None else None
    image = str((engine_container(spec) or {}).get("image", ""))
    grace, pre_stop = _drain(ctx)

    pod: Obj = {}
    if weights is not None:
        pod["initContainers"] = [_cache_wait(image, weights.marker)]
    pod["containers"] = _containers(
        ctx, spec["containers"], role, claims, _injected_env(gang_env, weights), pre_stop
    )
    pod["volumes"] = _volumes(ctx, weights)
    if scheduler:
        pod["schedulerName"] = scheduler
    pod["nodeSelector"] = {labels.POOL: str(member["nodePoolName"])}
    if affinity:
        pod["affinity"] = affinity
    # DRA pods get no automatic toleration for GPU-node taints (that admission plugin keys
    # on extended-resource limits), so every member tolerates them, claimless ones too.
    pod["tolerations"] = _GPU_TOLERATIONS
    if claims:
        pod["resourceClaims"] = [
            {
                "name": CLAIM,
                "resourceClaimTemplateName": claim_template_name(
                    ctx.name, engine["name"], role, member_claim(ctx, member).revision
                ),
            }
        ]
    if grace is not None:
        pod["terminationGracePeriodSeconds"] = grace
    pull_secrets = spec.get("imagePullSecrets")
    if pull_secrets:
        pod["imagePullSecrets"] = pull_secrets

    metadata = objects.mapping(member, "template", "metadata")
    merged = dict(metadata.get("labels") or {})
    merged.update(pod_labels(ctx.name, engine, role, stamped(*deployment_of(ctx.replica))))
    # An engine type the member's own labels name is the user's word; else the image's.
    merged = with_engine_type(merged, image)
    annotations = metadata.get("annotations")
    return PodTemplate(merged, dict(annotations) if annotations else None, pod)


def engine_container(spec: Obj | None) -> Obj | None:
    """The member template's ``engine`` container, if it has one."""
    containers = objects.dig(spec, "containers") or ()
    return next((c for c in containers if c.get("name") == ENGINE_CONTAINER), None)


def _injected_env(gang_env: list[Obj] | None, weights: Weights | None) -> list[Obj]:
    """What Modelplane tells the engine: the gang's variables, then where the weights are."""
    env = list(gang_env or ())
    if weights is not None:
        env.extend(_cache_env(weights))
    return env


def _containers(
    ctx: ReplicaContext,
    containers: list[Obj],
    role: str,
    claims: bool,
    env: list[Obj],
    pre_stop: int,
) -> list[Obj]:
    """The member's containers: the engine completed, the others as the user wrote them."""
    serving = is_serving_role(role)
    out = [
        _engine(ctx, c, containers, serving=serving, claims=claims, env=env)
        if c.get("name") == ENGINE_CONTAINER
        else c
        for c in containers
    ]
    if pre_stop:
        # The engine keeps answering what it has while the pool stops sending it more. The
        # kubelet stops a pod's containers in parallel, each once its own preStop returns
        # (kuberuntime_container.go, killContainersWithSyncResult), so every container sleeps:
        # a sidecar in front of the engine, or a gang's worker, stays up as long as it does.
        out = [_sleeping(c, pre_stop) for c in out]
    return out


def _volumes(ctx: ReplicaContext, weights: Weights | None) -> list[Obj]:
    if weights is None:
        return _SHM_VOLUMES
    claim = {"claimName": cache_claim_name(str(ctx.model_cache_name)), "readOnly": True}
    return [*_SHM_VOLUMES, {"name": CACHE_VOLUME, "persistentVolumeClaim": claim}]


def _weights(ctx: ReplicaContext) -> Weights:
    pinned = pinned_revision(ctx.replica)
    return replica_weights(ctx.model_cache or {}, pinned, str(ctx.spec["clusterName"]))


def _cache_wait(image: str, marker: str) -> Obj:
    """An init container holding the pod until the hydration Job has written ``marker``."""
    return {
        "name": CACHE_WAIT_CONTAINER,
        "image": image,
        "command": ["sh", "-c", _WAIT_FOR_MARKER, marker],
        "volumeMounts": [_CACHE_MOUNT],
    }


def _engine(
    ctx: ReplicaContext,
    container: Obj,
    pod_containers: list[Obj],
    *,
    serving: bool,
    claims: bool,
    env: list[Obj],
) -> Obj:
    # An SGLang server serves the metrics the picker scores on only when asked to.
    out = with_metrics(dict(container))
    user_env = container.get("env")
    if env or user_env:
        # Injected first: Kubernetes lets the later of two same-named entries win, so the
        # user's env overrides anything Modelplane sets, and may reference it as $(NAME).
        out["env"] = env + list(user_env or ())
    out["volumeMounts"] = _SHM_AND_CACHE_MOUNTS if ctx.model_cache_name is not None else _SHM_MOUNTS
    if claims:
        out["resources"] = {**(container.get("resources") or {}), "claims": _CLAIMS}
    if serving:
        port = ctx.serving_port
        ports = container.get("ports") or []
        if not _declares(pod_containers, port):
            named_http = any(p.get("name") == HTTP_PORT_NAME for p in ports)
            added: Obj = (
                {"containerPort": port} if named_http else {"name": "http", "containerPort": port}
            )
            out["ports"] = [*ports, added]
        if "readinessProbe" not in container:
            out["readinessProbe"] = _default_probe(_http_port(ports, port))
    return out


def _sleeping(container: Obj, seconds: int) -> Obj:
    """The container with a preStop sleep, unless it has a preStop of its own (the user's)."""
    lifecycle = container.get("lifecycle") or {}
    if "preStop" in lifecycle:
        return container
    return {**container, "lifecycle": {**lifecycle, "preStop": {"sleep": {"seconds": seconds}}}}


def _drain(ctx: ReplicaContext) -> tuple[int | None, int]:
    """The grace period and preStop seconds its deployment stamped, or none (a replica written
    by hand, or stamped before these existed, keeps its pods as they are)."""
    annotations = objects.annotations(ctx.replica)
    grace = annotations.get(labels.TERMINATION_GRACE)
    pre_stop = annotations.get(labels.PRE_STOP_SECONDS)
    return (int(grace) if grace is not None else None), int(pre_stop or 0)


def _declares(containers: list[Obj], port: int) -> bool:
    return any(p.get("containerPort") == port for c in containers for p in c.get("ports") or ())


def _http_port(ports: list[Obj], serving_port: int) -> int:
    """The engine's http port by number: a port may be unnamed, a number always resolves."""
    named = (int(p["containerPort"]) for p in ports if p.get("name") == HTTP_PORT_NAME)
    return next(named, serving_port)
