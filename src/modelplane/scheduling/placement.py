"""What the fleet scheduler decides: the types between the scheduler and the deployment composer.

``scheduler.schedule(deployment, clusters, classes, replicas) -> Schedule`` is a pure function of
observed state (plain dicts as the API returns them). A :class:`Schedule` says, deterministically:

- ``placements``: every replica that is (or stays) placed, by its stable index, with its cluster
  and, per engine and member, the node pool and the resolved DRA device requests to stamp into the
  ModelReplica (``nodePoolName``, ``deviceRequests``);
- ``removed``: this deployment's existing ModelReplicas that are not kept (scale-down, drained,
  cluster gone, pool no longer fits), each with the reason;
- ``shortfall``: when fewer than ``spec.replicas`` are placed, one line per cluster saying why it
  could not take another replica, e.g.
  ``cluster-b: pool h100 has 1 free node, engine decode needs 2``;
- ``selector_errors``: device selectors that do not compile or do not return a bool, by request name
  and field path. When there are any, nothing new is placed and nothing existing is removed;
- ``trace``: for every cluster and pool, why it was taken or rejected (``modelplane explain``).

Replica identity. A ModelReplica belongs to a deployment when its ``metadata.namespace`` equals the
deployment's namespace and its ``modelplane.labels.DEPLOYMENT`` label equals the deployment's name;
its index is the ``REPLICA_INDEX`` label. Same-named deployments in two namespaces therefore never
adopt each other's replicas. The composer stamps the fleet labels of ``modelplane.labels`` on
every ModelReplica it composes.

Indices are stable identities, not positions: a retained replica keeps its index, a re-placed
replica keeps its index but moves cluster, a new replica takes the lowest free index. After a
balanced scale-down the indices in use may have gaps (e.g. 0, 1, 3); the next scale-up fills them.
A re-placed replica changes ``clusterName``, so a ModelReplica name should hash the cluster too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.kube import objects

DEVICE_ASSIGNMENT = "modelplane.ai/device-assignment"
"""Annotation on a ModelReplica: the InferenceClass device each request was assigned to, where
the stamp alone cannot tell (several claimable devices of the pool's class share a
DeviceClass). JSON, ``{"<engine>": [{"<request>": "<device>"}, ...one object per member]}``.
The scheduler reads it back to charge the replica exactly as it was placed."""


@dataclass(frozen=True)
class DeviceRequest:
    """One resolved DRA device request of a member, in the ModelReplica XRD's shape.

    Only requests that matched a ``claim: DRA`` device are resolved into these; a request that
    matched a Synthetic device steers placement and claims nothing.
    """

    name: str
    count: int
    device_class_name: str
    selectors: tuple[str, ...]
    """The request's CEL selector texts, verbatim, ANDed by DRA."""
    device: str = ""
    """The InferenceClass device (``spec.devices[].name``) the request was assigned to, set only
    where its DeviceClass is shared by several claimable devices of the pool's class: the
    ModelReplica records it in :data:`DEVICE_ASSIGNMENT`, never in the request itself."""

    def to_dict(self) -> dict[str, Any]:
        """The ``deviceRequests[]`` item of a ModelReplica member."""
        return {
            "name": self.name,
            "deviceClassName": self.device_class_name,
            "count": self.count,
            "selectors": [{"cel": s} for s in self.selectors],
        }


@dataclass(frozen=True)
class MemberPlacement:
    """Where one member of an engine runs: its pool and the devices its pods claim there."""

    role: str
    pool: str
    device_requests: tuple[DeviceRequest, ...]
    """Empty when the member claims nothing (no nodeSelector, or only Synthetic matches): the
    ModelReplica then omits ``deviceRequests`` (never present and empty)."""

    def device_requests_dicts(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.device_requests]


@dataclass(frozen=True)
class EnginePlacement:
    """One engine of a placed replica; ``members`` in the deployment's member order."""

    name: str
    members: tuple[MemberPlacement, ...]


@dataclass(frozen=True)
class ReplicaPlacement:
    """One placed replica: index, cluster, and per engine (deployment order) its members' pools."""

    index: int
    cluster: str
    engines: tuple[EnginePlacement, ...]
    existing: str | None = None
    """``metadata.name`` of the ModelReplica kept in place at this index and cluster, or None for
    a new or re-placed replica."""

    @property
    def retained(self) -> bool:
        return self.existing is not None

    def engine(self, name: str) -> EnginePlacement:
        for e in self.engines:
            if e.name == name:
                return e
        raise KeyError(name)

    def device_assignment(self) -> str | None:
        """The :data:`DEVICE_ASSIGNMENT` annotation's value, or None when no request needs it."""
        recorded = {
            e.name: [{r.name: r.device for r in m.device_requests if r.device} for m in e.members]
            for e in self.engines
        }
        if not any(any(member) for members in recorded.values() for member in members):
            return None
        return json.dumps(recorded, sort_keys=True, separators=(",", ":"))


Assignment = dict[tuple[str, int], dict[str, str]]
"""Recorded devices by (engine name, member index), then by request name."""


def read_device_assignment(replica: Mapping[str, Any]) -> Assignment:
    """The devices a ModelReplica's :data:`DEVICE_ASSIGNMENT` annotation records; empty when it
    has none or it is malformed (the replica is then charged by its requests alone)."""
    raw = objects.dig(replica, "metadata", "annotations", DEVICE_ASSIGNMENT)
    if not raw:
        return {}
    try:
        decoded = json.loads(str(raw))
    except ValueError:
        return {}
    out: Assignment = {}
    if not isinstance(decoded, dict):
        return out
    for engine, members in decoded.items():
        if not isinstance(members, list):
            continue
        for m, member in enumerate(members):
            if isinstance(member, dict) and member:
                out[(str(engine), m)] = {str(k): str(v) for k, v in member.items()}
    return out


@dataclass(frozen=True)
class RemovedReplica:
    """An existing ModelReplica of this deployment that the schedule does not keep."""

    name: str
    index: int
    cluster: str
    reason: str


@dataclass(frozen=True)
class SelectorError:
    """A device selector that does not compile, or does not evaluate to a bool."""

    request: str
    """The device request's name (``nodeSelector.devices[].name``)."""
    path: str
    """Field path, e.g.
    ``spec.template.spec.engines[0].members[0].nodeSelector.devices[1].selectors[0].cel``."""
    message: str

    def __str__(self) -> str:
        return f"{self.path} (request {self.request}): {self.message}"


ROOM = "can take another replica"
"""A cluster's trace reason when it is eligible and one more replica would fit there."""
POOL_ROOM = "has room"
"""A pool's trace reason when it is not used but has room."""


@dataclass(frozen=True)
class PoolTrace:
    """Why one pool of a cluster was taken, or could not be."""

    pool: str
    taken: bool
    reason: str
    grows: tuple[int, int] | None = None
    """(nodes it has, nodes it needs) when what it hosts makes it grow toward maxNodeCount."""


@dataclass(frozen=True)
class Score:
    """The terms that ranked one newly placed replica's cluster and pools, in objective order,
    and in words why it won."""

    replica: int
    why: str
    spread: tuple[int, ...] = ()
    """Per ScheduleAnyway constraint: (cluster lacks the label, replicas in its domain)."""
    unpriced_pods: int = 0
    cost: float = 0.0
    """perNodeHour x the node fractions its pods take, over priced classes."""
    device_memory: int = 0
    devices_per_node: int = 0
    grows: bool = False
    replicas_there: int = 0
    """Replicas of this deployment on the cluster before this one."""
    contested: bool = True
    """Another cluster had room too."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "replica": self.replica,
            "why": self.why,
            "spread": list(self.spread),
            "unpricedPods": self.unpriced_pods,
            "cost": self.cost,
            "deviceMemory": self.device_memory,
            "devicesPerNode": self.devices_per_node,
            "grows": self.grows,
            "replicasThere": self.replicas_there,
            "contested": self.contested,
        }


@dataclass(frozen=True)
class ClusterTrace:
    """Why one cluster was taken or rejected; ``indices``: the replicas placed or kept on it."""

    cluster: str
    eligible: bool
    reason: str
    pools: tuple[PoolTrace, ...] = ()
    indices: tuple[int, ...] = ()
    scores: tuple[Score, ...] = ()
    """Why each replica this schedule placed here won, with the terms that ranked it."""


@dataclass(frozen=True)
class Schedule:
    """The scheduler's whole answer for one ModelDeployment. See the module docstring."""

    desired: int
    placements: tuple[ReplicaPlacement, ...]
    """Sorted by index."""
    removed: tuple[RemovedReplica, ...] = ()
    shortfall: tuple[str, ...] = ()
    selector_errors: tuple[SelectorError, ...] = ()
    eligible: bool = True
    """Whether any cluster may take a new replica (its labels, taints, source and serving stack
    allow it): a shortfall with none is not a capacity problem."""
    admitted: Mapping[str, frozenset[tuple[str, str]]] = field(default_factory=dict)
    """By cluster a placement stands on that publishes an allocation, the replicas (namespace,
    name) it admitted: read with the rest of what the cluster publishes, once."""
    explain: Callable[[], tuple[ClusterTrace, ...]] | None = field(
        default=None, compare=False, repr=False
    )
    """Computes the trace on first use: a reconcile that places everything never pays for it."""
    _trace: list[tuple[ClusterTrace, ...]] = field(default_factory=list, compare=False, repr=False)

    @property
    def trace(self) -> tuple[ClusterTrace, ...]:
        """One entry per InferenceCluster in the input, sorted by cluster name."""
        if not self._trace:
            self._trace.append(self.explain() if self.explain is not None else ())
        return self._trace[0]

    @property
    def scheduled(self) -> int:
        return len(self.placements)
