"""docs/reference.md is what tools/field_reference.py generates from the XRDs, field for field."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from modelplane import exits

ROOT = Path(__file__).resolve().parents[2]


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "field_reference", ROOT / "tools" / "field_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reference_is_in_sync_with_the_xrds() -> None:
    assert (ROOT / "docs" / "reference.md").read_text() == generator().reference()


def test_every_field_of_every_kind_has_a_row() -> None:
    text = (ROOT / "docs" / "reference.md").read_text()
    for field in (
        "spec.replicas",
        "spec.template.spec.engines[].members[].nodeSelector.devices[].selectors",
        "spec.nodePools[].className",
        "spec.endpoints[].selector.matchLabels",
    ):
        assert f"| `{field}` |" in text, field


def test_defaults_and_rule_messages_are_shown() -> None:
    text = (ROOT / "docs" / "reference.md").read_text()
    assert "a DRA device needs a deviceClassName to be claimed through" in text
    assert "| `spec.provisioning.gke.diskSizeGb` | integer | `100` | min 10 |" in text


def test_the_exit_code_table_of_the_readme_is_the_one_exits_writes() -> None:
    assert exits.table() in (ROOT / "README.md").read_text()


def test_the_reference_ends_with_the_same_exit_code_table() -> None:
    text = (ROOT / "docs" / "reference.md").read_text()
    assert text.partition("## Exit codes\n")[2].endswith(exits.table())


def test_each_exit_code_has_one_row() -> None:
    rows = [line for line in exits.table().splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == ["0", "1", "2", "3"]
