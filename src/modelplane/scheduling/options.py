"""The ways one engine of a replica can land on a cluster's pools.

A member's option is one assignment of its device requests to the pool's device kinds (each
request on one kind; requests sharing a kind share its per-node count); an engine's option is
one pool per member and an option per member, with the gangs its copies put on each pool.
Unsplit options (every member on one pool) come first.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from modelplane.scheduling import placement as pl
from modelplane.scheduling.capacity import Pool, Unit, Vector
from modelplane.scheduling.demand import Engine, Member
from modelplane.scheduling.devices import matches as selector_matches
from modelplane.scheduling.devices import undeclared
from modelplane.scheduling.fleet import Cluster

MAX_OPTIONS = 64
"""Distinct request-to-device assignments kept per member and pool (and 8x that many options
per engine and cluster): far beyond real classes, a bound against pathological input."""


@dataclass(frozen=True)
class MemberOption:
    demand: Vector
    requests: tuple[pl.DeviceRequest, ...]


Rank = tuple[int, float, int, int]
"""What an option costs, compared in order: pods on unpriced classes (an unknown price is not
a free one), the price of the node fractions it takes (``perNodeHour`` x the share of a node's
devices each pod claims), then how capable the devices it takes are (their memory, then their
count per node), so that without prices the least capable class that fits comes first."""

FREE: Rank = (0, 0.0, 0, 0)


def add_ranks(a: Rank, b: Rank) -> Rank:
    # Prices are rounded so that equal costs summed in another order still compare equal.
    return (a[0] + b[0], round(a[1] + b[1], 9), a[2] + b[2], a[3] + b[3])


def member_rank(option: MemberOption, pool: Pool, pods: int) -> Rank:
    """The rank of ``pods`` pods of one member option on a pool of ``pool``'s class."""
    used = [j for j, d in enumerate(option.demand) if d > 0]
    if not used:
        return FREE
    fraction = max(option.demand[j] / pool.per_node[j] for j in used if pool.per_node[j] > 0)
    kinds = [pool.kinds[pool.claimable[j]] for j in used]
    memory = max(k.memory for k in kinds)
    count = max(k.count for k in kinds)
    if pool.price is None:
        return (pods, 0.0, pods * memory, pods * count)
    return (0, round(pods * fraction * pool.price, 9), pods * memory, pods * count)


@dataclass(frozen=True)
class EngineOption:
    pools: tuple[str, ...]
    """Per member, the pool it runs on."""
    members: tuple[MemberOption, ...]
    splits: int
    units: tuple[tuple[str, tuple[Unit, ...]], ...]
    """Per pool, the gangs the engine's copies put there."""
    rank: Rank = FREE


class Matcher:
    """Member options per (engine, member, class), computed once per schedule."""

    def __init__(self, engines: tuple[Engine, ...]) -> None:
        self.engines = engines
        self._options: dict[tuple[int, int, str], tuple[tuple[MemberOption, ...], str]] = {}

    def member(self, e: int, m: int, pool: Pool) -> tuple[tuple[MemberOption, ...], str]:
        key = (e, m, pool.class_name)
        found = self._options.get(key)
        if found is None:
            found = _member_options(self.engines[e].members[m], pool)
            self._options[key] = found
        return found

    def floor(self, pools: list[Pool]) -> Rank:
        """The least rank one replica can have on any of ``pools`` (one per class): each
        member's cheapest option on any class, capacity aside. A lower bound for every cluster,
        known before any is read."""
        rank = FREE
        for e, engine in enumerate(self.engines):
            for m, member in enumerate(engine.members):
                ranks = [
                    member_rank(option, pool, member.pods * engine.copies)
                    for pool in pools
                    for option in self.member(e, m, pool)[0]
                ]
                if ranks:
                    rank = add_ranks(rank, min(ranks))
        return rank


def _member_options(member: Member, pool: Pool) -> tuple[tuple[MemberOption, ...], str]:
    """Every distinct way the member's requests land on the pool's device kinds (each request
    on one kind; requests sharing a kind share its per-node count), or why there is none."""
    kinds = pool.kinds
    if not member.requests:
        return (MemberOption(tuple(0 for _ in pool.claimable), ()),), ""
    if not kinds:
        return (), f"class {pool.class_name} not found or has no devices"
    candidates = []
    for request in member.requests:
        # A DRA device without a DeviceClass cannot be claimed (the ModelReplica would be
        # rejected), so it never satisfies a request.
        matching = [
            i
            for i, k in enumerate(kinds)
            if (k.device_class_name or not k.claimable)
            and selector_matches(request.selectors, k) is True
        ]
        if not matching:
            why = f"no device of class {pool.class_name} matches request {request.name}"
            typo = undeclared(request.selectors, kinds)
            return (), f"{why}: {typo}" if typo else why
        sized = [i for i in matching if kinds[i].count >= request.count]
        if not sized:
            best = max(kinds[i].count for i in matching)
            return (), (
                f"request {request.name} needs {request.count} devices per node, "
                f"class {pool.class_name} has {best}"
            )
        candidates.append(sized)
    position = {i: j for j, i in enumerate(pool.claimable)}
    options: dict[MemberOption, None] = {}
    for assignment in itertools.product(*candidates):
        used = [0] * len(kinds)
        for request, i in zip(member.requests, assignment, strict=True):
            used[i] += request.count
        if any(used[i] > kinds[i].count for i in range(len(kinds))):
            continue
        demand = tuple(used[i] for i in pool.claimable)
        # The device is recorded where the DeviceClass alone cannot tell it (the stamp names
        # only the class), so the replica is read back exactly as placed.
        resolved = tuple(
            pl.DeviceRequest(
                r.name,
                r.count,
                kinds[i].device_class_name,
                r.selectors,
                kinds[i].name if kinds[i].device_class_name in pool.ambiguous else "",
            )
            for r, i in zip(member.requests, assignment, strict=True)
            if i in position
        )
        options[MemberOption(demand, resolved)] = None
        if len(options) >= MAX_OPTIONS:
            break
    if not options:
        return (), f"requests do not fit the devices of one node of class {pool.class_name}"
    return tuple(options), ""


def engine_units(
    engine: Engine, pools: tuple[str, ...], members: tuple[MemberOption, ...]
) -> tuple[tuple[str, tuple[Unit, ...]], ...]:
    gang: dict[str, list[Vector]] = {}
    for member, pool, option in zip(engine.members, pools, members, strict=True):
        gang.setdefault(pool, []).extend([option.demand] * member.pods)
    return tuple((pool, (tuple(pods),) * engine.copies) for pool, pods in sorted(gang.items()))


def engine_options(
    matcher: Matcher, e: int, cluster: Cluster
) -> tuple[list[EngineOption], dict[str, str]]:
    """The engine's options on the cluster, unsplit ones (by pool order) first; and per pool why
    no unsplit option exists there."""
    engine = matcher.engines[e]
    per_pool: dict[str, tuple[tuple[MemberOption, ...], ...]] = {}
    reasons: dict[str, str] = {}
    for pool in cluster.pools:
        lists = []
        for m in range(len(engine.members)):
            options, reason = matcher.member(e, m, pool)
            if not options and pool.name not in reasons:
                reasons[pool.name] = f"engine {engine.name} member {m}: {reason}"
            lists.append(options)
        per_pool[pool.name] = tuple(lists)
    result: list[EngineOption] = []
    by_name = {p.name: p for p in cluster.pools}
    layouts: list[tuple[str, ...]] = [(p.name,) * len(engine.members) for p in cluster.pools]
    layouts += [
        pools
        for pools in itertools.product([p.name for p in cluster.pools], repeat=len(engine.members))
        if len(set(pools)) > 1
    ]
    for pools in layouts:
        choices = [per_pool[pool][m] for m, pool in enumerate(pools)]
        for members in itertools.product(*choices):
            if not any(option.requests for option in members):
                if len(set(pools)) == 1 and pools[0] not in reasons:
                    reasons[pools[0]] = f"engine {engine.name} would claim no device there"
                continue
            splits = len(set(pools)) - 1
            units = engine_units(engine, pools, members)
            rank = FREE
            for member, on, option in zip(engine.members, pools, members, strict=True):
                rank = add_ranks(
                    rank, member_rank(option, by_name[on], member.pods * engine.copies)
                )
            result.append(EngineOption(pools, members, splits, units, rank))
            if len(result) >= MAX_OPTIONS * 8:
                break
    # Fewest splits first, then cheapest (least capable); equal ones keep pool order.
    result.sort(key=lambda o: (o.splits, o.rank))
    return result, reasons


@dataclass
class Replica:
    """A replica of this deployment being decided."""

    index: int
    cluster: str
    choice: tuple[EngineOption, ...] | None
    existing: str | None = None


def replica_units(choice: tuple[EngineOption, ...]) -> dict[str, tuple[Unit, ...]]:
    units: dict[str, list[Unit]] = {}
    for option in choice:
        for pool, us in option.units:
            units.setdefault(pool, []).extend(us)
    return {pool: tuple(us) for pool, us in units.items()}
