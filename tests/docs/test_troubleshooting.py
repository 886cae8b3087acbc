"""docs/troubleshooting.md lists every condition reason the composers can set, under its kind."""

from __future__ import annotations

import re
from pathlib import Path

from tests.docs.reasons import reasons

PAGE = Path(__file__).resolve().parents[2] / "docs" / "troubleshooting.md"
_ROW = re.compile(r"^\| `(?P<reason>\w+)` \|")


def documented() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    kind = ""
    for line in PAGE.read_text().splitlines():
        if line.startswith("## "):
            kind = line[3:].strip()
            out.setdefault(kind, set())
        elif (m := _ROW.match(line)) and kind:
            out[kind].add(m["reason"])
    return out


def test_every_reason_in_the_code_is_documented_under_its_kind() -> None:
    page = documented()
    missing = {kind: sorted(found - page.get(kind, set())) for kind, found in reasons().items()}
    assert {k: v for k, v in missing.items() if v} == {}


def test_the_page_documents_no_reason_the_code_cannot_set() -> None:
    code = reasons()
    extra = {kind: sorted(names - code.get(kind, set())) for kind, names in documented().items()}
    assert {k: v for k, v in extra.items() if v and k in code} == {}


def test_the_reasons_are_read_from_the_code_not_an_empty_list() -> None:
    found = reasons()
    assert "EntryMatchesNothing" in found["ModelService"]
    assert {"Installing", "Failed", "Installed"} <= found["InferenceCluster"]
