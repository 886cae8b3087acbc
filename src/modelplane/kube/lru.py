"""The one bounded cache: a map forgetting the least recently used entries past a budget.

Responses (function, serve) are bounded by their bytes; rule outcomes and whole admissions
(kube/rules, kube/admission) by their count, each entry sized one.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class Lru(Generic[T]):
    """A map bounded by the total size of its entries, forgetting the least recently used
    first; an entry larger than the whole budget is not kept at all."""

    def __init__(self, budget: int) -> None:
        self._items: OrderedDict[Hashable, tuple[T, int]] = OrderedDict()
        self.budget = budget
        self.size = 0
        """The sizes of the entries held, summed."""

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable) -> T | None:
        entry = self._items.get(key)
        if entry is None:
            return None
        self._items.move_to_end(key)
        return entry[0]

    def put(self, key: Hashable, item: T, size: int = 1) -> None:
        old = self._items.pop(key, None)
        if old is not None:
            self.size -= old[1]
        if size > self.budget:
            return
        self._items[key] = (item, size)
        self.size += size
        while self.size > self.budget:
            _, (_, dropped) = self._items.popitem(last=False)
            self.size -= dropped
