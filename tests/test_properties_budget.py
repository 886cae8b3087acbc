"""The README's test command searches a quarter of each property's examples; CI the whole."""

from __future__ import annotations

import importlib

import pytest

import tests.properties


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
