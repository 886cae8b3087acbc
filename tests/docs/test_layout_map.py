"""The module map in docs/design/layout.md is the package as it is: every module of
``src/modelplane`` is on it, and everything on it exists.

Under ``src/modelplane/`` the map's lines are a tree: a line whose first word ends in ``.py`` or
``/`` is an entry (its indentation says whose child it is), other lines continue the entry above.
A package's modules are either entries of their own or named in braces in its entry's text,
``{claims, composer, ...}``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYOUT = ROOT / "docs" / "design" / "layout.md"
PACKAGE = ROOT / "src" / "modelplane"
_BRACES = re.compile(r"\{([^}]*)\}")


def map_lines(text: str) -> list[str]:
    """The map's lines below ``src/modelplane/``, up to the next top-level entry."""
    lines = text.splitlines()
    start = lines.index("src/modelplane/") + 1
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith(" "))
    return lines[start:end]


def entries(lines: list[str]) -> dict[str, str]:
    """Each entry's path (relative to ``src/modelplane``) and its text, continuations joined."""
    found: dict[str, str] = {}
    parents: list[tuple[int, str]] = []
    current = None
    for line in lines:
        indent = len(line) - len(line.lstrip())
        first, _, rest = line.strip().partition(" ")
        if not first.endswith((".py", "/")):
            assert current is not None, f"a continuation with no entry above: {line!r}"
            found[current] += " " + line.strip()
            continue
        while parents and parents[-1][0] >= indent:
            parents.pop()
        current = (parents[-1][1] if parents else "") + first
        found[current] = rest.strip()
        if first.endswith("/"):
            parents.append((indent, current))
    return found


def listed(found: dict[str, str]) -> set[str]:
    """The modules named in braces in a package's entry, as paths like ``kube/cel.py``."""
    return {
        f"{package}{name.strip()}"
        for package, text in found.items()
        for names in _BRACES.findall(text)
        for name in names.split(",")
    }


def on_the_map(text: str) -> set[str]:
    """Every module and package the map names, as ``compose/cache`` (no suffix, no slash)."""
    found = entries(map_lines(text))
    return {p.removesuffix("/").removesuffix(".py") for p in [*found, *listed(found)]}


def in_the_package() -> set[str]:
    modules = {
        str(p.relative_to(PACKAGE).with_suffix(""))
        for p in PACKAGE.rglob("*.py")
        if p.name != "__init__.py"
    }
    packages = {str(p.parent.relative_to(PACKAGE)) for p in PACKAGE.rglob("*/__init__.py")}
    return modules | packages


@pytest.fixture(scope="module")
def mapped() -> set[str]:
    return on_the_map(LAYOUT.read_text())


def test_every_module_and_package_is_on_the_map(mapped: set[str]) -> None:
    assert sorted(in_the_package() - mapped) == []


def test_the_map_names_no_module_that_does_not_exist(mapped: set[str]) -> None:
    assert sorted(mapped - in_the_package()) == []


def test_the_map_reads_entries_nesting_and_braced_modules() -> None:
    # The reader itself: a module missing from this map would be seen, and one named in braces
    # counts as on the map.
    text = "\n".join(
        [
            "src/modelplane/",
            "  cli.py            the command line",
            "  kube/             machinery:",
            "                    {cel, names}",
            "  compose/          kinds:",
            "    modelreplica/     a replica: {claims}",
            "    cache.py          the cache contract",
            "examples/           elsewhere",
        ]
    )
    assert on_the_map(text) == {
        "cli",
        "kube",
        "kube/cel",
        "kube/names",
        "compose",
        "compose/modelreplica",
        "compose/modelreplica/claims",
        "compose/cache",
    }
