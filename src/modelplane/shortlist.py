"""Naming a few of many in a message: a condition or a report that lists every name would grow
with the fleet, and a condition is sent back with its composite on every reconcile of
everything that requires it."""

from __future__ import annotations

from collections.abc import Iterable


def shortlist(names: Iterable[str], shown: int) -> str:
    """The first ``shown`` names, comma separated, and how many more."""
    listed = list(names)
    rest = len(listed) - shown
    head = ", ".join(listed[:shown])
    return f"{head} and {rest} more" if rest > 0 else head
