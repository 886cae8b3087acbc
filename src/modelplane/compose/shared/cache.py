"""The contract between a ModelCache and the replicas that mount it.

A ModelCache stages weights into a claim on each selected cluster; a ModelReplica with
``spec.modelCacheRef`` mounts that claim by name and points its engines at the mount path.
Both compositions read these names from here, so they cannot drift apart.

Each revision has its own Hugging Face cache under ``revisions/`` (``revision_path``), in which
the hydration Job makes ``refs/main`` name the commit it downloaded: an engine given that path
as ``HF_HUB_CACHE`` and ``HF_HUB_OFFLINE=1`` resolves the model to exactly that snapshot,
whatever revision flag it was (not) given, and no download beside it can change what it reads.
Weights hydrated before revision paths sit at the claim's root (``UNVERSIONED``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modelplane.kube import objects
from modelplane.kube.names import child_name, dns_label, short_hash
from modelplane.labels import MODEL_REVISION

CACHE_VOLUME = "model-cache"
CACHE_MOUNT_PATH = "/mnt/models"
# Beside the Hub cache layout (models--<org>--<name>/), where huggingface_hub never looks.
MARKER_DIR = f"{CACHE_MOUNT_PATH}/.modelplane"
DEFAULT_REVISION = "main"
"""What ``hf download`` fetches when no revision is given (huggingface_hub DEFAULT_REVISION)."""
UNVERSIONED = ":root"
"""The weights hydrated at the claim's root before revision paths: ``:`` is in no git ref name,
so no revision can take this name."""
COMMIT = re.compile(r"^[0-9a-f]{40}$")
"""A full commit hash (huggingface_hub file_download.py REGEX_COMMIT_HASH): names one snapshot."""
RESOLVED = "resolved"
"""status.resolved of a ModelCache: the commit its branch or tag was resolved to, once, and in
which repo."""
RESOLVE_ANNOTATION = "modelplane.ai/resolve-revision"
"""Changing its value on a ModelCache resolves its branch or tag again."""
# status.clusters[] of a ModelCache: what each cluster's claim holds.
REVISIONS, UNVERSIONED_FIELD, PRUNING = "revisions", "unversioned", "pruning"


def cache_claim_name(cache: str) -> str:
    """The PersistentVolumeClaim holding a ModelCache's weights in the replica's remote namespace.

    A contract with whatever stages the cache on the cluster: it must name the claim this way.
    """
    return child_name("modelcache", "modelcache", cache)


def hydrated_marker(model_cache: Mapping[str, Any]) -> str:
    """The file the hydration Job writes once the download it was asked for is complete.

    Engines wait for it before they start. It names the repo and revision, so a cache pointed
    at another revision holds its engines back until that download is complete too.
    """
    hf = objects.mapping(model_cache, "spec", "huggingFace")
    digest = short_hash(str(hf.get("repo") or ""), str(hf.get("revision") or ""))
    return f"{MARKER_DIR}/hydrated-{digest}"


def cache_selector(cache: Mapping[str, Any]) -> dict[str, str]:
    """The labels of the clusters a ModelCache stages its weights on; empty: every cluster."""
    labels = objects.mapping(cache, "spec", "clusterSelector", "matchLabels")
    return {str(k): str(v) for k, v in labels.items()}


def stages_on(cache: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether the ModelCache stages (or will stage) its weights on a cluster with ``labels``:
    the deployment and the cache's own composition must agree on where that is."""
    return all(labels.get(k) == v for k, v in cache_selector(cache).items())


def requested_revision(model_cache: Mapping[str, Any]) -> str:
    """The revision the user asks for (``spec.huggingFace.revision``, else main)."""
    return str(objects.dig(model_cache, "spec", "huggingFace", "revision") or DEFAULT_REVISION)


def resolve_request(model_cache: Mapping[str, Any]) -> dict[str, str]:
    """What a resolution answers: the requested branch or tag and the annotation asking again."""
    out = {"revision": requested_revision(model_cache)}
    annotations = objects.annotations(model_cache)
    if annotations.get(RESOLVE_ANNOTATION):
        out["request"] = str(annotations[RESOLVE_ANNOTATION])
    return out


def resolved_commit(model_cache: Mapping[str, Any]) -> str | None:
    """The commit the cache hydrates: the requested revision when it is one, else the commit
    its status records for this request in this repo; None while the branch or tag is not
    resolved. A record for another repo names a commit of that repo: the branch is resolved
    anew rather than the new repo asked for a commit it may not have."""
    requested = requested_revision(model_cache)
    if COMMIT.match(requested):
        return requested
    record = objects.mapping(model_cache, "status", RESOLVED)
    if not COMMIT.match(str(record.get("commit") or "")):
        return None
    # A record written before records named their repo stands for the cache's repo: every
    # reconcile since publishes it with the repo, and resolving anew on the upgrade could move
    # the branch's commit, and every replica onto it, with nothing asked.
    if str(record.get("repo", _repo(model_cache))) != _repo(model_cache):
        return None
    asked = {k: str(v) for k, v in record.items() if k in ("revision", "request")}
    return str(record["commit"]) if asked == resolve_request(model_cache) else None


def cache_revision(model_cache: Mapping[str, Any]) -> str:
    """The revision the cache hydrates now: its commit once resolved, else the requested
    revision (which no cluster hydrates: see resolved_commit)."""
    return resolved_commit(model_cache) or requested_revision(model_cache)


def _repo(model_cache: Mapping[str, Any]) -> str:
    return str(objects.dig(model_cache, "spec", "huggingFace", "repo") or "")


def revision_path(model_cache: Mapping[str, Any], revision: str) -> str:
    """The Hugging Face cache of one revision of the cache's repo, on the claim."""
    key = short_hash(_repo(model_cache), revision)
    return f"{CACHE_MOUNT_PATH}/revisions/{dns_label(revision, max_len=40)}-{key}"


def revision_marker(model_cache: Mapping[str, Any], revision: str) -> str:
    """The file the hydration Job writes once ``revision`` is complete at its path."""
    return f"{MARKER_DIR}/revision-{revision_path(model_cache, revision).rsplit('/', 1)[1]}"


def held_on(model_cache: Mapping[str, Any], cluster: str) -> Mapping[str, Any] | None:
    """The cache's status entry for ``cluster``, if it reports one."""
    for entry in objects.dig(model_cache, "status", "clusters") or ():
        if isinstance(entry, Mapping) and entry.get("name") == cluster:
            return entry
    return None


def hydrated_revisions(model_cache: Mapping[str, Any], cluster: str) -> tuple[str, ...]:
    """The revisions hydrated at their own path on ``cluster``, as the cache's status says."""
    entry = held_on(model_cache, cluster) or {}
    return tuple(str(r) for r in entry.get(REVISIONS) or ())


def unversioned_on(model_cache: Mapping[str, Any], cluster: str) -> str | None:
    """The revision hydrated at the claim's root on ``cluster``, if any. A Ready entry written
    before revision paths (no ``revisions``) holds the cache's revision there."""
    entry = held_on(model_cache, cluster)
    if entry is None:
        return None
    if REVISIONS not in entry:
        return cache_revision(model_cache) if entry.get("phase") == "Ready" else None
    value = entry.get(UNVERSIONED_FIELD)
    if value and str(value) == requested_revision(model_cache):
        # Recorded by the branch or tag's name (before it was resolved): the root holds what
        # the replicas reading it read, which is the cache's revision until it changes.
        return cache_revision(model_cache)
    return str(value) if value else None


def pinned_revision(replica: Mapping[str, Any]) -> str | None:
    """The revision a ModelReplica is pinned to (its ``MODEL_REVISION`` annotation), if any."""
    revision = objects.annotations(replica).get(MODEL_REVISION)
    return str(revision) if revision else None


@dataclass(frozen=True)
class Weights:
    """Where one replica's engines read the weights, and the marker they wait for."""

    hub_cache: str
    marker: str
    revision: str
    """The revision, or ``UNVERSIONED`` for the weights at the claim's root."""


def replica_weights(model_cache: Mapping[str, Any], pinned: str | None, cluster: str) -> Weights:
    """The weights a replica on ``cluster`` reads: the revision it is pinned to; unpinned, the
    weights at the claim's root while they are the cache's revision (what it read before
    revision paths), else the cache's revision."""
    revision = pinned or cache_revision(model_cache)
    if not pinned and unversioned_on(model_cache, cluster) == revision:
        return Weights(CACHE_MOUNT_PATH, hydrated_marker(model_cache), UNVERSIONED)
    return Weights(
        revision_path(model_cache, revision), revision_marker(model_cache, revision), revision
    )
