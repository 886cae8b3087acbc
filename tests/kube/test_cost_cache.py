"""CEL cost estimates kept on disk: the same answer as estimating afresh, never a stale one."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from modelplane.kube import cost
from modelplane.kube.crd import load_definitions

APIS = Path(__file__).resolve().parents[2] / "apis"
DEPLOYMENTS = APIS / "modeldeployments" / "definition.yaml"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MODELPLANE_CACHE_DIR", str(tmp_path))
    cost._ESTIMATES.clear()
    return tmp_path / "cel-cost"


def definition():  # a fresh object each time: the in-process memo is keyed by identity
    [found] = load_definitions([DEPLOYMENTS])
    return copy.deepcopy(found)


def test_an_estimate_read_back_from_disk_equals_one_made_afresh(cache: Path) -> None:
    first = cost.estimate_cached(definition())
    assert len(list(cache.iterdir())) == 1
    again = cost.estimate_cached(definition())
    assert again == first == cost.estimate_definition(definition())


def test_an_edited_definition_is_estimated_afresh(cache: Path) -> None:
    before = cost.estimate_cached(definition())
    edited = definition()
    spec = next(iter(edited.versions.values())).raw_schema["properties"]["spec"]
    spec["x-kubernetes-validations"] = [{"rule": "self.replicas >= 0", "message": "m"}]
    after = cost.estimate_cached(edited)
    assert len(list(cache.iterdir())) == 2
    assert after != before
    assert after == cost.estimate_definition(edited)


def test_a_corrupt_entry_is_estimated_again(cache: Path) -> None:
    first = cost.estimate_cached(definition())
    [entry] = cache.iterdir()
    entry.write_text("{not json")
    cost._ESTIMATES.clear()
    assert cost.estimate_cached(definition()) == first


def test_an_empty_cache_setting_keeps_nothing_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODELPLANE_CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cost.estimate_cached(definition())
    assert not any(tmp_path.iterdir())
