"""The search: one cluster's pools, every engine of some replicas, fewest splits first.

Exhaustive within a budget, so a placement is found whenever one exists (no greedy false
rejects); replicas are interchangeable, so each one's choices are no smaller than the previous
one's, which prunes symmetric branches.
"""

from __future__ import annotations

from modelplane.scheduling.capacity import Load, Unit
from modelplane.scheduling.options import EngineOption

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
    for max_splits in range(replicas * n + 1):
        if max_splits and all(o.splits == 0 for opts in options for o in opts):
            return None
        found = _dfs(options, states, replicas, max_splits, steps)
        if found is not None:
            return found
    return None


def _dfs(
    options: list[list[EngineOption]],
    states: dict[str, Load],
    replicas: int,
    max_splits: int,
    steps: list[int],
) -> tuple[list[tuple[EngineOption, ...]], dict[str, Load]] | None:
    n = len(options)
    slots = replicas * n
    chosen: list[int] = []
    units: dict[str, list[Unit]] = {}

    def go(slot: int, splits: int) -> dict[str, Load] | None:
        if slot == slots:
            after = dict(states)
            for pool, pending in units.items():
                if pending:
                    after[pool] = states[pool].plus(tuple(pending))
            return after
        steps[0] -= 1
        if steps[0] < 0:
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
            if all(states[pool].fits(tuple(units[pool])) for pool, _ in option.units):
                chosen.append(i)
                result = go(slot + 1, splits + option.splits)
                if result is not None:
                    return result
                chosen.pop()
            for pool, us in option.units:
                del units[pool][len(units[pool]) - len(us) :]
        return None

    after = go(0, 0)
    if after is None:
        return None
    picks = [tuple(options[e][chosen[r * n + e]] for e in range(n)) for r in range(replicas)]
    return picks, after
