"""tools/compat_fixtures.py checks by default and rewrites the release record only when asked."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def tool(monkeypatch: pytest.MonkeyPatch, out: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "compat_fixtures", ROOT / "tools/compat_fixtures.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "compat_fixtures", module)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "EXAMPLES", ["replica-seed"])
    monkeypatch.setattr(module, "OUT", out)
    return module


def test_a_check_rewrites_nothing_and_names_the_record_that_differs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    record = tmp_path / "release" / "replica-seed.yaml"
    record.parent.mkdir()
    record.write_text("recorded by an older release\n")
    assert tool(monkeypatch, record.parent).main_([]) == 1
    assert record.read_text() == "recorded by an older release\n"
    assert "replica-seed.yaml: this checkout renders it differently" in capsys.readouterr().out


def test_write_records_what_the_checkout_renders_and_a_check_then_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = tool(monkeypatch, tmp_path / "release")
    assert module.main_(["--write"]) == 0
    assert "kind: ModelReplica" in (tmp_path / "release" / "replica-seed.yaml").read_text()
    assert module.main_([]) == 0
