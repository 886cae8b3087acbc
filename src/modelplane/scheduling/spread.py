"""Topology spread over clusters: ``topologySpreadConstraints`` as Kubernetes reads them for
pods over nodes, read here for replicas over InferenceClusters.

A constraint names a cluster label (``topologyKey``; :data:`CLUSTER_KEY` is the cluster's own
name) whose values are the domains. ``DoNotSchedule`` is hard: a replica may go to a domain only
if that domain's count, with it, exceeds the least-loaded domain's by at most ``maxSkew``; a
cluster without the label takes nothing under it. ``ScheduleAnyway`` is a preference that yields
to capacity: the domain with the fewest replicas first, before cost. The domains are those of
the clusters that may take a replica at all (eligible, and some pool's class fits every
engine): a region whose clusters have no class the model can use does not hold the others at
``maxSkew``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from modelplane.labels import CLUSTER
from modelplane.scheduling.fleet import Cluster

CLUSTER_KEY = CLUSTER
"""The well-known topologyKey whose domain is the cluster itself (every cluster its own)."""

HARD = "DoNotSchedule"
SOFT = "ScheduleAnyway"


@dataclass(frozen=True)
class Constraint:
    max_skew: int
    key: str
    hard: bool

    def domain(self, cluster: Cluster) -> str | None:
        if self.key == CLUSTER_KEY:
            return cluster.name
        return cluster.labels.get(self.key)

    def describe(self) -> str:
        return f"maxSkew {self.max_skew} over {self.key} ({HARD if self.hard else SOFT})"


def parse_constraints(template: dict[str, Any]) -> tuple[Constraint, ...]:
    return tuple(
        Constraint(
            max(1, int(c.get("maxSkew", 1))),
            str(c.get("topologyKey", "")),
            str(c.get("whenUnsatisfiable", HARD)) != SOFT,
        )
        for c in template.get("topologySpreadConstraints") or ()
    )


class Spread:
    """Replicas of this deployment per domain, as the fill places them."""

    def __init__(
        self,
        constraints: tuple[Constraint, ...],
        fleet: Iterable[Cluster],
        load: dict[str, int],
        can_take: Callable[[Cluster], bool],
    ) -> None:
        self.constraints = constraints
        self.counts: list[dict[str, int]] = [{} for _ in constraints]
        self._fleet = list(fleet)
        self._can_take = can_take
        self._domains: list[set[str]] | None = None
        for i, c in enumerate(constraints):
            for cluster in self._fleet:
                d = c.domain(cluster) if load.get(cluster.name) else None
                if d is not None:
                    self.counts[i][d] = self.counts[i].get(d, 0) + load[cluster.name]

    @property
    def domains(self) -> list[set[str]]:
        """Per constraint, the domains of the clusters that may take a replica at all (read
        when a hard constraint is first asked about: it reads every cluster)."""
        if self._domains is None:
            self._domains = [set() for _ in self.constraints]
            for i, c in enumerate(self.constraints):
                if not c.hard:
                    continue
                for cluster in self._fleet:
                    d = c.domain(cluster)
                    if d is not None and self._can_take(cluster):
                        self._domains[i].add(d)
        return self._domains

    def _floor(self, i: int) -> int:
        if not self.constraints[i].hard:
            return 0
        return min((self.counts[i].get(d, 0) for d in self.domains[i]), default=0)

    def blocked(self, cluster: Cluster) -> str:
        """Why one more replica on ``cluster`` breaks a hard constraint ("" when it does not)."""
        for i, c in enumerate(self.constraints):
            if not c.hard:
                continue
            d = c.domain(cluster)
            if d is None:
                return f"has no label {c.key} ({c.describe()})"
            if self.counts[i].get(d, 0) + 1 - self._floor(i) > c.max_skew:
                return f"one more replica in {c.key}={d} would exceed {c.describe()}"
        return ""

    def key(self, cluster: Cluster) -> tuple[int, ...]:
        """The soft preference: per ScheduleAnyway constraint, clusters with the label first,
        then the fewest replicas in the cluster's domain. Only ever grows as replicas land."""
        out: list[int] = []
        for i, c in enumerate(self.constraints):
            if c.hard:
                continue
            d = c.domain(cluster)
            out += [1, 0] if d is None else [0, self.counts[i].get(d, 0)]
        return tuple(out)

    def floor_key(self) -> tuple[int, ...]:
        return (0, 0) * sum(not c.hard for c in self.constraints)

    def floors(self) -> tuple[int, ...]:
        return tuple(self._floor(i) for i in range(len(self.constraints)))

    def add(self, cluster: Cluster) -> None:
        for i, c in enumerate(self.constraints):
            d = c.domain(cluster)
            if d is not None:
                self.counts[i][d] = self.counts[i].get(d, 0) + 1

    def report(self) -> str:
        """The unplaced report: which hard constraint holds replicas back, with each domain's
        count."""
        parts = []
        for i, c in enumerate(self.constraints):
            if not c.hard:
                continue
            counts = ", ".join(
                f"{c.key}={d}: {self.counts[i].get(d, 0)}" for d in sorted(self.domains[i])
            )
            parts.append(f"topologySpreadConstraints {c.describe()}: {counts or 'no domain'}")
        return "; ".join(parts)
