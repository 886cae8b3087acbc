"""Every test has a time limit, so one unlucky example or an endless wait fails its test instead
of hanging CI (pyproject.toml ``timeout``; the e2e tier's own in tests/e2e/conftest.py)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from tests.e2e.conftest import E2E_TIMEOUT, pytest_collection_modifyitems

ROOT = Path(__file__).resolve().parents[1]


def test_a_test_that_hangs_fails_at_its_limit(tmp_path: Path) -> None:
    (tmp_path / "test_hang.py").write_text("import time\n\ndef test_hang():\n    time.sleep(30)\n")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            "-o",
            "timeout=1",
            "-o",
            "addopts=",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert run.returncode == 1, run.stdout
    assert "Timeout" in run.stdout


def test_the_default_run_gives_each_test_five_minutes() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert options["timeout"] == 300


class _Item:
    """The part of a collected test the e2e hook reads and writes."""

    def __init__(self, e2e: bool) -> None:
        self.e2e, self.markers = e2e, []

    def get_closest_marker(self, name: str) -> object:
        return object() if self.e2e and name == "e2e" else None

    def add_marker(self, marker: object) -> None:
        self.markers.append(marker)


def test_an_e2e_test_gets_an_hour_and_no_other_test_is_touched() -> None:
    e2e, unit = _Item(True), _Item(False)
    pytest_collection_modifyitems([e2e, unit])  # type: ignore[list-item]
    [marker] = e2e.markers
    assert marker.mark.name == "timeout" and marker.mark.args == (E2E_TIMEOUT,)  # type: ignore[attr-defined]
    assert unit.markers == []
