"""Who a ModelReplica is, read from its metadata: its index, namespace and key.

Read alike by the policy over existing replicas and by a cluster's published allocation, so it
sits below both.
"""

from __future__ import annotations

from typing import Any

from modelplane import labels
from modelplane.kube import objects


def replica_index(replica: dict[str, Any]) -> int | None:
    """The ``replica-index`` label as a non-negative integer written canonically, else None."""
    raw = objects.labels(replica).get(labels.REPLICA_INDEX)
    try:
        index = int(str(raw))
    except ValueError:
        return None
    return index if index >= 0 and str(index) == str(raw) else None


def replica_namespace(replica: dict[str, Any]) -> str:
    """Its namespace, or the deployment namespace label of one read without it."""
    namespace = objects.namespace(replica)
    return namespace or str(objects.labels(replica).get(labels.DEPLOYMENT_NAMESPACE, ""))


def replica_identity(replica: dict[str, Any]) -> tuple[str, str]:
    """(namespace, name): how a replica is told apart across the fleet."""
    return (replica_namespace(replica), objects.name(replica))
