"""How hard the property tests search: a quick pass by default (the README's test command, a
newcomer's first run), the full search where CI asks for it (``MODELPLANE_TESTS=full``, which
.ci/run sets for ``pytest -m hypothesis``)."""

from __future__ import annotations

import os

FULL = os.environ.get("MODELPLANE_TESTS") == "full"
QUICK_SHARE = 4
"""A quick run tries a quarter of each property's examples (at least ``QUICK_FLOOR``)."""
QUICK_FLOOR = 10


def examples(full: int) -> int:
    """``max_examples`` for a property whose full search tries ``full`` examples."""
    return full if FULL else max(QUICK_FLOOR, full // QUICK_SHARE)
