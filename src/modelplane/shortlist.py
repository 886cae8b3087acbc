"""Naming a few of many in a message, and counting them: a condition or a report that lists
every name would grow with the fleet, and a condition is sent back with its composite on every
reconcile of everything that requires it."""

from __future__ import annotations

from collections.abc import Iterable


def shortlist(names: Iterable[str], shown: int) -> str:
    """The first ``shown`` names, comma separated, and how many more."""
    listed = list(names)
    rest = len(listed) - shown
    head = ", ".join(listed[:shown])
    return f"{head} and {rest} more" if rest > 0 else head


def plural(word: str, n: int) -> str:
    """``word`` as it reads of ``n`` things: "cluster" of one, "clusters" of any other number."""
    return word if n == 1 else f"{word}s"


def counted(n: int, word: str) -> str:
    """``n`` and its word: "1 cluster", "3 clusters"."""
    return f"{n} {plural(word, n)}"
