"""The README's test command searches a quarter of each property's examples; CI the whole."""

from __future__ import annotations

import importlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tests.properties
from tests.properties import checks_something, vacuous


def reloaded(monkeypatch: pytest.MonkeyPatch, value: str | None) -> object:
    if value is None:
        monkeypatch.delenv("MODELPLANE_TESTS", raising=False)
    else:
        monkeypatch.setenv("MODELPLANE_TESTS", value)
    return importlib.reload(tests.properties)


def test_a_default_run_searches_a_quarter_of_the_examples(monkeypatch: pytest.MonkeyPatch) -> None:
    module = reloaded(monkeypatch, None)
    assert module.examples(400) == 100  # type: ignore[attr-defined]
    assert module.examples(20) == 10  # type: ignore[attr-defined]


def test_a_full_run_searches_every_example(monkeypatch: pytest.MonkeyPatch) -> None:
    module = reloaded(monkeypatch, "full")
    assert module.examples(400) == 400  # type: ignore[attr-defined]
    monkeypatch.delenv("MODELPLANE_TESTS")
    importlib.reload(tests.properties)


# --- vacuous examples ----------------------------------------------------------------------------


@checks_something
@settings(max_examples=20, database=None)
@given(n=st.integers(0, 100))
def every_example_vacuous(n: int) -> None:
    vacuous("nothing to check")


@checks_something
@settings(max_examples=20, database=None)
@given(n=st.integers(0, 100))
def some_examples_checked(n: int) -> None:
    if n % 2:
        vacuous("odd")
        return
    assert n % 2 == 0


def test_a_property_whose_examples_all_checked_nothing_fails() -> None:
    with pytest.raises(AssertionError, match="all 20 examples were vacuous"):
        every_example_vacuous()


def test_a_property_with_some_checked_examples_passes() -> None:
    some_examples_checked()
