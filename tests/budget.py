"""A time budget per test, so that one unlucky example cannot hang a run (tests/conftest.py).

SIGALRM: the suite runs its tests in the main thread of one process. Where there is no SIGALRM
the budget is not enforced.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager

TEST_BUDGET_SECONDS = int(os.environ.get("MODELPLANE_TEST_BUDGET", "300"))


class BudgetExceededError(BaseException):
    """A BaseException, so that hypothesis does not go on shrinking past the budget."""


@contextmanager
def within_budget(seconds: int, what: str) -> Iterator[None]:
    """Raise ``BudgetExceededError`` in the block once it has run ``seconds``."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def expire(_signum: int, _frame: object) -> None:
        raise BudgetExceededError(f"{what} ran past its {seconds} s budget")

    previous = signal.signal(signal.SIGALRM, expire)
    outer = signal.alarm(seconds)  # an enclosing budget's seconds left, re-armed on the way out
    started = time.monotonic()
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        if outer:
            signal.alarm(max(1, outer - int(time.monotonic() - started)))
