"""Fill: places new replicas one at a time, spreading before packing.

Each new replica goes to the eligible cluster with the fewest replicas of this deployment (then
by name) where it fits. When a cluster cannot take one more, the replicas this fill put there
are searched again jointly with the new one, so no greedy packing leaves one out.
"""

from __future__ import annotations

import heapq
from typing import Any

from modelplane.scheduling.capacity import Ledger, Load
from modelplane.scheduling.fleet import Admits, Cluster, untolerated
from modelplane.scheduling.options import EngineOption, Matcher, Replica, engine_options
from modelplane.scheduling.search import SearchedOutError, search


class Ineligible:
    """Why a cluster may take no new replica ("" when it may), read once per cluster and only
    for the clusters a schedule comes to."""

    def __init__(
        self,
        selector: dict[str, str],
        tolerations: list[dict[str, Any]],
        cached: bool = False,
        admits: Admits | None = None,
        hold: str = "",
    ) -> None:
        self.selector = selector
        self.tolerations = tolerations
        self.cached = cached
        self.admits = admits
        self.hold = hold
        self._why: dict[str, str] = {}

    def why(self, c: Cluster) -> str:
        found = self._why.get(c.name)
        if found is None:
            found = self._why[c.name] = self._judge(c)
        return found

    def _judge(self, c: Cluster) -> str:
        if self.hold:
            return self.hold
        if any(c.labels.get(k) != v for k, v in self.selector.items()):
            wanted = ", ".join(f"{k}={v}" for k, v in sorted(self.selector.items()))
            return f"labels do not match clusterSelector {wanted}"
        if self.admits is not None and (why := self.admits(c)):
            return why
        if taint := untolerated(c, self.tolerations, {"NoSchedule", "NoExecute"}):
            return f"{taint} not tolerated"
        if not c.node_pools:
            return "has no node pools"
        if c.source not in REACHABLE:
            # The cluster composition builds nothing for Nebius or Vultr: a replica placed there
            # would never be reached. Kept replicas stay (nothing running is moved because the
            # spec was edited). A managed cluster is judged by its StackReady, like any other.
            return (
                f"cluster.source {c.source or '(unset)'} is not supported: "
                "only Existing, EKS, GKE and AKS clusters are reachable"
            )
        if c.unready:
            # Kept replicas stay (retention never reads this); a new one would only wait.
            return f"serving stack not ready: {c.unready}"
        if self.cached and not c.cache_storage_class:
            # Its engines would mount a claim no class can bind: Pending with no reason shown.
            return (
                "names no ReadWriteMany storage class for the model cache "
                "(spec.cluster.existing.cache.storageClassName)"
            )
        return ""


REACHABLE = ("Existing", "EKS", "GKE", "AKS")


class Fill:
    """Places new replicas one at a time, spreading before packing."""

    def __init__(
        self,
        matcher: Matcher,
        fleet: list[Cluster],
        ledger: Ledger,
        selector: dict[str, str],
        tolerations: list[dict[str, Any]],
        load: dict[str, int],
        cached: bool = False,
        admits: Admits | None = None,
        hold: str = "",
    ) -> None:
        self.matcher = matcher
        self.fleet = fleet
        self.ledger = ledger
        self.load = dict(load)
        self.ineligible = Ineligible(selector, tolerations, cached, admits, hold)
        self.full: dict[str, str] = {}
        self.before: dict[str, dict[str, Load]] = {}
        self.new: dict[str, list[Replica]] = {}
        self._options: dict[Any, tuple[list[list[EngineOption]], dict[str, str]]] = {}
        self._memo: dict[Any, Any] = {}
        # Every cluster, keyed (load, name); eligibility is read when a cluster comes up.
        self.heap = [(self.load.get(c.name, 0), c.name, c) for c in fleet]
        heapq.heapify(self.heap)

    def options(self, cluster: Cluster) -> tuple[list[list[EngineOption]], dict[str, str]]:
        # Options depend on pool names and classes only: clusters of one shape share them.
        shape = tuple((p.name, p.class_name) for p in cluster.pools)
        found = self._options.get(shape)
        if found is None:
            lists: list[list[EngineOption]] = []
            reasons: dict[str, str] = {}
            for e in range(len(self.matcher.engines)):
                opts, why = engine_options(self.matcher, e, cluster)
                lists.append(opts)
                for pool, reason in why.items():
                    reasons.setdefault(pool, reason)
            found = (lists, reasons)
            self._options[shape] = found
        return found

    def states(self, cluster: Cluster) -> dict[str, Load]:
        return {p.name: self.ledger.load((cluster.name, p.name)) for p in cluster.pools}

    def attempt(self, cluster: Cluster, states: dict[str, Load], count: int) -> Any:
        key = (
            tuple((p.name, p.class_name, p.node_count) for p in cluster.pools),
            tuple(sorted(states.items(), key=lambda kv: kv[0])),
            count,
        )
        if key not in self._memo:
            options, _ = self.options(cluster)
            try:
                self._memo[key] = search(options, states, count)
            except SearchedOutError:
                self._memo[key] = "searched out"
        return self._memo[key]

    def place_home(self, index: int, name: str) -> Replica | None:
        """The replica on cluster ``name`` if one more fits there, else None."""
        home = next((c for c in self.fleet if c.name == name), None)
        if home is None or self.ineligible.why(home) or home.name in self.full:
            return None
        states = self.states(home)
        found = self.attempt(home, states, 1)
        if found is None or found == "searched out":
            return None
        picks, after = found
        self.before.setdefault(home.name, states)
        return self._commit(home, index, picks[0], after)

    def place(self, index: int) -> Replica | None:
        # The heap holds every eligible cluster not yet full, keyed (load, name); a cluster's
        # entry is refreshed when its load changes, so stale entries are skipped.
        while self.heap:
            load, _, cluster = heapq.heappop(self.heap)
            if cluster.name in self.full or load != self.load.get(cluster.name, 0):
                continue
            if self.ineligible.why(cluster):
                continue
            states = self.states(cluster)
            found = self.attempt(cluster, states, 1)
            if found is not None and found != "searched out":
                picks, after = found
                self.before.setdefault(cluster.name, states)
                return self._commit(cluster, index, picks[0], after)
            earlier = self.new.get(cluster.name, [])
            if earlier and found != "searched out":
                # Repack this fill's replicas on the cluster together with one more.
                start = self.before[cluster.name]
                joint = self.attempt(cluster, start, len(earlier) + 1)
                if joint is not None and joint != "searched out":
                    picks, after = joint
                    for r, pick in zip(earlier, picks, strict=False):
                        r.choice = pick
                    return self._commit(cluster, index, picks[-1], after)
            self.full[cluster.name] = "searched out" if found == "searched out" else ""
        return None

    def _commit(
        self,
        cluster: Cluster,
        index: int,
        choice: tuple[EngineOption, ...],
        after: dict[str, Load],
    ) -> Replica:
        for pool, load in after.items():
            self.ledger.loads[(cluster.name, pool)] = load
        self.load[cluster.name] = self.load.get(cluster.name, 0) + 1
        heapq.heappush(self.heap, (self.load[cluster.name], cluster.name, cluster))
        replica = Replica(index, cluster.name, choice)
        self.new.setdefault(cluster.name, []).append(replica)
        return replica
