"""The search: one cluster's pools, every engine of some replicas, fewest splits first, then
cheapest.

Exhaustive within a budget, so a placement is found whenever one exists (no greedy false
rejects); replicas are interchangeable, so each one's choices are no smaller than the previous
one's, which prunes symmetric branches. Among placements with the fewest splits, the one of
least rank (``options.Rank``: price, then capability) is kept: branch and bound, each engine's
options sorted cheapest first, so the first placement found is usually the answer and the bound
ends the search at once. Past the budget, the best placement found so far stands.
"""

from __future__ import annotations

from typing import Any

from modelplane.scheduling.capacity import Load, Unit
from modelplane.scheduling.options import FREE, EngineOption, Rank, add_ranks

SEARCH_BUDGET = 50_000
"""Search nodes one placement attempt may visit; beyond it the cluster is reported as searched
out rather than stalling a reconcile."""


class SearchedOutError(Exception):
    pass


def search(
    options: list[list[EngineOption]], states: dict[str, Load], replicas: int
) -> tuple[list[tuple[EngineOption, ...]], dict[str, Load]] | None:
    """Place ``replicas`` replicas (each one option per engine) on one cluster's pools, fewest
    split engines first. Raises SearchedOutError past the budget."""
    n = len(options)
    if n == 0 or any(not o for o in options):
        return None
    steps = [SEARCH_BUDGET]
    floors = [min((o.rank for o in opts), default=FREE) for opts in options]
    for max_splits in range(replicas * n + 1):
        if max_splits and all(o.splits == 0 for opts in options for o in opts):
            return None
        found = _dfs(options, states, replicas, max_splits, steps, floors)
        if found is not None:
            return found
    return None


def _dfs(
    options: list[list[EngineOption]],
    states: dict[str, Load],
    replicas: int,
    max_splits: int,
    steps: list[int],
    floors: list[Rank],
) -> tuple[list[tuple[EngineOption, ...]], dict[str, Load]] | None:
    n = len(options)
    slots = replicas * n
    chosen: list[int] = []
    units: dict[str, list[Unit]] = {}
    # rest[slot]: the least rank the slots from ``slot`` on can add (each engine's cheapest).
    rest = [FREE] * (slots + 1)
    for slot in range(slots - 1, -1, -1):
        rest[slot] = add_ranks(rest[slot + 1], floors[slot % n])
    best: list[Any] = []  # [rank, chosen, after] of the best placement so far

    def go(slot: int, splits: int, rank: Rank) -> bool:
        """Explores from ``slot``; True once the best possible rank is reached (stop)."""
        if slot == slots:
            if best and rank >= best[0]:
                return False
            after = dict(states)
            for pool, pending in units.items():
                if pending:
                    after[pool] = states[pool].plus(tuple(pending))
            best[:] = [rank, list(chosen), after]
            return rank <= rest[0]
        if best and add_ranks(rank, rest[slot]) >= best[0]:
            return False
        steps[0] -= 1
        if steps[0] < 0:
            if best:
                return True
            raise SearchedOutError
        e = slot % n
        lowest = 0
        if slot >= n and chosen[slot - n - e : slot - n] == chosen[slot - e : slot]:
            # Replicas are interchangeable: each one's choices are no smaller than the previous.
            lowest = chosen[slot - n]
        for i in range(lowest, len(options[e])):
            option = options[e][i]
            if splits + option.splits > max_splits:
                continue
            for pool, us in option.units:
                units.setdefault(pool, []).extend(us)
            stop = False
            if all(states[pool].fits(tuple(units[pool])) for pool, _ in option.units):
                chosen.append(i)
                stop = go(slot + 1, splits + option.splits, add_ranks(rank, option.rank))
                chosen.pop()
            for pool, us in option.units:
                del units[pool][len(units[pool]) - len(us) :]
            if stop:
                return True
        return False

    go(0, 0, FREE)
    if not best:
        return None
    _, picked, after = best
    picks = [tuple(options[e][picked[r * n + e]] for e in range(n)) for r in range(replicas)]
    return picks, after
