"""The name of a replica's InferencePool: the contract between the ModelReplica composition,
which composes the pool on the replica's cluster, and the front door (a deployment's
ModelEndpoints and the ModelService's routes), which route to it by name."""

from __future__ import annotations

from modelplane.kube.names import suffixed


def replica_pool_name(replica: str) -> str:
    """``<replica>-pool``, a Service-safe DNS label of at most 63 characters."""
    return suffixed(replica, "pool")
