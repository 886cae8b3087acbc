"""Every test has a time budget (tests/budget.py), so one that hangs fails instead."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.budget import BudgetExceededError, within_budget


def test_a_block_past_its_budget_is_stopped_naming_it() -> None:
    stopped = pytest.raises(BudgetExceededError, match="slow block ran past its 1 s budget")
    with stopped, within_budget(1, "slow block"):
        time.sleep(30)


@settings(max_examples=5, database=None, deadline=None)
@given(st.integers())
def hangs(_n: int) -> None:
    time.sleep(30)


def test_a_hanging_property_is_stopped_without_shrinking_on() -> None:
    with pytest.raises(BudgetExceededError), within_budget(1, "property"):
        hangs()


def test_a_block_within_its_budget_runs_to_its_end() -> None:
    with within_budget(60, "quick block"):
        done = True
    assert done


def test_an_enclosing_budget_still_holds_after_an_inner_one() -> None:
    with pytest.raises(BudgetExceededError, match="outer"), within_budget(2, "outer"):
        with within_budget(60, "inner"):
            pass
        time.sleep(30)
