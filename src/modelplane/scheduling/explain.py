"""Why each cluster and pool took a replica or not: the trace behind ``modelplane explain`` and
the shortfall lines a deployment's condition prints."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modelplane.scheduling import placement as pl
from modelplane.scheduling.capacity import Load, PoolState, nodes_needed
from modelplane.scheduling.fill import Fill
from modelplane.scheduling.fleet import Cluster
from modelplane.scheduling.options import EngineOption, Replica
from modelplane.shortlist import counted, plural


def why_not(fill: Fill, cluster: Cluster) -> tuple[str, dict[str, str]]:
    """Why the cluster cannot take one more replica: a summary and a reason per pool."""
    held = _held_back(fill, cluster)
    if held is not None:
        return held
    options, reasons = fill.options(cluster)
    states = fill.states(cluster)
    more = fill.attempt(cluster, states, 1)
    if more == "searched out":
        return SEARCHED_OUT, {}
    if more is not None:
        return pl.ROOM, {p.name: pl.POOL_ROOM for p in cluster.pools}
    pool_reasons = dict(reasons)
    lines: list[str] = []
    for e, engine in enumerate(fill.matcher.engines):
        if not options[e]:
            lines.append(
                "; ".join(f"pool {p.name}: {reasons.get(p.name, 'no fit')}" for p in cluster.pools)
                or "no pools"
            )
            continue
        # Engine names are unique, so only a closest pool's line can repeat another engine's.
        line = _engine_shortfall(cluster, engine.name, options[e], states, pool_reasons)
        if line is not None and line not in lines:
            lines.append(line)
    if not lines:
        lines.append("its pools cannot hold every engine of one more replica together")
    for p in cluster.pools:
        pool_reasons.setdefault(p.name, "fits no engine of one more replica")
    return "; ".join(lines), pool_reasons


SEARCHED_OUT = "search budget exhausted before a placement was found"


def _held_back(fill: Fill, cluster: Cluster) -> tuple[str, dict[str, str]] | None:
    """Why the cluster takes nothing whatever its room (ineligible, held back by the spread,
    searched out), or None when only its room can say."""
    if why := fill.ineligible.why(cluster):
        return why, {name: f"cluster not eligible: {why}" for name in cluster.pool_names}
    if cluster.name in fill.blocked and fill.spread and (held := fill.spread.blocked(cluster)):
        # It has room; the spread the deployment asked for holds the replica back.
        return held, {}
    if fill.full.get(cluster.name) == "searched out":
        return SEARCHED_OUT, {}
    return None


def _engine_shortfall(
    cluster: Cluster,
    engine: str,
    options: Sequence[EngineOption],
    states: Mapping[str, Load],
    pool_reasons: dict[str, str],
) -> str | None:
    """Why one engine of one more replica, with some option on the cluster, fits none of its
    pools (None when it fits one on its own: the engines only fail together). Every pool's
    reason goes to ``pool_reasons``; the line names the pool that came closest (most nodes
    available to the engine), not merely the first one."""
    if any(all(states[p].fits(us) for p, us in o.units) for o in options):
        return None
    closest: tuple[int, int, str] | None = None
    for order, option in enumerate(options):
        if option.splits:
            continue
        short = _pool_shortfall(cluster, engine, option, states[option.pools[0]])
        pool_reasons.setdefault(short.pool, short.why)
        if closest is None or (short.available, -order) > closest[:2]:
            closest = (short.available, -order, short.why)
    if closest is None:
        return f"engine {engine} does not fit its pools' free devices"
    return closest[2]


@dataclass(frozen=True)
class PoolShortfall:
    """Why one pool cannot take an engine, and how many nodes it has for it."""

    pool: str
    available: int
    why: str


def _pool_shortfall(
    cluster: Cluster, engine: str, option: EngineOption, load: Load
) -> PoolShortfall:
    pool_name = option.pools[0]
    pool = cluster.pool(pool_name)
    assert pool is not None
    state = load.state()
    units = tuple(u for _, us in option.units for u in us)
    needed = nodes_needed(pool.per_node, units, max(pool.node_count, 1) + 64)
    free = state.free_nodes
    frees = counted(free, "free node")
    nodes = counted(pool.node_count, "node")
    if load.overcommitted:
        # Counting its free nodes would read "has 1 free node, needs 1": the pool takes
        # nothing new because what is already charged to it does not fit.
        why = (
            f"pool {pool_name} is overcommitted: the replicas already charged to it "
            f"do not fit its {nodes}"
        )
        return PoolShortfall(pool_name, 0, why)
    if needed is not None and needed <= free:
        why = (
            f"pool {pool_name} has {frees} but packing engine {engine} beside its replicas "
            "exceeded the search budget"
        )
        return PoolShortfall(pool_name, free, why)
    need = f"{needed}" if needed is not None else "more"
    if needed is not None and needed > pool.node_count:
        why = f"pool {pool_name} has {nodes}, engine {engine} needs {need}"
        return PoolShortfall(pool_name, pool.node_count, why)
    partly = _partly_free(state)
    why = f"pool {pool_name} has {frees}{partly}, engine {engine} needs {need}"
    if partly:
        biggest = max((sum(pod) for u in units for pod in u), default=0)
        why += f" with up to {biggest} devices per pod"
    return PoolShortfall(pool_name, free, why)


Judged = Callable[[Cluster], tuple[str, dict[str, str]]]
"""``why_not`` of one fill, remembered per cluster: the shortfall and the trace ask alike."""


def judged(fill: Fill) -> Judged:
    return functools.cache(lambda cluster: why_not(fill, cluster))


def shortfall(fleet: Iterable[Cluster], judge: Judged) -> tuple[str, ...]:
    """One line per cluster that cannot take one more replica, and why (what a deployment's
    condition prints): the trace's verdicts without the trace."""
    out = []
    for cluster in fleet:
        summary = judge(cluster)[0]
        if summary != pl.ROOM:
            out.append(f"{cluster.name}: {summary}")
    return tuple(out)


def trace(fill: Fill, replicas: list[Replica], judge: Judged) -> tuple[pl.ClusterTrace, ...]:
    hosted: dict[str, list[Replica]] = {}
    for r in replicas:
        hosted.setdefault(r.cluster, []).append(r)
    return tuple(_cluster_trace(fill, c, hosted.get(c.name, []), judge) for c in fill.fleet)


def _cluster_trace(
    fill: Fill, cluster: Cluster, mine: list[Replica], judge: Judged
) -> pl.ClusterTrace:
    """What one cluster hosts of ``mine`` (this deployment's replicas on it), pool by pool, or
    why it took none."""
    uses = _uses(fill, mine)
    summary, pool_reasons = judge(cluster)
    grows = _growth(fill, cluster) if uses else {}
    pools = tuple(
        pl.PoolTrace(name, True, "hosts " + ", ".join(uses[name]), grows.get(name))
        if name in uses
        else pl.PoolTrace(name, False, pool_reasons.get(name, "not needed"))
        for name in cluster.pool_names
    )
    if mine:
        reason = f"hosts {plural('replica', len(mine))} " + ", ".join(str(r.index) for r in mine)
    else:
        reason = summary
    eligible = not fill.ineligible.why(cluster)
    indices = tuple(r.index for r in mine)
    scores = tuple(score(r.index, *fill.won[r.index]) for r in mine if r.index in fill.won)
    return pl.ClusterTrace(cluster.name, eligible, reason, pools, indices, scores)


def _uses(fill: Fill, mine: list[Replica]) -> dict[str, list[str]]:
    """Per pool, the replicas' engines on it: ``replica 0 engine main``."""
    uses: dict[str, list[str]] = {}
    for r in mine:
        assert r.choice is not None
        for engine, option in zip(fill.matcher.engines, r.choice, strict=True):
            for pool in dict.fromkeys(option.pools):
                uses.setdefault(pool, []).append(f"replica {r.index} engine {engine.name}")
    return uses


def _growth(fill: Fill, cluster: Cluster) -> dict[str, tuple[int, int]]:
    """Per pool that must grow for what is charged to it: (nodes it has, nodes it needs)."""
    out = {}
    for pool in cluster.pools:
        if pool.existing >= pool.node_count:
            continue
        load = fill.ledger.loads.get((cluster.name, pool.name))
        if load is None or not load.units:
            continue
        needed = nodes_needed(pool.per_node, load.units, pool.node_count)
        if needed is not None and needed > pool.existing:
            out[pool.name] = (pool.existing, needed)
    return out


def _price(rank: tuple[int, float, int, int]) -> str:
    return "has no price" if rank[0] else f"costs {rank[1]:g} per hour"


def score(index: int, key: tuple[Any, ...], runner: tuple[Any, ...] | None) -> pl.Score:
    """The winner's terms, and the first objective on which it beat the best other cluster."""
    if not key:  # re-placed on the cluster it was on
        return pl.Score(index, "re-placed on the cluster it was on (no move)", contested=False)
    soft, rank, grows, load, _ = key
    if runner is None:
        why = "the only cluster with room"
    else:
        r_soft, r_rank, r_grows, r_load, r_name = runner
        if soft < r_soft:
            why = f"fewer replicas in its topology spread domain than {r_name}"
        elif rank[:2] < r_rank[:2]:
            why = f"cheapest: {_price(rank)}, {r_name} next ({_price(r_rank)})"
        elif rank < r_rank:
            why = f"least capable fit: less device memory or fewer devices per node than {r_name}"
        elif not grows and r_grows:
            why = f"as cheap as {r_name}, on nodes it has where {r_name} would grow"
        elif load < r_load:
            why = f"as cheap as {r_name}, with fewer replicas of this deployment ({load})"
        else:
            why = f"as cheap as {r_name} and as loaded, first by name"
    return pl.Score(
        index, why, soft, rank[0], rank[1], rank[2], rank[3], grows, load, runner is not None
    )


def _partly_free(state: PoolState) -> str:
    """The devices left on nodes already partly used, when any: a shortfall that counts only
    whole free nodes would hide them."""
    partly = [(v, n) for v, n in state.nodes if v != state.per_node and sum(v) > 0]
    if not partly:
        return ""
    devices = sum(sum(v) * n for v, n in partly)
    nodes = sum(n for _, n in partly)
    return f" ({counted(devices, 'device')} free on {counted(nodes, 'partly used node')})"
