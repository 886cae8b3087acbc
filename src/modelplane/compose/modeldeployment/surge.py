"""Surge: an outdated replica is replaced make-before-break where the fleet has room.

With ``spec.rollout.maxSurge`` above 0, a serving outdated replica is not updated in place (its
engines would restart, and with one copy stop serving). A new replica with the current template
is placed beside it instead, at a free index, wherever the scheduler's ledger has room for the
deployment's replicas plus the surge (every replica of the fleet charged, the old one too); the
new one is annotated ``modelplane.ai/surge-for: <old>``. Once it serves, the old one leaves in
two phases (``drain.py``): endpoint first, then the replica, charged to the ledger until it is
gone. At most ``maxSurge`` surge replicas are in flight; none is started while a replica still
drains (a new one could otherwise take the index, and the name, of one still leaving).

Only where the scheduler finds no room for a surge (the fleet is full, or the deployment is not
fully placed) are outdated replicas updated in place, kill first, as ``maxUnavailable`` allows;
outdated replicas that serve nothing are updated in place whatever the surge, as they cost
nothing. ``unit: Cluster`` does not surge.

A surge replica counts as serving (and the one it replaces leaves) only as the rollout counts:
its status describes its stamp, ready and serving, its gateway reaches it, and each route that
named the old one's pool names its pool too (``reroute.py``, recorded when it is placed). The
same placement replaces a doomed replica (``doomed.py``) whatever the strategy, given room first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from modelplane.compose.modeldeployment.rollout import Candidate, Strategy
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.labels import SURGE_FOR
from modelplane.scheduling.placement import ReplicaPlacement, Schedule


@dataclass(frozen=True)
class Surges:
    """The surges the observed replicas hold."""

    in_flight: dict[str, str]
    """Surge replica key -> the key of the outdated replica it replaces, not serving yet."""
    leaving: frozenset[str]
    """Names of the replicas a serving surge replaced: they leave, charged until gone."""
    replaced: dict[str, str]
    """Old replica key -> its surge replica's key, for those leaving."""


def surges_of(mine: Mapping[str, Obj], available: Callable[[Obj], bool]) -> Surges:
    """``available``: whether a replica serves as the rollout counts it (its status describes
    its stamp, ready and serving, and routed by every service that routes what it replaces):
    only then does the replica it replaces leave."""
    by_name = {str(o["metadata"]["name"]): k for k, o in mine.items()}
    in_flight: dict[str, str] = {}
    leaving: set[str] = set()
    replaced: dict[str, str] = {}
    for key, obj in mine.items():
        old = str(objects.annotations(obj).get(SURGE_FOR) or "")
        old_key = by_name.get(old)
        if old_key is None or old_key == key:
            continue
        if available(obj):
            leaving.add(old)
            replaced[old_key] = key
        else:
            in_flight[key] = old_key
    return Surges(in_flight, frozenset(leaving), replaced)


@dataclass(frozen=True)
class Started:
    placements: tuple[tuple[ReplicaPlacement, str], ...]
    """New surge placements, each with the key of the outdated replica it replaces."""
    no_room: bool
    """The scheduler found no room for a surge asked for: kill-first may update in place."""


def start(
    strategy: Strategy,
    candidates: list[Candidate],
    surges: Surges,
    plan: Schedule,
    place: Callable[[int], Schedule],
    draining: bool,
    owed: Sequence[str] = (),
) -> Started:
    """Surge replicas to place now. ``place(n)``: the schedule with ``n`` replicas beyond
    ``spec.replicas``; ``plan`` is ``place(len(surges.in_flight))``; ``draining``: a replica
    still leaves. ``owed``: replicas to replace whatever the strategy (``doomed.py``), given
    room before any surge."""
    kill_first = strategy.max_surge == 0 or strategy.by_cluster
    busy = set(surges.in_flight.values())
    replacing = [k for k in owed if k not in busy]
    wanted = [] if kill_first or strategy.paused else _wanted(strategy, candidates, busy)
    asked = max(0, min(strategy.max_surge - len(surges.in_flight), len(wanted)))
    keys = [*replacing, *(c.key for c in wanted[:asked])]
    if not keys or draining:
        return Started((), no_room=kill_first)
    if not _steady(plan):
        return Started((), no_room=kill_first or asked > 0)
    extra = _room(plan, place(len(surges.in_flight) + len(keys)))
    pairs = tuple(zip(extra, keys, strict=False))
    return Started(pairs, no_room=kill_first or len(pairs) < len(keys))


def _wanted(strategy: Strategy, candidates: list[Candidate], busy: set[str]) -> list[Candidate]:
    """The serving outdated replicas a surge may replace, lowest index first: above the
    partition and not replaced by a surge already (``busy``)."""
    eligible = (c for c in candidates if c.serving and c.index >= strategy.partition)
    return sorted((c for c in eligible if c.key not in busy), key=lambda c: c.index)


def _room(plan: Schedule, wider: Schedule) -> list[ReplicaPlacement]:
    """The new placements ``wider`` (the schedule with the surge) adds beside ``plan``, lowest
    index first; none if it would change what stands."""
    taken = {p.index for p in plan.placements}
    if wider.removed or not taken <= {p.index for p in wider.placements}:
        return []
    added = [p for p in wider.placements if p.index not in taken and p.existing is None]
    return sorted(added, key=lambda p: p.index)


def _steady(plan: Schedule) -> bool:
    """Every replica placed where it stands, none leaving: only then is room for a surge
    room, not a replica the schedule still owes."""
    return (
        not plan.removed
        and plan.scheduled >= plan.desired
        and all(p.existing is not None for p in plan.placements)
    )
