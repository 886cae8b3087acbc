"""Which replica leaves when a deployment scales in: the balance order, and the cost order an
autoscaled deployment follows (docs/design/autoscaling.md, "Fleet-aware scaling").

A manual ``spec.replicas`` is the user's count: the balance order keeps what remains spread over
clusters, as it always has. An autoscaler shrinks the deployment many times a day, so each
scale-in should give back the capacity whose loss costs least: the most expensive replica that
can go without breaking the deployment's spread.

Either order, during a rollout, takes a replica the rollout has yet to update (``outdated``)
before an updated one wherever that keeps what the order keeps (balance, spread): removing it
both scales in and advances the rollout, where removing an updated one would leave the outdated
one to update too, spending the strategy's budget once more.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from modelplane.scheduling.demand import Engine
from modelplane.scheduling.fleet import Cluster
from modelplane.scheduling.options import FREE, Rank, Replica, add_ranks, member_rank
from modelplane.scheduling.spread import Constraint

BalanceKey = tuple[bool, int, bool, bool, str, int]
CostKey = tuple[bool, bool, bool, bool, Rank, int, str, int]


def balance_key(
    k: Replica,
    load: Mapping[str, int],
    listed_only: set[str | None],
    idle: set[str | None],
    outdated: Collection[str | None] = frozenset(),
) -> BalanceKey:
    """Today's order, the largest key leaving first: a replica only listed while the deployment
    composes others (a list lagging a deletion shows the deleted replica again; keeping it would
    compose it anew while one that runs goes), then the most-loaded cluster, then one the
    rollout has yet to update (below the load: balance is what keeps a manual deployment spread,
    and is not traded for the rollout), then one not serving (keeping it keeps capacity that
    serves nothing), then the later cluster name, then the higher index."""
    return (
        k.existing in listed_only,
        load[k.cluster],
        k.existing in outdated,
        k.existing in idle,
        k.cluster,
        k.index,
    )


@dataclass(frozen=True)
class Autoscaled:
    """What the cost order reads beyond the balance order: the deployment's engines and the
    clusters its kept replicas stand on (to price each replica), and its spread constraints."""

    engines: tuple[Engine, ...]
    clusters: Mapping[str, Cluster]
    constraints: tuple[Constraint, ...]
    cost: bool = True
    """Whether the scale-in follows the cost order (``spec.autoscaling``). Without, the balance
    order decides and reads only the spread: a replica the rollout has yet to update goes first
    only where its removal keeps every spread constraint."""

    def start(self, kept: Sequence[Replica]) -> CostOrder:
        """The order for one scale-in of ``kept``: each replica priced once, and the domains
        it stands in. A domain the scale-in empties still counts, at zero. A domain the
        deployment does not stand in is left out: at zero it would make every removal
        harmless to the skew, and the rule vacuous."""
        domains = tuple(
            frozenset(d for k in kept if (d := self.domain(c, k)) is not None)
            for c in self.constraints
        )
        return CostOrder(self, domains, {k.index: self.price(k) for k in kept})

    def domain(self, constraint: Constraint, k: Replica) -> str | None:
        return constraint.domain(self.clusters[k.cluster])

    def price(self, k: Replica) -> Rank:
        """What the replica's capacity costs, as the fill ranks a placement (``member_rank``):
        pods on unpriced classes first (an unknown price is not a free one), then the price of
        the node fractions it takes, then how capable its devices are."""
        assert k.choice is not None
        cluster = self.clusters[k.cluster]
        rank = FREE
        for engine, option in zip(self.engines, k.choice, strict=True):
            placed = zip(engine.members, option.pools, option.members, strict=True)
            for member, on, picked in placed:
                pool = cluster.pool(on)
                assert pool is not None
                rank = add_ranks(rank, member_rank(picked, pool, member.pods * engine.copies))
        return rank


@dataclass(frozen=True)
class CostOrder:
    """One scale-in's cost order (``Autoscaled.start``): per constraint the domains counted,
    and each kept replica's price by index (kept replicas hold distinct indices)."""

    autoscaled: Autoscaled
    domains: tuple[frozenset[str], ...]
    prices: Mapping[int, Rank]

    def counts(self, kept: Sequence[Replica]) -> list[dict[str, int]]:
        """Per constraint, the replicas of ``kept`` in each domain counted."""
        out = []
        for i, c in enumerate(self.autoscaled.constraints):
            counts = dict.fromkeys(self.domains[i], 0)
            for k in kept:
                if (d := self.autoscaled.domain(c, k)) is not None:
                    counts[d] = counts.get(d, 0) + 1
            out.append(counts)
        return out

    def keeps_spread(self, counts: Sequence[Mapping[str, int]], victim: Replica) -> bool:
        """Whether removing ``victim`` from replicas counted ``counts`` leaves every spread
        constraint's skew (the most replicas in one domain less the fewest) within its
        maxSkew, or no worse than it already was."""
        for c, before in zip(self.autoscaled.constraints, counts, strict=True):
            d = self.autoscaled.domain(c, victim)
            if d is None:
                continue
            after = {**before, d: before[d] - 1}
            if _skew(after) > max(c.max_skew, _skew(before)):
                return False
        return True


def _skew(counts: Mapping[str, int]) -> int:
    return max(counts.values(), default=0) - min(counts.values(), default=0)


def victim(
    kept: Sequence[Replica],
    load: Mapping[str, int],
    listed_only: set[str | None],
    idle: set[str | None],
    order: CostOrder | None,
    outdated: Collection[str | None] = frozenset(),
) -> Replica:
    """The replica that leaves next: the balance order's (``balance_key``; with ``order`` of a
    manual deployment, a replica ``outdated`` goes first only where its removal keeps every
    spread constraint), or in the cost ``order`` of an autoscaled deployment the largest of, in
    order:

    1. only listed: it runs nowhere, and keeping it would compose it anew (as in the balance
       order, and ahead of spread: a replica that does not run holds no domain up);
    2. its removal keeps every spread constraint: never break a spread the user asked for while
       another replica can go. When every replica's removal breaks one, the balance order
       decides: a scale-in the autoscaler asked for is not refused, and balance is what keeps
       the remaining replicas spread over clusters;
    3. ``outdated``: the rollout has yet to update it, so removing it advances the rollout too,
       and the budget the update would spend is not spent (ahead of price: a dearer updated
       replica kept costs for a while, an outdated one kept costs an update);
    4. not serving: keeping it keeps capacity that serves nothing, whatever it costs;
    5. the most expensive capacity (``Autoscaled.price``): the fill places on the cheapest, so
       the scale-in gives back the dearest;
    6. then the balance order (most-loaded cluster, later name, higher index), so that among
       equals the choice is as before and deterministic.
    """
    keeps = _keeping(kept, order)
    # Outdated first only where that keeps the spread; when no removal keeps it, the spread
    # decides nothing.
    broken = not any(keeps.values())
    old = {k.existing for k in kept if k.existing in outdated and (broken or keeps[k.index])}
    if order is None or not order.autoscaled.cost or broken:
        return max(kept, key=lambda k: balance_key(k, load, listed_only, idle, old))

    def cost_key(k: Replica) -> CostKey:
        balance = balance_key(k, load, listed_only, idle, old)
        listed, loaded, leaving_old, not_serving, cluster, index = balance
        price = order.prices[k.index]
        return (listed, keeps[k.index], leaving_old, not_serving, price, loaded, cluster, index)

    return max(kept, key=cost_key)


def _keeping(kept: Sequence[Replica], order: CostOrder | None) -> dict[int, bool]:
    """Whether removing each of ``kept`` (by index) keeps every spread constraint of ``order``
    (every removal does without one)."""
    if order is None:
        return {k.index: True for k in kept}
    counts = order.counts(kept)
    return {k.index: order.keeps_spread(counts, k) for k in kept}
