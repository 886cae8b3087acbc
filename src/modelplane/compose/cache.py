"""The contract between a ModelCache and the replicas that mount it.

A ModelCache stages weights into a claim on each selected cluster; a ModelReplica with
``spec.modelCacheRef`` mounts that claim by name and points its engines at the mount path.
Both compositions read these names from here, so they cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.kube.names import child_name, short_hash

CACHE_VOLUME = "model-cache"
CACHE_MOUNT_PATH = "/mnt/models"
# Beside the Hub cache layout (models--<org>--<name>/), where huggingface_hub never looks.
MARKER_DIR = f"{CACHE_MOUNT_PATH}/.modelplane"


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
    hf = (model_cache.get("spec") or {}).get("huggingFace") or {}
    digest = short_hash(str(hf.get("repo") or ""), str(hf.get("revision") or ""))
    return f"{MARKER_DIR}/hydrated-{digest}"


def cache_selector(cache: Mapping[str, Any]) -> dict[str, str]:
    """The labels of the clusters a ModelCache stages its weights on; empty: every cluster."""
    spec = cache.get("spec") or {}
    labels = (spec.get("clusterSelector") or {}).get("matchLabels") or {}
    return {str(k): str(v) for k, v in labels.items()}


def stages_on(cache: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether the ModelCache stages (or will stage) its weights on a cluster with ``labels``:
    the deployment and the cache's own composition must agree on where that is."""
    return all(labels.get(k) == v for k, v in cache_selector(cache).items())
