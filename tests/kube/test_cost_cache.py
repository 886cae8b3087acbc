"""CEL cost estimates kept on disk: the same answer as estimating afresh, never a stale one."""

from __future__ import annotations

from pathlib import Path

import pytest

from modelplane.kube.cel import budget
from modelplane.kube.crd import load_definitions

APIS = Path(__file__).resolve().parents[2] / "apis"
DEPLOYMENTS = APIS / "modeldeployments" / "definition.yaml"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MODELPLANE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "cel-cost"


@pytest.fixture
def xrd(tmp_path: Path) -> Path:
    path = tmp_path / "definition.yaml"
    path.write_text(DEPLOYMENTS.read_text())
    return path


def estimate(path: Path) -> budget.DefinitionCost:
    """As a new process would: nothing remembered in memory, only what is on disk."""
    budget._ESTIMATES.clear()
    [found] = load_definitions([path])
    return budget.estimate_cached(found)


def afresh(path: Path) -> budget.DefinitionCost:
    [found] = load_definitions([path])
    return budget.estimate_definition(found)


def test_an_estimate_read_back_from_disk_equals_one_made_afresh(cache: Path, xrd: Path) -> None:
    first = estimate(xrd)
    assert len(list(cache.iterdir())) == 1
    assert estimate(xrd) == first == afresh(xrd)


def test_an_edited_definition_is_estimated_afresh(cache: Path, xrd: Path) -> None:
    before = estimate(xrd)
    text = xrd.read_text()
    # Tolerations unbounded: their rules may run once per toleration a request can hold.
    bounded = "                        maxItems: 32\n                        x-kubernetes-list-type"
    assert bounded in text
    xrd.write_text(text.replace(bounded, "                        x-kubernetes-list-type", 1))
    after = estimate(xrd)
    assert len(list(cache.iterdir())) == 2
    assert after != before
    assert after == afresh(xrd)


def test_a_corrupt_entry_is_estimated_again(cache: Path, xrd: Path) -> None:
    first = estimate(xrd)
    [entry] = cache.iterdir()
    entry.write_text("{not json")
    assert estimate(xrd) == first


def test_an_empty_cache_setting_keeps_nothing_on_disk(
    tmp_path: Path, xrd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODELPLANE_CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    estimate(xrd)
    assert not (tmp_path / "xdg").exists()
