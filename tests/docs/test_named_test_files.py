"""Every test file a docstring, comment or doc names exists: a reader following one lands on it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A path into this repository's tests/ (not another project's `<repo>/tests/...`, as parity.md
# names the public implementation's files).
NAMED = re.compile(r"(?<![\w/.-])tests/[\w/]+\.py")
SOURCES = ("src", "tools", "e2e", "docs", "tests", "bench")


def named() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    paths = [ROOT / "README.md", *(p for top in SOURCES for p in (ROOT / top).rglob("*"))]
    for path in paths:
        if path.suffix in (".py", ".md") and path.is_file():
            for found in NAMED.findall(path.read_text(errors="replace")):
                out.setdefault(found, set()).add(str(path.relative_to(ROOT)))
    return out


def test_every_test_file_named_exists() -> None:
    missing = {name: sorted(by) for name, by in named().items() if not (ROOT / name).exists()}
    assert missing == {}
