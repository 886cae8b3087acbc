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
        found = _Search(options, states, replicas, max_splits, steps, floors).run()
        if found is not None:
            return found
    return None


class _Search:
    """One depth-first search with at most ``max_splits`` splits: a slot is one engine of one
    replica (slot ``r * n + e``), ``chosen`` the option index taken for each slot so far."""

    def __init__(
        self,
        options: list[list[EngineOption]],
        states: dict[str, Load],
        replicas: int,
        max_splits: int,
        steps: list[int],
        floors: list[Rank],
    ) -> None:
        self.options = options
        self.states = states
        self.replicas = replicas
        self.max_splits = max_splits
        self.steps = steps
        self.n = len(options)
        self.slots = replicas * self.n
        self.chosen: list[int] = []
        self.units: dict[str, list[Unit]] = {}
        # rest[slot]: the least rank the slots from ``slot`` on can add (each engine's cheapest).
        self.rest = [FREE] * (self.slots + 1)
        for slot in range(self.slots - 1, -1, -1):
            self.rest[slot] = add_ranks(self.rest[slot + 1], floors[slot % self.n])
        self.best: list[Any] = []  # [rank, chosen, after] of the best placement so far

    def run(self) -> tuple[list[tuple[EngineOption, ...]], dict[str, Load]] | None:
        """The best placement within ``max_splits``, per replica one option per engine, and
        the pools' loads after it; None when there is none."""
        self.go(0, 0, FREE)
        if not self.best:
            return None
        _, picked, after = self.best
        n = self.n
        picks = [
            tuple(self.options[e][picked[r * n + e]] for e in range(n))
            for r in range(self.replicas)
        ]
        return picks, after

    def go(self, slot: int, splits: int, rank: Rank) -> bool:
        """Explores from ``slot``; True once the search is to stop (the best possible rank is
        reached, or the budget is spent with a placement in hand)."""
        if slot == self.slots:
            return self._complete(rank)
        if self.best and add_ranks(rank, self.rest[slot]) >= self.best[0]:
            return False
        if self._spent():
            return True
        e = slot % self.n
        for i in range(self._lowest(slot, e), len(self.options[e])):
            option = self.options[e][i]
            if splits + option.splits <= self.max_splits and self._take(
                i, option, slot, splits, rank
            ):
                return True
        return False

    def _complete(self, rank: Rank) -> bool:
        """A placement of every slot: kept when it is the best yet; True when none can beat it."""
        if self.best and rank >= self.best[0]:
            return False
        after = dict(self.states)
        for pool, pending in self.units.items():
            if pending:
                after[pool] = self.states[pool].plus(tuple(pending))
        self.best[:] = [rank, list(self.chosen), after]
        return rank <= self.rest[0]

    def _spent(self) -> bool:
        """One step of the budget; past it, stop with the best so far, or raise with none."""
        self.steps[0] -= 1
        if self.steps[0] >= 0:
            return False
        if self.best:
            return True
        raise SearchedOutError

    def _lowest(self, slot: int, e: int) -> int:
        """Replicas are interchangeable: each one's choices are no smaller than the previous."""
        chosen, n = self.chosen, self.n
        if slot >= n and chosen[slot - n - e : slot - n] == chosen[slot - e : slot]:
            return chosen[slot - n]
        return 0

    def _take(self, i: int, option: EngineOption, slot: int, splits: int, rank: Rank) -> bool:
        """Option ``i`` for ``slot``, explored on when its pools still fit; undone after."""
        units = self.units
        for pool, us in option.units:
            units.setdefault(pool, []).extend(us)
        stop = False
        if all(self.states[pool].fits(tuple(units[pool])) for pool, _ in option.units):
            self.chosen.append(i)
            stop = self.go(slot + 1, splits + option.splits, add_ranks(rank, option.rank))
            self.chosen.pop()
        for pool, us in option.units:
            del units[pool][len(units[pool]) - len(us) :]
        return stop
