"""Fill: places new replicas one at a time, the best placement first.

Each new replica goes where it ranks best, in the objective order (docs/design/scheduling.md):
hard topology spread (a filter), soft spread, least cost (price of the node fractions taken, or
without prices the least capable class that fits), existing nodes before a pool's
``maxNodeCount`` headroom, then the fewest replicas of this deployment (spread among equals),
then the cluster's name. When a cluster cannot take one more, the replicas this fill put there
are searched again jointly with the new one, so no greedy packing leaves one out.

Clusters are kept in a heap keyed by a lower bound of that rank (the cheapest any class could
give, before a cluster is read), refined to the exact rank when the cluster comes to the top: a
fleet whose cheapest clusters have room reads little more than those.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import reduce
from typing import Any

from modelplane.scheduling.capacity import Ledger, Load, PoolState, nodes_needed
from modelplane.scheduling.fleet import Admits, Cluster, untolerated
from modelplane.scheduling.options import (
    FREE,
    EngineOption,
    Matcher,
    Rank,
    Replica,
    add_ranks,
    engine_options,
)
from modelplane.scheduling.search import SearchedOutError, search
from modelplane.scheduling.selection import unselected
from modelplane.scheduling.spread import Spread


@dataclass(eq=False)
class Ineligible:
    """Why a cluster may take no new replica ("" when it may), read once per cluster and only
    for the clusters a schedule comes to."""

    selector: dict[str, str]
    tolerations: list[dict[str, Any]]
    cached: bool = False
    admits: Admits | None = None
    hold: str = ""
    _why: dict[str, str] = field(default_factory=dict, init=False, repr=False)

    def why(self, c: Cluster) -> str:
        found = self._why.get(c.name)
        if found is None:
            found = self._why[c.name] = self._judge(c)
        return found

    def _judge(self, c: Cluster) -> str:
        if self.hold:
            return self.hold
        if why := unselected(c.labels, self.selector):
            return why
        if self.admits is not None and (why := self.admits(c)):
            return why
        if c.deleting:
            return c.deleting
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


@dataclass
class Candidate:
    """The best way one more replica lands on one cluster, with what ranks it."""

    rank: Rank
    grows: bool
    """Some pool needs more nodes than it has (placing there makes its autoscaler add one)."""
    picks: list[tuple[EngineOption, ...]]
    after: dict[str, Load]
    repacked: bool = False
    """The picks include this fill's earlier replicas on the cluster, searched again."""


Key = tuple[Any, ...]
"""(soft spread, rank, grows, replicas of this deployment there, cluster name)."""


def choice_rank(choice: tuple[EngineOption, ...]) -> Rank:
    return reduce(add_ranks, (option.rank for option in choice), FREE)


class Fill:
    """Places new replicas one at a time, the best placement first."""

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
        floor: Rank = FREE,
        spread: Callable[[Fill], Spread] | None = None,
    ) -> None:
        self.matcher = matcher
        self.fleet = fleet
        self.ledger = ledger
        self.load = dict(load)
        self.ineligible = Ineligible(selector, tolerations, cached, admits, hold)
        self.spread = spread(self) if spread else None
        self.full: dict[str, str] = {}
        self.before: dict[str, dict[str, Load]] = {}
        self.new: dict[str, list[Replica]] = {}
        self.won: dict[int, tuple[Key, Key | None]] = {}
        """Per placed index: the winner's key and the runner-up's lower bound, for explain."""
        self.blocked: dict[str, Cluster] = {}
        """Clusters with room that a hard spread constraint holds back, by name."""
        self._options: dict[Any, tuple[list[list[EngineOption]], dict[str, str]]] = {}
        self._memo: dict[Any, Any] = {}
        self._candidates: dict[str, Candidate | str | None] = {}
        # Every cluster, keyed by a lower bound of its rank; refined when it comes to the top.
        # Eligibility is read when a cluster comes up.
        soft = self.spread.floor_key() if self.spread else ()
        self.heap: list[tuple[Key, bool, Cluster]] = [
            ((soft, floor, False, self.load.get(c.name, 0), c.name), False, c) for c in fleet
        ]
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
            found = self._options[shape] = (lists, reasons)
        return found

    def can_take(self, cluster: Cluster) -> bool:
        """Eligible, and some pool's class fits every engine (capacity aside)."""
        return not self.ineligible.why(cluster) and all(self.options(cluster)[0])

    def states(self, cluster: Cluster) -> dict[str, Load]:
        return {p.name: self.ledger.load((cluster.name, p.name)) for p in cluster.pools}

    def in_use(self, cluster: Cluster, states: dict[str, Load]) -> dict[str, Load]:
        """``states`` on the nodes each pool has now (or already needs), without the headroom
        up to its ``maxNodeCount``; the same dict when no pool has headroom."""
        out = dict(states)
        for p in cluster.pools:
            if p.existing >= p.node_count:
                continue
            load = states[p.name]
            needed = nodes_needed(p.per_node, load.units, p.node_count) if load.units else 0
            nodes = max(p.existing, needed if needed is not None else p.node_count)
            if nodes < p.node_count:
                out[p.name] = Load(PoolState.empty(p.per_node, nodes), load.units)
        return out

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

    def candidate(self, cluster: Cluster, states: dict[str, Load], count: int) -> Any:
        """The best placement of ``count`` replicas from ``states``: a Candidate, None, or
        "searched out". The cheapest wins; at equal rank, one on the nodes the pools have."""
        found = self.attempt(cluster, states, count)
        if found is None or found == "searched out":
            return found
        picks, after = found
        rank = reduce(add_ranks, map(choice_rank, picks), FREE)
        now = self.in_use(cluster, states)
        if now is states or all(now[k] is states[k] for k in states):
            return Candidate(rank, False, picks, after)
        held = self.attempt(cluster, now, count)
        if held is not None and held != "searched out":
            held_rank = reduce(add_ranks, map(choice_rank, held[0]), FREE)
            if held_rank <= rank:
                full = {k: Load(states[k].empty, v.units) for k, v in held[1].items()}
                return Candidate(held_rank, False, held[0], full)
        return Candidate(rank, True, picks, after)

    def best(self, cluster: Cluster) -> Candidate | str | None:
        """One more replica on the cluster (remembered until the cluster's load changes)."""
        if cluster.name in self._candidates:
            return self._candidates[cluster.name]
        states = self.states(cluster)
        found = self.candidate(cluster, states, 1)
        earlier = self.new.get(cluster.name, [])
        if found is None and earlier:
            # Repack this fill's replicas on the cluster together with one more.
            joint = self.candidate(cluster, self.before[cluster.name], len(earlier) + 1)
            if isinstance(joint, Candidate):
                joint.rank = choice_rank(joint.picks[-1])
                joint.repacked = True
            found = joint
        if isinstance(found, Candidate) and not found.repacked:
            self.before.setdefault(cluster.name, states)
        self._candidates[cluster.name] = found
        return found

    def place_home(self, index: int, name: str) -> Replica | None:
        """The replica on cluster ``name`` if one more fits there, else None."""
        home = next((c for c in self.fleet if c.name == name), None)
        if home is None or self.ineligible.why(home) or home.name in self.full:
            return None
        if self.spread and self.spread.blocked(home):
            return None
        found = self.best(home)
        if not isinstance(found, Candidate):
            return None
        self.won[index] = ((), None)
        return self._commit(home, index, found)

    def place(self, index: int) -> Replica | None:
        # The heap holds every cluster not yet full, keyed by a lower bound of its rank; the
        # top entry is refined to its exact key, and taken once it is exact and still on top.
        # Keys only grow as replicas land, so a stale entry is a lower bound too.
        while self.heap:
            key, _, cluster = heapq.heappop(self.heap)
            if self._stale(key, cluster):
                continue
            exact = self._exact(cluster, key[3])
            if exact is None:
                continue
            if exact > key:
                heapq.heappush(self.heap, (exact, True, cluster))
                continue
            found = self._candidates[cluster.name]
            assert isinstance(found, Candidate)
            self.won[index] = (exact, self._runner_up())
            return self._commit(cluster, index, found)
        return None

    def _stale(self, key: Key, cluster: Cluster) -> bool:
        return cluster.name in self.full or key[3] != self.load.get(cluster.name, 0)

    def _exact(self, cluster: Cluster, load: int) -> Key | None:
        """The cluster's exact key for one more replica; None (and why, in ``blocked`` or
        ``full``) when it may take none now."""
        if self.ineligible.why(cluster):
            return None
        if self.spread and self.spread.blocked(cluster):
            self.blocked[cluster.name] = cluster
            return None
        found = self.best(cluster)
        if not isinstance(found, Candidate):
            self.full[cluster.name] = "searched out" if found == "searched out" else ""
            return None
        soft = self.spread.key(cluster) if self.spread else ()
        return (soft, found.rank, found.grows, load, cluster.name)

    def _runner_up(self) -> Key | None:
        """The exact key of the best other cluster (what the winner beat, for explain): the
        heap's top refined until it is exact; refined entries stay for the next placement."""
        while self.heap:
            key, exact, cluster = self.heap[0]
            if self._stale(key, cluster):
                heapq.heappop(self.heap)
                continue
            if exact:
                return key
            heapq.heappop(self.heap)
            refined = self._exact(cluster, key[3])
            if refined is not None:
                heapq.heappush(self.heap, (refined, True, cluster))
        return None

    def _commit(self, cluster: Cluster, index: int, found: Candidate) -> Replica:
        for pool, load in found.after.items():
            self.ledger.loads[(cluster.name, pool)] = load
        earlier = self.new.get(cluster.name, [])
        if found.repacked:
            for r, pick in zip(earlier, found.picks, strict=False):
                r.choice = pick
        self.load[cluster.name] = self.load.get(cluster.name, 0) + 1
        self._candidates.pop(cluster.name, None)
        if self.spread:
            floors = self.spread.floors()
            self.spread.add(cluster)
            if self.spread.floors() != floors:
                # A domain's floor rose: clusters a hard constraint held back may take more.
                for held in self.blocked.values():
                    soft = self.spread.key(held)
                    entry = (soft, FREE, False, self.load.get(held.name, 0), held.name)
                    heapq.heappush(self.heap, (entry, False, held))
                self.blocked.clear()
        soft = self.spread.key(cluster) if self.spread else ()
        # The rank just taken bounds the next replica's there from below: capacity only shrinks.
        bound = (soft, found.rank, False, self.load[cluster.name], cluster.name)
        heapq.heappush(self.heap, (bound, False, cluster))
        replica = Replica(index, cluster.name, found.picks[-1])
        self.new.setdefault(cluster.name, []).append(replica)
        return replica
