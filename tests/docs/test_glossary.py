"""The glossary in docs/design/glossary.md: every term names the module that owns it, that
module exists, the project's own words a newcomer meets are defined, and every design doc links
the glossary."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DESIGN = ROOT / "docs" / "design"
GLOSSARY = DESIGN / "glossary.md"
# The words issue readers asked to have defined first; others may join, none may leave.
REQUIRED = (
    "evidence",
    "carry forward",
    "hold",
    "lane",
    "hop",
    "wave",
    "surge",
    "stranded",
    "footprint",
    "pinning",
    "hand-over",
    "shard",
)
_LINK = re.compile(r"\]\((?:\./)?glossary\.md(?:#[\w-]+)?\)")


def terms(text: str) -> dict[str, list[str]]:
    """Each row of the glossary's table: its term and the paths in its last column."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| ") or cells[0] == "term" or len(cells) != 3:
            continue
        rows[cells[0]] = re.findall(r"`([^`]+)`", cells[2])
    return rows


@pytest.fixture(scope="module")
def glossary() -> dict[str, list[str]]:
    return terms(GLOSSARY.read_text())


@pytest.mark.parametrize("term", REQUIRED)
def test_the_term_is_defined(glossary: dict[str, list[str]], term: str) -> None:
    assert term in glossary


def test_every_term_names_the_modules_that_own_it_and_they_exist(
    glossary: dict[str, list[str]],
) -> None:
    assert [t for t, owners in glossary.items() if not owners] == []
    missing = [p for owners in glossary.values() for p in owners if not (ROOT / p).is_file()]
    assert missing == []


@pytest.mark.parametrize(
    "doc",
    sorted(p for p in DESIGN.glob("*.md") if p != GLOSSARY),
    ids=lambda p: p.name,
)
def test_every_design_doc_links_the_glossary(doc: Path) -> None:
    assert _LINK.search(doc.read_text()), f"{doc.name} does not link glossary.md"


def test_a_row_is_read_as_its_term_and_owners() -> None:
    row = "| hop | a gateway's path | `src/a.py`, `src/b.py` |"
    assert terms(f"| term | what it means | owned by |\n|---|---|---|\n{row}\n") == {
        "hop": ["src/a.py", "src/b.py"]
    }
