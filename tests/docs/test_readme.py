"""The README's first screen shows the composition tree, not thousands of lines of YAML, and
says plainly which cluster sources work today."""

from __future__ import annotations

import shlex
from pathlib import Path

from click.testing import CliRunner

from modelplane import cli
from modelplane.compose.inferencecluster.managed import CLOUDS

ROOT = Path(__file__).resolve().parents[2]
FIRST_SCREEN = 60


def first_screen() -> str:
    return "\n".join((ROOT / "README.md").read_text().splitlines()[:FIRST_SCREEN])


def test_the_first_command_shown_renders_the_tree_and_its_last_line_is_shown() -> None:
    screen = first_screen()
    command = next(line for line in screen.splitlines() if "uv run modelplane render" in line)
    args = shlex.split(command.partition("uv run modelplane ")[2])
    assert "-o" in args and args[args.index("-o") + 1] == "tree"
    out = CliRunner().invoke(cli.main, args)
    assert out.exit_code == 0
    assert out.stdout.splitlines()[-1] in screen


def shown_tree(screen: str) -> list[str]:
    """The tree the first screen shows, from its header to the end of its block."""
    lines = screen.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("NAME "))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
    return [line for line in lines[start:end] if line.strip() != "..."]


def same_row(shown: list[str], printed: list[str]) -> bool:
    """Column for column; a shown word ending in ``...`` stands for any word it starts."""
    return len(shown) == len(printed) and all(
        a == b or (a.endswith("...") and b.startswith(a[:-3]))
        for a, b in zip(shown, printed, strict=True)
    )


def test_every_tree_line_the_first_screen_shows_is_one_render_prints() -> None:
    screen = first_screen()
    command = next(line for line in screen.splitlines() if "uv run modelplane render" in line)
    args = shlex.split(command.partition("uv run modelplane ")[2])
    printed = [line.split() for line in CliRunner().invoke(cli.main, args).stdout.splitlines()]
    for line in shown_tree(screen):
        assert any(same_row(line.split(), p) for p in printed), line


def test_the_first_screen_says_which_cluster_sources_work() -> None:
    statement = first_screen().partition("**Cluster sources today:**")[2].partition("\n\n")[0]
    for source in ("Existing", *sorted(CLOUDS)):
        assert f"`{source}`" in statement, source
    assert "`Nebius`" in statement and "`Vultr`" in statement and "refused" in statement


def test_the_first_screen_points_to_the_user_docs() -> None:
    screen = first_screen()
    for doc in ("docs/getting-started.md", "docs/reference.md", "docs/troubleshooting.md"):
        assert f"({doc})" in screen
