"""No dangling references: every relative link and every repository path named in README.md,
docs/ and the XRDs' comments and descriptions resolves, and user docs name no issue numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").rglob("*.md"))
XRDS = sorted((ROOT / "apis").glob("*/definition.yaml"))
USER_DOCS = [ROOT / "README.md", *(p for p in DOCS if "design" not in p.parts)]
_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
# A path into the repository as prose names one: a top-level directory, then more.
_PATH = re.compile(
    r"(?<![\w./-])(?P<path>(?:docs|apis|examples|package|src|tests|tools|bench)/[\w./<>*-]*[\w/])"
)
_ANCHOR = re.compile(r"[^\w\- ]")
_CODE = re.compile(r"`[^`\n]*`")
# A path another project holds, named as that project's ("the ... repository's `examples/...`").
_UPSTREAM = re.compile(r"repository's `[^`]*`")


def anchors(path: Path) -> set[str]:
    return {
        _ANCHOR.sub("", line.lstrip("#").strip().lower()).replace(" ", "-")
        for line in path.read_text().splitlines()
        if line.startswith("#")
    }


def named_paths(text: str) -> list[str]:
    return [
        m["path"]
        for m in _PATH.finditer(text)
        if not any(c in m["path"] for c in "<>*") and "..." not in m["path"]
    ]


@pytest.mark.parametrize("doc", [ROOT / "README.md", *DOCS], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(doc: Path) -> None:
    broken = []
    for m in _LINK.finditer(_CODE.sub("", doc.read_text())):
        target = m["target"]
        if re.match(r"^[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        resolved = (doc.parent / file).resolve() if file else doc
        unanchored = anchor and resolved.suffix == ".md" and anchor not in anchors(resolved)
        if not resolved.exists() or unanchored:
            broken.append(target)
    assert broken == []


@pytest.mark.parametrize(
    "doc", [ROOT / "README.md", *DOCS, *XRDS], ids=lambda p: str(p.relative_to(ROOT))
)
def test_every_repository_path_named_exists(doc: Path) -> None:
    text = _UPSTREAM.sub("", doc.read_text())
    missing = [p for p in named_paths(text) if not (ROOT / p.rstrip("/.")).exists()]
    assert missing == []


@pytest.mark.parametrize("doc", USER_DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_user_docs_name_no_issue_numbers(doc: Path) -> None:
    assert re.findall(r"\bissue\s*#?\d+|#\d{2,}\b", doc.read_text(), re.I) == []


@pytest.mark.parametrize("doc", USER_DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_user_docs_name_no_module_internals_or_benchmark_figures(doc: Path) -> None:
    text = doc.read_text()
    internals = [
        m
        for m in re.findall(r"\bsrc/modelplane\S*|\b[\w/]+\.py\b", text)
        if not m.startswith("tools/")  # the generator a reader may run
    ]
    assert internals == []
    assert "## Benchmarks" not in text
    assert "callgrind" not in text
