"""The ModelCache composition: stage a model's weights once per selected cluster.

Inputs are the cache and, as a required resource, every InferenceCluster. For each cluster the
cache's ``clusterSelector.matchLabels`` selects (every cluster when absent) that publishes
``status.providerConfigRef``, it composes through provider-kubernetes Objects in the cache's
namespace on the control plane, applied to the cache's namespace on the workload cluster:

- the remote Namespace, shared with the ModelReplicas of that namespace and never deleted;
- the ReadWriteMany PersistentVolumeClaim named ``cache_claim_name(<cache>)``, the claim a
  ModelReplica with ``spec.modelCacheRef`` mounts, of the RWX class the cluster names (a cluster
  that names none cannot stage: its phase says so and nothing new is composed there);
- with ``huggingFace.authSecret``, a copy of the token on the workload cluster, patched from the
  user's Secret by provider-kubernetes, so the token never appears in a composed manifest;
- a hydration Job that runs ``hf download`` of the revision's commit into the claim with the
  same ``HF_HUB_CACHE`` the engines get, so the snapshot lands where the engines look for it;
- while a branch or tag is not resolved to a commit, on the first cluster only, the Pod that
  resolves it (resolve.py), and no hydration Job anywhere.

A cluster that no longer matches loses its objects (the cache is per cluster) once the cache's
replicas are read and none mounts the claim there (still_mounted: they move make-before-break,
and the claim must outlive them). One that no longer exists loses them too: missing from the
list, it is asked for by name, and its objects stay until nothing comes back. A selected
cluster without ``providerConfigRef`` keeps what was observed for it: the reference going
missing is a transient fault of the cluster's own composition. So does every cluster when none
is listed: all deleted and a list that failed or lags look alike.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from modelplane.apis import API_VERSION
from modelplane.compose.modelcache import hydrated as latch
from modelplane.compose.modelcache import resolve, revisions
from modelplane.compose.modelcache.revisions import Holding
from modelplane.compose.shared.cache import (
    CACHE_MOUNT_PATH,
    CACHE_VOLUME,
    MARKER_DIR,
    RESOLVED,
    cache_claim_name,
    cache_revision,
    requested_revision,
    resolve_request,
    resolved_commit,
    revision_marker,
    revision_path,
    stages_on,
)
from modelplane.compose.shared.evidence import Lookup, listed_and_found, look_up_unlisted
from modelplane.compose.shared.frontdoor import secret_copy_references
from modelplane.compose.shared.remote import (
    NEVER_DELETE,
    OBSERVED_MANIFEST,
    cel_readiness,
    managed_metadata,
    remote_namespace,
    remote_object,
    secret_copy,
)
from modelplane.composer import (
    CLASSES,
    Condition,
    Desired,
    Inputs,
    Requirement,
    Result,
    namespace_of,
)
from modelplane.kube import objects
from modelplane.kube.names import dns_label, short_hash
from modelplane.kube.objects import Obj
from modelplane.labels import MANAGED_BY
from modelplane.observed import carry_forward, ready_as_observed
from modelplane.reasons import ModelCache
from modelplane.scheduling.fleet import cache_storage_class, pool_class_names
from modelplane.scheduling.scheduler import parse_fleet, placeable_on
from modelplane.shortlist import shortlist

CLUSTERS = "inference-clusters"
REQUIREMENTS = {CLUSTERS: Requirement(API_VERSION, "InferenceCluster")}
DEPLOYMENTS = "model-deployments"
REPLICAS = "model-replicas"
BY_NAME = "cluster"
"""Requirements asking for a cluster the list does not hold by name: ``cluster/<name>``."""
CLASS_BY_NAME = "class"
"""Requirements asking for a pool's class the list does not hold by name: ``class/<name>``."""
HYDRATED = ModelCache.HYDRATED

# The vLLM engine image the examples pin: it ships huggingface_hub with the ``hf`` CLI, so the
# weights are fetched by the same library version the engines read the cache with, from an
# image the operator already trusts and pulls; no runtime ``pip install``.
HYDRATE_IMAGE = "vllm/vllm-openai:v0.23.0"
# A few retries ride out a flaky download; past them the Job fails and the phase says why.
BACKOFF_LIMIT = 3
# The vLLM image defaults to root; the download needs no privilege. fsGroup makes the claim
# writable for this user wherever the volume plugin applies ownership.
RUN_AS = 1000
SCRATCH_VOLUME = "scratch"
SCRATCH_PATH = "/tmp"
TOKEN_KEY = "HF_TOKEN"

# Guards first: a just-created Job or claim has no status, and the query must not error then.
JOB_COMPLETE = (
    "has(object.status) && has(object.status.conditions) && "
    "object.status.conditions.exists(c, c.type == 'Complete' && c.status == 'True')"
)
CLAIM_BOUND = "has(object.status) && has(object.status.phase) && object.status.phase == 'Bound'"

PENDING, HYDRATING, READY, FAILED = "Pending", "Hydrating", "Ready", "Failed"
CANNOT_STAGE = "CannotStage"
# ReadWriteMany is what every engine pod of every replica mounts at once; a cluster's default
# class (EBS, PD) usually cannot serve it, and the claim would stay Pending with no reason shown.
NO_STORAGE_CLASS = (
    "cannot stage: the cluster names no ReadWriteMany storage class "
    "(spec.cluster.existing.cache.storageClassName)"
)
NAMESPACE, CLAIM, TOKEN, HYDRATE, PRUNE = "namespace", "claim", "token", "hydrate", "prune"
RESOLVE = "resolve"
LISTED = 5
"""The most replicas a message names one by one."""
ROLES = (NAMESPACE, CLAIM, TOKEN, HYDRATE, PRUNE, RESOLVE)
DIGESTED = (HYDRATE, PRUNE, RESOLVE)
"""Roles whose keys carry a digest of what they run: ``<role>-<digest>-<cluster>``."""


@dataclass(frozen=True)
class ClusterPhase:
    name: str
    phase: str
    message: str = ""
    hydrated_by: str = ""
    """Ready: the digest of the Job that filled the claim (``hydrated``)."""
    claim_uid: str = ""
    holding: Holding = field(default_factory=Holding)
    """The revisions the claim holds (revisions.py)."""
    kept: str = ""
    """Why a cluster no longer selected keeps its claim (still_mounted); "" when selected."""

    def said(self) -> str:
        """The phase's message, with why a cluster no longer selected keeps its claim."""
        return "; ".join(m for m in (self.message, self.kept) if m)

    def as_status(self) -> Obj:
        out: Obj = {"name": self.name, "phase": self.phase}
        if self.said():
            out["message"] = self.said()
        if self.hydrated_by:
            out[latch.HYDRATED_BY] = self.hydrated_by
        if self.claim_uid:
            out[latch.CLAIM_UID] = self.claim_uid
        return out | self.holding.fields()


def compose_model_cache(inputs: Inputs) -> Result:
    mc = inputs.composite
    problem = _malformed(mc)
    if problem:
        return Result.failed(problem)
    mine = _observed_by_cluster(inputs.observed)
    listed = _read_clusters(inputs, mine)
    if isinstance(listed, Result):
        return latch.keep_status(mc, listed)
    known, lookup = listed
    result = Result(requirements={**REQUIREMENTS, **_users(mc), **lookup.requirements})
    done = latch.recorded(mc)
    phases = []
    for name in sorted(lookup.pending):
        result.resources.update(carry_forward(mine[name]))
        message = "not listed; its objects are kept until it is read by name"
        phases.append(carried_phase(mc, name, message, done.get(name)))
    staging = _staging(inputs, known, mine, result)
    mc, resolver, resolving = resolution(mc, staging.staged, inputs.observed)
    for key, obj in resolver.items():
        result.resources[key] = Desired(obj, ready=ready_as_observed(inputs.observed.get(key)))
    phases += _stage(mc, inputs, staging, mine, done, resolving, result)
    _report(mc, phases, resolving, result)
    return result


def _read_clusters(
    inputs: Inputs, mine: Mapping[str, Mapping[str, Obj]]
) -> tuple[list[Obj], Lookup] | Result:
    """The clusters known (those listed and those asked for by name and found) with the by-name
    answers (``pending``: not answered yet), or a held result while the list is not read or
    holds none of the clusters the cache's objects are on with no evidence they are gone."""
    if CLUSTERS not in inputs.required:
        message = "reading the InferenceClusters; existing objects are kept as they are"
        return _held(inputs.observed, ModelCache.WAITING_FOR_FLEET, message)
    listed = list(inputs.required[CLUSTERS])
    # A cluster holding our objects but missing from the list is asked for by name: only
    # nothing back (or found no longer selected, with no replica mounting the claim there:
    # still_mounted) is evidence enough to delete its weights.
    lookup = look_up_unlisted(inputs, BY_NAME, API_VERSION, "InferenceCluster", mine, listed)
    if not listed and inputs.observed and (lookup.pending or not mine):
        held = _fleet_unlisted(inputs.observed, sorted(mine))
        held.requirements.update(lookup.requirements)
        return held
    return [*listed, *lookup.found.values()], lookup


@dataclass(frozen=True)
class _Staging:
    """The clusters the weights are staged on: where they are used, then those kept (by name,
    with why) while a replica may still mount the claim there."""

    staged: list[Obj]
    kept: dict[str, tuple[Obj, str]]


def _staging(
    inputs: Inputs, known: list[Obj], mine: Mapping[str, Mapping[str, Obj]], result: Result
) -> _Staging:
    mc = inputs.composite
    candidates = selected(mc, known)
    # A class the candidates' pools name that the list does not hold is asked for by name:
    # a lagging list would otherwise take its clusters out of where the weights are used.
    pools = () if "clusterSelector" in mc["spec"] else pool_class_names(candidates)
    classes, class_lookup = listed_and_found(
        inputs, CLASSES, CLASS_BY_NAME, "InferenceClass", pools
    )
    result.requirements.update(class_lookup.requirements)
    used = where_used(mc, inputs, candidates, classes)
    kept = still_mounted(mc, inputs, known, used, mine)
    return _Staging([*used, *(c for c, _ in kept.values())], kept)


def _stage(
    mc: Obj,
    inputs: Inputs,
    staging: _Staging,
    mine: Mapping[str, Mapping[str, Obj]],
    done: Mapping[str, Any],
    resolving: Resolving | None,
    result: Result,
) -> list[ClusterPhase]:
    """What is composed on each staged cluster (into ``result``), and its phase."""
    on_cluster = revisions.by_cluster(inputs.required.get(REPLICAS))
    phases = []
    for cluster in staging.staged:
        name = str(cluster["metadata"]["name"])
        here = None if on_cluster is None else on_cluster.get(name, [])
        observed = mine.get(name, {})
        phase, desired = stage_on(mc, cluster, inputs, observed, done.get(name), resolving, here)
        result.resources.update(desired)
        kept = staging.kept.get(name)
        phases.append(dataclasses.replace(phase, kept=kept[1]) if kept else phase)
    return phases


def _report(
    mc: Obj, phases: list[ClusterPhase], resolving: Resolving | None, result: Result
) -> None:
    """Each cluster's phase, the resolved commit, and Hydrated (the cache not ready until
    it is True)."""
    phases.sort(key=lambda p: p.name)
    ready = sum(1 for p in phases if p.phase == READY)
    result.status = {
        "clusters": [p.as_status() for p in phases],
        "summary": {"ready": f"{ready}/{len(phases)}"},
    }
    commit = resolved_commit(mc)
    if commit is not None:
        result.status[RESOLVED] = resolve.record(mc, commit)
    hydrated = hydrated_condition(phases, resolving is not None)
    result.conditions.append(hydrated)
    if hydrated.status != "True":
        # Staged nowhere yet (no cluster selected, or none writable): nothing composed says so.
        result.ready = "False"


def stage_on(
    mc: Obj,
    cluster: Obj,
    inputs: Inputs,
    observed: Mapping[str, Obj],
    record: Mapping[str, Any] | None,
    resolving: Resolving | None,
    replicas: Sequence[Obj] | None,
) -> tuple[ClusterPhase, dict[str, Desired]]:
    """One cluster's phase and what is composed there; ``observed``: the cache's Objects on it,
    ``record``: its hydration as the status records it (``hydrated``), ``replicas``: those
    listed on it (None while they are not read)."""
    name = str(cluster["metadata"]["name"])
    provider_config = _provider_config(cluster)
    if provider_config is None or not cache_storage_class(cluster):
        desired = carry_forward(observed)
        if provider_config is None:
            message = "the cluster publishes no status.providerConfigRef yet"
            return carried_phase(mc, name, message, record), desired
        held = revisions.recorded(mc, name)
        return ClusterPhase(name, CANNOT_STAGE, NO_STORAGE_CLASS, holding=held), desired
    composed = compose_on_cluster(mc, cluster, provider_config)
    if resolving is not None:
        phase, composed = resolving.waiting(name, composed)
    elif cache_revision(mc) in revisions.recorded(mc, name).pruning:
        phase, composed = still_pruning(mc, name, composed)
    else:
        phase, composed = hydration(name, composed, inputs.observed, record)
    phase, pruner = holding(mc, phase, inputs, provider_config, record, replicas)
    composed.update(pruner)
    return phase, {
        k: Desired(o, ready=ready_as_observed(inputs.observed.get(k))) for k, o in composed.items()
    }


def _users(mc: Obj) -> dict[str, Requirement]:
    """What says where the weights are used: the deployments and replicas of the cache's
    namespace, and the classes deciding where a deployment could run."""
    ns = namespace_of(mc)
    return {
        DEPLOYMENTS: Requirement(API_VERSION, "ModelDeployment", match_labels={}, namespace=ns),
        REPLICAS: Requirement(API_VERSION, "ModelReplica", match_labels={}, namespace=ns),
        CLASSES: Requirement(API_VERSION, "InferenceClass"),
    }


def where_used(
    mc: Obj, inputs: Inputs, clusters: list[Obj], classes: list[Obj] | None
) -> list[Obj]:
    """Without a clusterSelector, the weights follow placements: staged only on the clusters
    where a deployment referencing the cache could be placed (scheduling.placeable_on, whatever
    the health of the cluster's serving stack) or a replica still mounts it. Until those lists
    are read (``classes`` None: not read yet, or a class asked for by name not answered), and
    while nothing references the cache (weights staged ahead of a deployment), every cluster
    stays selected."""
    users = _users_read(mc, inputs, classes)
    if users is None or not classes:
        return clusters  # an empty list of classes is no evidence that nothing fits
    deployments, replicas = users
    used = {str(objects.dig(r, "spec", "clusterName", default="")) for r in replicas}
    # Once, whatever the number of deployments; stack health aside (stack_aside).
    fleet = parse_fleet([stack_aside(c) for c in clusters], classes)
    for d in deployments:
        used.update(placeable_on(d, fleet))
    return [c for c in clusters if str(c["metadata"]["name"]) in used]


def _users_read(
    mc: Obj, inputs: Inputs, classes: list[Obj] | None
) -> tuple[list[Obj], list[Obj]] | None:
    """The deployments and replicas referencing the cache, or None while the weights do not
    follow them: a clusterSelector, a list or a class not read yet, or nothing referencing it."""
    unread = any(k not in inputs.required for k in _users(mc)) or classes is None
    if "clusterSelector" in mc["spec"] or unread:
        return None
    deployments = [d for d in inputs.required[DEPLOYMENTS] if mounts(d, mc)]
    replicas = [r for r in inputs.required[REPLICAS] if mounts(r, mc)]
    if not deployments and not replicas:
        return None
    return deployments, replicas


def mounts(obj: Mapping[str, Any], mc: Obj) -> bool:
    """Whether a ModelDeployment's template or a ModelReplica references the cache."""
    spec = objects.spec(obj)
    spec = objects.dig(spec, "template", "spec") or spec
    ref = objects.dig(spec, "modelCacheRef")
    return isinstance(ref, Mapping) and ref.get("name") == mc["metadata"]["name"]


def still_mounted(
    mc: Obj, inputs: Inputs, clusters: list[Obj], used: list[Obj], mine: Mapping[str, Any]
) -> dict[str, tuple[Obj, str]]:
    """The clusters of ``clusters`` holding the cache's objects that are no longer where it is
    staged (``used``: a clusterSelector that stopped matching, or no deployment that could be
    placed there any more), each with why it keeps them: replicas there still mount the claim,
    or nothing says none does. Their replicas move make-before-break, so the claim must outlive
    them: it goes only once the replicas are read and none of the cache's is on the cluster."""
    wanted = {objects.name(c) for c in used}
    leaving = [c for c in clusters if objects.name(c) in mine and objects.name(c) not in wanted]
    if not leaving:
        return {}
    readers = _readers(mc, inputs)
    out: dict[str, tuple[Obj, str]] = {}
    for cluster in leaving:
        name = str(cluster["metadata"]["name"])
        if isinstance(readers, str):
            out[name] = (cluster, readers)
        elif readers.get(name):
            out[name] = (cluster, _mounted_by(readers[name]))
    return out


def _readers(mc: Obj, inputs: Inputs) -> dict[str, list[str]] | str:
    """The cache's replicas listed, by cluster; or why the lists are no evidence of where none
    mounts the claim: not read yet, or no replica listed while a deployment referencing the
    cache is (a list that lags or failed looks exactly like every replica gone)."""
    replicas = inputs.required.get(REPLICAS)
    deployments = inputs.required.get(DEPLOYMENTS)
    if replicas is None or deployments is None:
        return "no longer selected; kept until the ModelReplicas that may mount it are read"
    if not replicas:
        users = sorted(str(d["metadata"]["name"]) for d in deployments if mounts(d, mc))
        if users:
            return (
                "no longer selected; kept: no ModelReplica is listed while ModelDeployment "
                f"{', '.join(users)} references the cache, which is no evidence none mounts it"
            )
    out: dict[str, list[str]] = {}
    for replica in replicas:
        if mounts(replica, mc):
            cluster = str(objects.dig(replica, "spec", "clusterName", default=""))
            out.setdefault(cluster, []).append(str(replica["metadata"]["name"]))
    return out


def _mounted_by(replicas: list[str]) -> str:
    named = shortlist(sorted(replicas), LISTED)
    return f"no longer selected; its claim is kept while these ModelReplicas mount it: {named}"


def stack_aside(cluster: Obj) -> Obj:
    """The cluster without its conditions, so placeability is judged on its spec: a serving
    stack not ready (installing, or a stack-wave upgrade) says where no new replica lands now,
    not where the weights are wanted. Judged on it, a blip would delete the staged weights and
    its end download them all again."""
    status = cluster.get("status")
    if not isinstance(status, Mapping) or "conditions" not in status:
        return cluster
    return {**cluster, "status": {k: v for k, v in status.items() if k != "conditions"}}


def selected(mc: Obj, clusters: list[Obj]) -> list[Obj]:
    """The clusters ``spec.clusterSelector.matchLabels`` selects, by name; all when unset."""
    out = [c for c in clusters if stages_on(mc, objects.labels(c))]
    return sorted(out, key=lambda c: str(c["metadata"]["name"]))


def compose_on_cluster(mc: Obj, cluster: Obj, provider_config: str) -> dict[str, Obj]:
    """The wrapped remote objects for one cluster, by composition resource name."""
    name = str(cluster["metadata"]["name"])
    auth = mc["spec"]["huggingFace"].get("authSecret")
    job = hydration_job(mc, auth is not None)
    # The Job's pod template is immutable: a changed download is a new Job under a new key,
    # so Crossplane deletes the old Object (and its Job) instead of failing an update.
    revision = short_hash(repr(job["spec"]))
    job["metadata"]["name"] = dns_label("modelcache", objects.name(mc), revision)
    namespace = remote_namespace(namespace_of(mc))
    out = {
        f"{NAMESPACE}-{name}": _wrap(
            mc, NAMESPACE, name, provider_config, namespace, policies=NEVER_DELETE
        ),
        f"{CLAIM}-{name}": _wrap(
            mc, CLAIM, name, provider_config, claim(mc, cluster), ready_when=CLAIM_BOUND
        ),
    }
    if auth is not None:
        copy = secret_copy(token_secret_name(objects.name(mc)), namespace_of(mc))
        token = _wrap(mc, TOKEN, name, provider_config, copy)
        source_key = str(auth.get("key") or TOKEN_KEY)
        token["spec"]["references"] = secret_copy_references(
            namespace_of(mc), [(str(auth["name"]), source_key, TOKEN_KEY)]
        )
        out[f"{TOKEN}-{name}"] = token
    out[f"{HYDRATE}-{revision}-{name}"] = _wrap(
        mc, f"{HYDRATE}-{revision}", name, provider_config, job, ready_when=JOB_COMPLETE
    )
    return out


def claim(mc: Obj, cluster: Obj) -> Obj:
    spec: Obj = {
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": f"{int(mc['spec']['huggingFace']['sizeGiB'])}Gi"}},
        "storageClassName": cache_storage_class(cluster),
    }
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": managed_metadata(cache_claim_name(objects.name(mc)), namespace_of(mc)),
        "spec": spec,
    }


def token_secret_name(cache: str) -> str:
    return dns_label("modelcache", cache, "hf-token")


def hydration_job(mc: Obj, authenticated: bool) -> Obj:
    """``hf download`` of the repo at its commit into the claim; the name is set by the caller."""
    revision = cache_revision(mc)
    # The resolved commit, never the branch: every cluster downloads the same snapshot.
    args = [str(mc["spec"]["huggingFace"]["repo"]), "--revision", revision]
    env: list[Obj] = [
        # Exactly what the engines pinned to this revision get (pods.py): the download lands
        # where they read, beside every other revision.
        {"name": "HF_HUB_CACHE", "value": revision_path(mc, revision)},
        # HF_HOME holds the CLI's own state (token file, Xet chunk cache): scratch, not the claim.
        {"name": "HF_HOME", "value": f"{SCRATCH_PATH}/hf"},
        {"name": "HOME", "value": SCRATCH_PATH},
        {"name": "HF_HUB_DISABLE_TELEMETRY", "value": "1"},
    ]
    if authenticated:
        token = {"name": token_secret_name(objects.name(mc)), "key": TOKEN_KEY}
        env.append({"name": TOKEN_KEY, "valueFrom": {"secretKeyRef": token}})
    env.append({"name": "MODELPLANE_HYDRATED_MARKER", "value": revision_marker(mc, revision)})
    container = {
        "name": "hydrate",
        "image": HYDRATE_IMAGE,
        # The marker is written only once the download succeeded: engines wait for it, so they
        # never read a half-written snapshot nor start fetching the repo themselves.
        "command": ["sh", "-c", _DOWNLOAD_THEN_MARK, "hydrate"],
        "args": args,
        "env": env,
        "volumeMounts": [
            {"name": CACHE_VOLUME, "mountPath": CACHE_MOUNT_PATH},
            {"name": SCRATCH_VOLUME, "mountPath": SCRATCH_PATH},
        ],
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
    }
    labels = {MANAGED_BY: "modelplane"}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "", "namespace": namespace_of(mc), "labels": labels},
        "spec": {
            "backoffLimit": BACKOFF_LIMIT,
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    # Never: each retry is a new pod, so a failed attempt's log stays readable.
                    "restartPolicy": "Never",
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": RUN_AS,
                        "runAsGroup": RUN_AS,
                        "fsGroup": RUN_AS,
                        # A retry must not walk every file of a large claim to chown it again.
                        "fsGroupChangePolicy": "OnRootMismatch",
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [container],
                    "volumes": [
                        {
                            "name": CACHE_VOLUME,
                            "persistentVolumeClaim": {
                                "claimName": cache_claim_name(objects.name(mc))
                            },
                        },
                        {"name": SCRATCH_VOLUME, "emptyDir": {}},
                    ],
                },
            },
        },
    }


# "$@" is the repo and revision, passed as arguments so no part of them is read by the shell.
# A revision once marked is never written again. `hf download --quiet` prints the snapshot it
# filled (<cache>/models--org--name/snapshots/<commit>); refs/main then names that commit, so an
# engine asking for the default revision offline reads exactly it.
_DOWNLOAD_THEN_MARK = (
    '[ -f "$MODELPLANE_HYDRATED_MARKER" ] && exit 0; '
    'snapshot=$(hf download "$@" --quiet) && [ -d "$snapshot" ] && '
    'repo="${snapshot%/snapshots/*}" && mkdir -p "$repo/refs" && '
    'printf %s "${snapshot##*/}" > "$repo/refs/main" && '
    f'mkdir -p {MARKER_DIR} && touch "$MODELPLANE_HYDRATED_MARKER"'
)


POD_SUCCEEDED = (
    "has(object.status) && has(object.status.phase) && object.status.phase == 'Succeeded'"
)


@dataclass(frozen=True)
class Resolving:
    """The cache's branch or tag is not resolved yet: no cluster downloads it."""

    revision: str
    cluster: str
    """Where the resolve Pod runs ("" when no cluster can run it)."""
    message: str

    def waiting(self, name: str, composed: dict[str, Obj]) -> tuple[ClusterPhase, dict[str, Obj]]:
        """One cluster's phase, and what of ``composed`` it needs: no hydration Job, and the
        token only where the resolve Pod reads it."""
        token = f"{TOKEN}-{name}" if name != self.cluster else None
        needed = {k: v for k, v in composed.items() if not k.startswith(f"{HYDRATE}-")}
        needed.pop(token or "", None)
        if name == self.cluster:
            message = f"resolving revision {self.revision} to a commit here: {self.message}"
        else:
            message = f"waiting for revision {self.revision} to be resolved on {self.cluster}"
        return ClusterPhase(name, PENDING, message), needed


def resolution(
    mc: Obj, clusters: list[Obj], observed: Mapping[str, Obj]
) -> tuple[Obj, dict[str, Obj], Resolving | None]:
    """The cache with its commit (resolve.py), the resolve Pod's Object while it is needed, and
    what the clusters wait for while the revision is not resolved."""
    if resolved_commit(mc) is not None:
        return mc, {}, None
    revision = requested_revision(mc)
    stageable = [c for c in clusters if _provider_config(c) and cache_storage_class(c)]
    if not stageable:
        return mc, {}, Resolving(revision, "", "no cluster can stage the weights")
    template = hydration_job(mc, "authSecret" in mc["spec"]["huggingFace"])["spec"]["template"]
    pod = resolve.resolve_pod(mc, template)
    # A new request is a new Pod: an old one still observed must not answer it.
    digest = short_hash(repr(pod["spec"]), repr(resolve_request(mc)))
    pod["metadata"]["name"] = dns_label("modelcache", objects.name(mc), RESOLVE, digest)
    # Where this Pod already runs, while that cluster can stage (a list that lags must not move
    # it); else the first in name order.
    running = [c for c in stageable if f"{RESOLVE}-{digest}-{c['metadata']['name']}" in observed]
    cluster = (running or stageable)[0]
    name, provider_config = str(cluster["metadata"]["name"]), str(_provider_config(cluster))
    key = f"{RESOLVE}-{digest}-{name}"
    wrapped = _wrap(mc, f"{RESOLVE}-{digest}", name, provider_config, pod, ready_when=POD_SUCCEEDED)
    commit, message = resolve.observed(observed.get(key))
    if commit is None:
        return mc, {key: wrapped}, Resolving(revision, name, message)
    # Used at once, and kept until the record is in the status it is published to.
    return resolve.with_record(mc, resolve.record(mc, commit)), {key: wrapped}, None


def hydration(
    name: str,
    composed: dict[str, Obj],
    observed: Mapping[str, Obj],
    record: Mapping[str, Any] | None,
) -> tuple[ClusterPhase, dict[str, Obj]]:
    """One cluster's phase, and what of ``composed`` it still needs: once its hydration is
    recorded and still holds (``hydrated``), neither the Job nor the token copy."""
    # The current Job's Object only: one of an earlier download says nothing about this one.
    [job_key] = [k for k in composed if k.startswith(f"{HYDRATE}-")]
    digest = job_key.split("-")[1]
    claim_obj = observed.get(f"{CLAIM}-{name}")
    uid = latch.claim_uid(claim_obj)
    if record is not None and latch.still_hydrated(record, digest, claim_obj):
        uid = uid or str(record.get(latch.CLAIM_UID) or "")
        needed = {k: v for k, v in composed.items() if k not in (job_key, f"{TOKEN}-{name}")}
        return ClusterPhase(name, READY, hydrated_by=digest, claim_uid=uid), needed
    phase = cluster_phase(name, observed.get(job_key))
    if phase.phase == READY:
        phase = dataclasses.replace(phase, hydrated_by=digest, claim_uid=uid)
    return phase, composed


def holding(
    mc: Obj,
    phase: ClusterPhase,
    inputs: Inputs,
    provider_config: str,
    record: Mapping[str, Any] | None,
    replicas: Sequence[Obj] | None,
) -> tuple[ClusterPhase, dict[str, Obj]]:
    """The phase with what the claim now holds, and the prune Job it still needs (revisions.py);
    ``record``: the cluster's hydration as the status records it (``hydrated``); ``replicas``:
    those listed on this cluster (None while they are not read)."""
    name = phase.name
    before = revisions.recorded(mc, name)
    was = str(objects.dig(record, latch.CLAIM_UID) or "")
    if was and phase.claim_uid and was != phase.claim_uid:
        before = Holding()  # a claim re-created holds nothing of what the old one held
    held = revisions.hydrated(before, cache_revision(mc)) if phase.phase == READY else before
    pruner: dict[str, Obj] = {}
    if held.pruning:
        job = prune_job(mc, held.pruning)
        digest = short_hash(repr(job["spec"]))
        job["metadata"]["name"] = dns_label("modelcache", objects.name(mc), PRUNE, digest)
        key = f"{PRUNE}-{digest}-{name}"
        if cluster_phase(name, inputs.observed.get(key)).phase == READY:
            held = dataclasses.replace(held, pruning=())
        else:
            pruner[key] = _wrap(
                mc, f"{PRUNE}-{digest}", name, provider_config, job, ready_when=JOB_COMPLETE
            )
    else:
        held = revisions.counted(held, cache_revision(mc), revisions.in_use(mc, name, replicas))
    return dataclasses.replace(phase, holding=held), pruner


def still_pruning(
    mc: Obj, name: str, composed: dict[str, Obj]
) -> tuple[ClusterPhase, dict[str, Obj]]:
    """The cache's revision is being deleted here (set back while it was pruned): it hydrates
    again only once that is done, so the download and the deletion never race."""
    message = f"revision {cache_revision(mc)} is being pruned here; it hydrates once that is done"
    needed = {k: v for k, v in composed.items() if not k.startswith((f"{HYDRATE}-", f"{TOKEN}-"))}
    return ClusterPhase(name, PENDING, message), needed


def prune_job(mc: Obj, pruned: tuple[str, ...]) -> Obj:
    """A Job deleting the pruned revisions from the claim; the name is set by the caller."""
    job = hydration_job(mc, authenticated=False)
    [container] = job["spec"]["template"]["spec"]["containers"]
    container.update(
        {
            "name": "prune",
            "command": ["sh", "-c", 'rm -rf -- "$@"', "prune"],
            "args": revisions.prune_paths(mc, pruned),
            "env": [],
        }
    )
    container["volumeMounts"] = [container["volumeMounts"][0]]
    job["spec"]["template"]["spec"]["volumes"] = [job["spec"]["template"]["spec"]["volumes"][0]]
    return job


def carried_phase(
    mc: Obj, name: str, message: str, record: Mapping[str, Any] | None
) -> ClusterPhase:
    """The phase of a cluster whose objects are carried as observed: its claim is kept, weights
    and all, so a cluster recorded hydrated (``hydrated``) stays so, as recorded."""
    held = revisions.recorded(mc, name)
    if record is None:
        return ClusterPhase(name, PENDING, message, holding=held)
    return ClusterPhase(
        name,
        READY,
        message,
        hydrated_by=str(record[latch.HYDRATED_BY]),
        claim_uid=str(record.get(latch.CLAIM_UID) or ""),
        holding=held,
    )


def cluster_phase(name: str, hydrate: Obj | None) -> ClusterPhase:
    """The phase on one cluster from the observed hydration Job Object."""
    job = objects.dig(hydrate, *OBSERVED_MANIFEST)
    if not job:
        return ClusterPhase(name, PENDING, "the hydration Job is not observed yet")
    conditions = {
        str(c.get("type")): c
        for c in objects.dig(job, "status", "conditions") or []
        if isinstance(c, Mapping) and c.get("status") == "True"
    }
    if "Complete" in conditions:
        return ClusterPhase(name, READY)
    if "Failed" in conditions:
        c = conditions["Failed"]
        detail = ": ".join(str(p) for p in (c.get("reason"), c.get("message")) if p)
        return ClusterPhase(name, FAILED, f"the hydration Job failed: {detail or 'no reason'}")
    return ClusterPhase(name, HYDRATING, "the hydration Job is downloading the weights")


def hydrated_condition(phases: list[ClusterPhase], resolving: bool) -> Condition:
    if not phases:
        return Condition(
            HYDRATED, "False", ModelCache.NO_MATCHING_CLUSTER, "no InferenceCluster is selected"
        )
    waiting = [p for p in phases if p.phase != READY]
    message = f"{len(phases) - len(waiting)} of {len(phases)} clusters ready"
    kept = [p.name for p in phases if p.kept and p.phase == READY]
    if kept:
        message += f"; kept until no ModelReplica mounts its claim: {', '.join(kept)}"
    if not waiting:
        return Condition(HYDRATED, "True", ModelCache.ALL_CLUSTERS_READY, message)
    said = [f"{p.name}: {p.phase}" + (f" ({p.said()})" if p.said() else "") for p in waiting]
    return _not_hydrated(phases, resolving, "; ".join([message, *said]))


def _not_hydrated(phases: list[ClusterPhase], resolving: bool, message: str) -> Condition:
    """Hydrated while some cluster is not ready, by the worst of their phases."""
    if any(p.phase == FAILED for p in phases):
        return Condition(HYDRATED, "False", ModelCache.HYDRATION_FAILED, message)
    if any(p.phase == CANNOT_STAGE for p in phases):
        return Condition(HYDRATED, "False", ModelCache.NO_STORAGE_CLASS, message)
    if resolving:
        return Condition(HYDRATED, "False", ModelCache.RESOLVING, message)
    return Condition(HYDRATED, "False", ModelCache.HYDRATING, message)


def _wrap(
    mc: Obj,
    role: str,
    cluster: str,
    provider_config: str,
    manifest: Obj,
    *,
    ready_when: str = "",
    policies: list[str] | None = None,
) -> Obj:
    """``ready_when``: the CEL query on the remote object that makes the Object ready (else
    ready once created)."""
    # Per cache, role and cluster: distinct from each other and from ModelReplica Objects
    # (two-part names) in the same namespace, because the hash covers every part.
    return remote_object(
        dns_label("modelcache", objects.name(mc), role, cluster),
        namespace_of(mc),
        provider_config,
        manifest,
        readiness=cel_readiness(ready_when) if ready_when else None,
        management_policies=policies,
    )


def _observed_by_cluster(observed: Mapping[str, Obj]) -> dict[str, dict[str, Obj]]:
    """Observed Objects by cluster, read back from the composition resource names."""
    out: dict[str, dict[str, Obj]] = {}
    for key, obj in observed.items():
        role, _, rest = key.partition("-")
        if role not in ROLES or not isinstance(obj.get("metadata"), Mapping):
            continue
        cluster = rest.partition("-")[2] if role in DIGESTED else rest
        out.setdefault(cluster, {})[key] = obj
    return out


def _held(observed: Mapping[str, Obj], reason: str, message: str) -> Result:
    condition = Condition(HYDRATED, "Unknown", reason, message)
    return Result.held(observed, requirements=REQUIREMENTS, conditions=[condition])


def _fleet_unlisted(observed: Mapping[str, Obj], clusters: list[str]) -> Result:
    """No InferenceCluster is listed while objects are composed: every cluster deleted, or a
    list that failed or lags. Dropping them would delete downloaded weights everywhere."""
    on = f" on {', '.join(clusters)}" if clusters else ""
    message = (
        "no InferenceCluster is listed (all deleted, or the list failed or lags): the "
        f"{len(observed)} composed objects{on} are kept as they are"
    )
    return _held(observed, ModelCache.CLUSTERS_NOT_LISTED, message)


def _malformed(mc: Obj) -> str | None:
    spec = mc.get("spec")
    if not isinstance(spec, Mapping):
        return "ModelCache spec is required"
    if spec.get("source") != "HuggingFace":
        return f"ModelCache spec.source {spec.get('source')!r} is not supported: use HuggingFace"
    return _hugging_face_problem(spec.get("huggingFace")) or _selector_problem(spec)


def _hugging_face_problem(hf: Any) -> str | None:
    if not isinstance(hf, Mapping):
        return "ModelCache spec.huggingFace is required when spec.source is HuggingFace"
    if not isinstance(hf.get("repo"), str) or not hf["repo"]:
        return "ModelCache spec.huggingFace.repo is required"
    size = hf.get("sizeGiB")
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        return "ModelCache spec.huggingFace.sizeGiB must be a positive integer"
    auth = hf.get("authSecret")
    if auth is not None and (not isinstance(auth, Mapping) or not auth.get("name")):
        return "ModelCache spec.huggingFace.authSecret.name is required"
    return None


def _selector_problem(spec: Mapping[str, Any]) -> str | None:
    selector = spec.get("clusterSelector")
    if selector is not None and not isinstance(selector, Mapping):
        return "ModelCache spec.clusterSelector must be an object with matchLabels"
    labels = objects.dig(selector, "matchLabels")
    if labels is not None and not isinstance(labels, Mapping):
        return "ModelCache spec.clusterSelector.matchLabels must be a map of labels"
    return None


def _provider_config(cluster: Obj) -> str | None:
    name = objects.dig(cluster, "status", "providerConfigRef", "name")
    return str(name) if name else None
