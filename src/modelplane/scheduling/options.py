"""The ways one engine of a replica can land on a cluster's pools.

A member's option is one assignment of its device requests to the pool's device kinds (each
request on one kind; requests sharing a kind share its per-node count); an engine's option is
one pool per member and an option per member, with the gangs its copies put on each pool.
Unsplit options (every member on one pool) come first.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

from modelplane.scheduling import placement as pl
from modelplane.scheduling.capacity import Pool, Unit, Vector
from modelplane.scheduling.demand import Engine, Member, Request
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
            found = self._options[key] = _member_options(self.engines[e].members[m], pool)
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
    if not member.requests:
        return (MemberOption(tuple(0 for _ in pool.claimable), ()),), ""
    if not pool.kinds:
        return (), f"class {pool.class_name} not found or has no devices"
    candidates = []
    for request in member.requests:
        sized = _kinds_for(request, pool)
        if isinstance(sized, str):
            return (), sized
        candidates.append(sized)
    options = _assignments(member, pool, candidates)
    if not options:
        return (), f"requests do not fit the devices of one node of class {pool.class_name}"
    return options, ""


def _kinds_for(request: Request, pool: Pool) -> list[int] | str:
    """The pool's device kinds (by position) that match the request and have enough devices
    per node for it, or why none does."""
    kinds = pool.kinds
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
        return f"{why}: {typo}" if typo else why
    sized = [i for i in matching if kinds[i].count >= request.count]
    if not sized:
        best = max(kinds[i].count for i in matching)
        return (
            f"request {request.name} needs {request.count} devices per node, "
            f"class {pool.class_name} has {best}"
        )
    return sized


def _assignments(
    member: Member, pool: Pool, candidates: list[list[int]]
) -> tuple[MemberOption, ...]:
    """Each distinct assignment of the requests to candidate kinds that one node holds (at
    most ``MAX_OPTIONS``)."""
    kinds = pool.kinds
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
    return tuple(options)


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
    reasons: dict[str, str] = {}
    per_pool = {pool.name: _member_lists(matcher, e, pool, reasons) for pool in cluster.pools}
    by_name = {p.name: p for p in cluster.pools}
    result: list[EngineOption] = []
    for pools in _layouts(cluster, len(engine.members)):
        choices = [per_pool[pool][m] for m, pool in enumerate(pools)]
        for members in itertools.product(*choices):
            if not any(option.requests for option in members):
                if len(set(pools)) == 1 and pools[0] not in reasons:
                    reasons[pools[0]] = f"engine {engine.name} would claim no device there"
                continue
            result.append(_engine_option(engine, pools, members, by_name))
            if len(result) >= MAX_OPTIONS * 8:
                break
    # Fewest splits first, then cheapest (least capable); equal ones keep pool order.
    result.sort(key=lambda o: (o.splits, o.rank))
    return result, reasons


def _member_lists(
    matcher: Matcher, e: int, pool: Pool, reasons: dict[str, str]
) -> tuple[tuple[MemberOption, ...], ...]:
    """Each member's options on the pool; the first member without any says why in
    ``reasons``."""
    engine = matcher.engines[e]
    lists = []
    for m in range(len(engine.members)):
        options, reason = matcher.member(e, m, pool)
        if not options and pool.name not in reasons:
            reasons[pool.name] = f"engine {engine.name} member {m}: {reason}"
        lists.append(options)
    return tuple(lists)


def _layouts(cluster: Cluster, members: int) -> list[tuple[str, ...]]:
    """Pools for each member: every member on one pool (by pool order), then every split."""
    names = [p.name for p in cluster.pools]
    layouts: list[tuple[str, ...]] = [(n,) * members for n in names]
    layouts += [pools for pools in itertools.product(names, repeat=members) if len(set(pools)) > 1]
    return layouts


def _engine_option(
    engine: Engine,
    pools: tuple[str, ...],
    members: tuple[MemberOption, ...],
    by_name: Mapping[str, Pool],
) -> EngineOption:
    rank = FREE
    for member, on, option in zip(engine.members, pools, members, strict=True):
        rank = add_ranks(rank, member_rank(option, by_name[on], member.pods * engine.copies))
    units = engine_units(engine, pools, members)
    return EngineOption(pools, members, len(set(pools)) - 1, units, rank)


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
