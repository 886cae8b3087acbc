"""The cache guard: an InferenceCluster is not deleted under the weights ModelCaches stage on it.

A ModelCache's claim on the cluster is backed by storage the cluster's CSI driver provisions
outside anything Modelplane composes (a Filestore instance on GKE, an EFS access point on EKS),
and the driver deletes it only when the claim goes. Deleting the cluster first takes the driver
with it and leaves the storage behind, billed. So while any ModelCache lists the cluster in its
``status.clusters`` (every cluster it has objects on, selected or kept for a replica still
mounting the claim), a ClusterUsage refuses the cluster's deletion, naming the caches.

It is lifted only on evidence: a cache the guard was composed for that the list no longer shows
here is asked for by name, and once it is gone (or stages elsewhere) its claim's Object is asked
for by name too, since Crossplane garbage-collects a deleted cache's Objects after the cache and
provider-kubernetes deletes the claim on the cluster only then. The guard stays until both are
gone. A ClusterUsage cannot name a namespaced ``by`` (Crossplane v2.3.4, usages.py), so, like the
replica guard, it carries its reason and is withdrawn by the composition.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from modelplane.compose.evidence import look_up
from modelplane.compose.inferencecluster.usages import CLUSTER_API_VERSION
from modelplane.compose.modelcache.composer import CLAIM
from modelplane.compose.remote import OBJECT_API_VERSION
from modelplane.compose.routed import USAGE_API_VERSION
from modelplane.composer import Desired, Inputs, Requirement, Result
from modelplane.kube.names import dns_label
from modelplane.observed import carried
from modelplane.shortlist import shortlist

Obj = dict[str, Any]

CACHES = "model-caches"
CACHE_GUARD = "cache-guard"
GUARDED_CACHES = "modelplane.ai/guarded-caches"
"""Annotation on the guard: every cache it holds the cluster for (``namespace/name``, comma
separated), so a cache the list no longer shows here is asked for by name before the guard goes."""
GUARDED_CACHE = "guarded-cache"
"""Requirements asking for a guarded cache by name: ``guarded-cache/<namespace>/<name>``."""
GUARDED_CLAIM = "guarded-cache-claim"
"""Requirements asking for a guarded cache's claim Object by name."""
_NAMED = 5

Key = tuple[str, str]
"""A cache's (namespace, name)."""


def cache_guard(inputs: Inputs, cluster: str, result: Result) -> str:
    """Compose the cache guard into ``result`` while caches hold the cluster; what InUse says of
    them ("" when none does)."""
    result.requirements[CACHES] = Requirement(CLUSTER_API_VERSION, "ModelCache")
    caches = inputs.required.get(CACHES)
    held = inputs.observed.get(CACHE_GUARD)
    if caches is None:
        # Not read yet: keep the guard as it stands rather than lift it on no evidence.
        if held is None:
            return ""
        result.resources[CACHE_GUARD] = Desired(carried(held), "True")
        return _said(guarded_caches(held), "this cluster")
    holding = _holding(inputs, cluster, caches, guarded_caches(held or {}), result)
    if not holding:
        return ""
    guard = guard_for(cluster, holding)
    result.resources[CACHE_GUARD] = Desired(guard, "True" if held is not None else "Unspecified")
    return _said(holding, "this cluster")


def guard_for(cluster: str, caches: Iterable[Key]) -> Obj:
    """A ClusterUsage refusing the cluster's deletion, naming the caches that hold it."""
    names = _names(caches)
    return {
        "apiVersion": USAGE_API_VERSION,
        "kind": "ClusterUsage",
        "metadata": {
            "name": dns_label(cluster, CACHE_GUARD),
            "annotations": {GUARDED_CACHES: ",".join(names)},
        },
        "spec": {
            "of": {
                "apiVersion": CLUSTER_API_VERSION,
                "kind": "InferenceCluster",
                "resourceRef": {"name": cluster},
            },
            "reason": _said(caches, f"InferenceCluster {cluster}"),
        },
    }


def guarded_caches(guard: Mapping[str, Any]) -> list[Key]:
    """(namespace, name) of every cache an observed guard holds the cluster for."""
    annotations = (guard.get("metadata") or {}).get("annotations") or {}
    out = []
    for entry in str(annotations.get(GUARDED_CACHES) or "").split(","):
        namespace, _, name = entry.partition("/")
        if name:
            out.append((namespace, name))
    return out


def stages_on(cache: Mapping[str, Any], cluster: str) -> bool:
    """Whether the cache reports objects on the cluster (its status lists it, in any phase)."""
    listed = (cache.get("status") or {}).get("clusters") or []
    return any(isinstance(c, Mapping) and c.get("name") == cluster for c in listed)


def claim_object_name(cache: str, cluster: str) -> str:
    """The control-plane name of the Object a ModelCache applies its claim on ``cluster`` by
    (in the cache's namespace), as the ModelCache composition names it."""
    return dns_label("modelcache", cache, CLAIM, cluster)


def _holding(
    inputs: Inputs,
    cluster: str,
    caches: Sequence[Mapping[str, Any]],
    guarded: list[Key],
    result: Result,
) -> set[Key]:
    """The caches holding the cluster: those staging on it, listed or read by name, those gone
    whose claim's Object is not, and those not read yet."""
    listed = {_key(c): c for c in caches}
    found, pending = _read_by_name(
        inputs,
        GUARDED_CACHE,
        "ModelCache",
        CLUSTER_API_VERSION,
        [k for k in guarded if k not in listed],
        result,
    )
    known = {**listed, **found}
    staging = {k for k, c in known.items() if stages_on(c, cluster)}
    released = [k for k in guarded if k not in staging and k not in pending]
    claims = [(ns, claim_object_name(name, cluster)) for ns, name in released]
    claims_found, claims_pending = _read_by_name(
        inputs, GUARDED_CLAIM, "Object", OBJECT_API_VERSION, claims, result
    )
    lingering = {
        k
        for k, claim in zip(released, claims, strict=True)
        if claim in claims_found or claim in claims_pending
    }
    return staging | pending | lingering


def _read_by_name(
    inputs: Inputs, prefix: str, kind: str, api_version: str, keys: list[Key], result: Result
) -> tuple[dict[Key, Obj], set[Key]]:
    """Each of ``keys`` asked for by name: those found, and those not read yet."""
    by_namespace: dict[str, list[str]] = {}
    for namespace, name in keys:
        by_namespace.setdefault(namespace, []).append(name)
    found: dict[Key, Obj] = {}
    pending: set[Key] = set()
    for namespace, names in sorted(by_namespace.items()):
        lookup = look_up(inputs, prefix, api_version, kind, names, namespace or None)
        result.requirements.update(lookup.requirements)
        found.update({(namespace, n): o for n, o in lookup.found.items()})
        pending.update((namespace, n) for n in lookup.pending)
    return found, pending


def _said(caches: Iterable[Key], where: str) -> str:
    names = _names(caches)
    noun = "ModelCache stages" if len(names) == 1 else "ModelCaches stage"
    return (
        f"{len(names)} {noun} weights on {where} ({shortlist(names, _NAMED)}): their claims' "
        "storage (a "
        "Filestore instance on GKE, an EFS access point on EKS) is deleted only with the claims, "
        "so delete or deselect them before deleting the cluster"
    )


def _names(caches: Iterable[Key]) -> list[str]:
    return sorted({f"{namespace}/{name}" for namespace, name in caches})


def _key(cache: Mapping[str, Any]) -> Key:
    meta = cache.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
