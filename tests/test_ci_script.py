"""CI runs the README's commands: exactly the ``sh`` blocks under "Try it", never the output
shown beside them; and it reports the composers' and the scheduler's complexity without failing
on it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def ci_readme_commands() -> list[str]:
    """The commands .ci/run extracts, by running its own extraction function."""
    script = (ROOT / ".ci" / "run").read_text()
    function = re.search(r"^readme_commands\(\) \{\n.*?^\}\n", script, re.S | re.M)
    assert function is not None
    out = subprocess.run(
        ["bash", "-c", f"{function.group(0)}readme_commands"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.splitlines()


def test_ci_runs_the_setup_then_the_test_command_and_nothing_else() -> None:
    commands = ci_readme_commands()
    assert len(commands) == 2
    assert commands[0].startswith("pip install -q uv && uv sync && uv run modelplane render ")
    assert commands[1] == "uv run pytest -n auto"


def test_ci_runs_the_property_tests_full_search_beside_the_quick_default() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    assert "\nMODELPLANE_TESTS=full uv run pytest -m hypothesis\n" in script


REPORT = "uv run radon cc -s -n C src/modelplane/compose src/modelplane/scheduling || true\n"


def test_ci_reports_complexity_of_compose_and_scheduling_after_mypy_without_failing() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    assert f"\n{REPORT}" in script
    assert script.index("\nuv run mypy\n") < script.index(REPORT)
