"""docs/troubleshooting.md's reason tables are what tools/reasons_table.py writes from
src/modelplane/reasons.py (which reasons, in what order, under which condition), and the page's
prose, in the tables and around them, is its own."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from modelplane import reasons

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "troubleshooting.md"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "reasons_table", ROOT / "tools" / "reasons_table.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_page_is_in_sync_with_reasons_py() -> None:
    assert PAGE.read_text() == generator().page(PAGE.read_text())


OTHER_KINDS = "".join(
    f"<!-- reasons {k.__name__} -->\n<!-- /reasons -->\n"
    for k in reasons.Kind.__subclasses__()
    if k is not reasons.InferenceClass
)
MEANS = "the devices are read; the class composes nothing"


def class_table(*rows: str) -> str:
    return "".join(
        [
            "prose before\n<!-- reasons InferenceClass -->\n| reason | condition | means | do |\n",
            "|---|---|---|---|\n",
            *(f"{row}\n" for row in rows),
            "<!-- /reasons -->\nafter\n",
        ]
    )


def test_the_page_explains_every_reason() -> None:
    assert generator().unexplained(PAGE.read_text()) == []


def test_a_row_takes_its_condition_from_the_code_and_its_prose_from_the_page() -> None:
    stale = class_table(f"| `DevicesDescribed` | Accepted False | {MEANS} | nothing |")
    text = generator().page(stale + OTHER_KINDS)
    assert text.startswith(
        class_table(f"| `DevicesDescribed` | Accepted True | {MEANS} | nothing |")
    )


def test_a_row_the_code_no_longer_declares_is_dropped() -> None:
    stale = class_table(
        "| `Gone` | Accepted True | once | nothing |",
        f"| `DevicesDescribed` | Accepted True | {MEANS} | nothing |",
    )
    text = generator().page(stale + OTHER_KINDS)
    assert text.startswith(
        class_table(f"| `DevicesDescribed` | Accepted True | {MEANS} | nothing |")
    )


def test_prose_holding_an_escaped_pipe_is_kept() -> None:
    row = "| `DevicesDescribed` | Accepted True | reads `a \\| b` | nothing |"
    text = generator().page(class_table(row) + OTHER_KINDS)
    assert text.startswith(class_table(row))
    assert "DevicesDescribed" not in generator().unexplained(text)


def test_a_reason_the_page_does_not_explain_yet_is_written_empty_and_named() -> None:
    text = generator().page(class_table() + OTHER_KINDS)
    assert text.startswith(class_table("| `DevicesDescribed` | Accepted True |  |  |"))
    assert "DevicesDescribed" in generator().unexplained(text)


def test_a_kind_without_a_table_on_the_page_is_refused() -> None:
    with pytest.raises(ValueError, match="InferenceClass"):
        generator().page("<!-- reasons ModelCache -->\n<!-- /reasons -->\n")


def test_each_kind_holds_the_rows_its_own_class_declares() -> None:
    assert [r.reason for r in reasons.InferenceClass.ROWS] == ["DevicesDescribed"]
    assert (
        reasons.InferenceGatewayShard.ROWS[0].reason == reasons.InferenceGatewayShard.HOPS_CREATED
    )


def test_no_kind_declares_a_reason_twice() -> None:
    twice = {
        k.__name__: [r.reason for r in k.ROWS if [x.reason for x in k.ROWS].count(r.reason) > 1]
        for k in reasons.Kind.__subclasses__()
    }
    assert {k: v for k, v in twice.items() if v} == {}


def test_a_reason_constant_is_the_plain_string_crossplane_records() -> None:
    assert type(reasons.ModelService.ENTRY_MATCHES_NOTHING) is str
    assert reasons.ModelService.ENTRY_MATCHES_NOTHING == "EntryMatchesNothing"


def edited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str) -> ModuleType:
    """The tool, pointed at a copy of the page with ``old`` replaced by ``new`` once."""
    tool = generator()
    page = tmp_path / "troubleshooting.md"
    page.write_text(PAGE.read_text().replace(old, new, 1))
    monkeypatch.setattr(tool, "PAGE", page)
    monkeypatch.setattr(tool, "ROOT", tmp_path)
    return tool


def test_the_check_fails_when_the_page_differs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = edited(tmp_path, monkeypatch, "| Accepted True |", "| Accepted False |")
    assert tool.main([]) == 1
    assert tool.main(["--write"]) == 0
    assert tool.PAGE.read_text() == PAGE.read_text()


def test_the_check_takes_reworded_prose_as_the_page_s_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert edited(tmp_path, monkeypatch, "| nothing |", "| reworded |").main([]) == 0


def test_the_check_fails_when_a_reason_is_not_explained(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = edited(tmp_path, monkeypatch, f"| {MEANS} | nothing |", "|  |  |")
    assert tool.main([]) == 1
    assert tool.main(["--write"]) == 1
