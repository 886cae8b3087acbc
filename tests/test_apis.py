"""Where the API definitions are found, and what a command says when they are not."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from modelplane.apis import ENV_VAR, ApisNotFoundError, apis_dir

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = str(ROOT / "examples" / "replica-seed")


def test_a_checkout_reads_the_repository_apis(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert apis_dir() == ROOT / "apis"


def test_the_environment_overrides_where_definitions_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(ROOT / "apis" / "inferenceclasses", tmp_path / "inferenceclasses")
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    assert apis_dir() == tmp_path


def test_an_override_that_is_not_a_directory_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "missing"))
    with pytest.raises(ApisNotFoundError, match=f"{ENV_VAR}=.*missing is not a directory"):
        apis_dir()


def test_an_override_holding_no_definition_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    with pytest.raises(ApisNotFoundError, match=r"holds no \*/definition.yaml"):
        apis_dir()


@pytest.mark.parametrize("command", ["render", "validate"])
def test_missing_definitions_are_one_line_and_exit_2(command: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "modelplane", command, EXAMPLE],
        env={**os.environ, ENV_VAR: str(tmp_path)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert "no API definitions" in line and ENV_VAR in line
    assert done.stdout == ""
