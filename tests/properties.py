"""How hard the property tests search: a quick pass by default (the README's test command, a
newcomer's first run), the full search where CI asks for it (``MODELPLANE_TESTS=full``, which
.ci/run sets for ``pytest -m hypothesis``)."""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, ParamSpec

from hypothesis import event

FULL = os.environ.get("MODELPLANE_TESTS") == "full"
QUICK_SHARE = 4
"""A quick run tries a quarter of each property's examples (at least ``QUICK_FLOOR``)."""
QUICK_FLOOR = 10


def examples(full: int) -> int:
    """``max_examples`` for a property whose full search tries ``full`` examples."""
    return full if FULL else max(QUICK_FLOOR, full // QUICK_SHARE)


# --- vacuous examples --------------------------------------------------------------------------
# A property that returns early for some inputs (a Fatal response, a draw it cannot use) checks
# nothing on those: if every example took that way out, the test would pass having shown nothing.


@dataclass
class _Tally:
    runs: int = 0
    vacuous: Counter[str] = field(default_factory=Counter)


_TALLY: ContextVar[_Tally | None] = ContextVar("vacuous_tally", default=None)


def vacuous(why: str) -> None:
    """Mark the running example as checking nothing (the test returns right after), saying why.

    Recorded as a hypothesis event (``--hypothesis-show-statistics`` shows the share) and counted
    for ``checks_something``."""
    event(f"vacuous: {why}")
    tally = _TALLY.get()
    if tally is not None:
        tally.vacuous[why] += 1


P = ParamSpec("P")


def checks_something(test: Callable[P, None]) -> Callable[P, None]:
    """Fail a ``@given`` property (applied above ``@given``) whose examples were all vacuous."""
    inner = test.hypothesis.inner_test  # type: ignore[attr-defined]

    def counted(*args: Any, **kwargs: Any) -> None:
        tally = _TALLY.get()
        if tally is not None:
            tally.runs += 1
        inner(*args, **kwargs)

    test.hypothesis.inner_test = counted  # type: ignore[attr-defined]

    @functools.wraps(test)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        tally = _Tally()
        token = _TALLY.set(tally)
        try:
            test(*args, **kwargs)
        finally:
            _TALLY.reset(token)
        if tally.runs and sum(tally.vacuous.values()) >= tally.runs:
            raise AssertionError(
                f"all {tally.runs} examples were vacuous (checked nothing): {dict(tally.vacuous)}"
            )

    return run
