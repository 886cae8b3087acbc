"""The contract between a ModelCache and the replicas that mount it.

A ModelCache stages weights into a claim on each selected cluster; a ModelReplica with
``spec.modelCacheRef`` mounts that claim by name and points its engines at the mount path.
Both compositions read these names from here, so they cannot drift apart.
"""

from __future__ import annotations

from modelplane.kube.names import child_name

CACHE_VOLUME = "model-cache"
CACHE_MOUNT_PATH = "/mnt/models"


def cache_claim_name(cache: str) -> str:
    """The PersistentVolumeClaim holding a ModelCache's weights in the replica's remote namespace.

    A contract with whatever stages the cache on the cluster: it must name the claim this way.
    """
    return child_name("modelcache", "modelcache", cache)
