"""docs/design/parity.md stays true: every row names tests of ours that exist and run, every
row that differs says why, and every public test file in scope is listed."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PARITY = ROOT / "docs" / "design" / "parity.md"
STATUSES = {"same", "different", "unsupported", "pending"}
TEST_REF = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")
IN_SCOPE = (
    "compose-model-replica/tests/test_backends.py",
    "compose-model-replica/tests/test_fn.py",
    "compose-model-deployment/tests/test_fn.py",
    "compose-model-deployment/tests/test_scheduling.py",
    "compose-model-deployment/tests/test_cel.py",
    "compose-model-deployment/tests/test_quantity.py",
    "compose-model-deployment/tests/test_semver.py",
    "compose-model-cache/tests/test_fn.py",
    "compose-model-service/tests/test_fn.py",
    "compose-model-endpoint/tests/test_fn.py",
)


@dataclass(frozen=True)
class Row:
    section: str
    id: str
    status: str
    tests: tuple[tuple[str, str], ...]
    why: str


def rows() -> list[Row]:
    out, section = [], ""
    for line in PARITY.read_text().splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 6 or not re.fullmatch(r"[A-Z]+\d+", cells[0]):
            continue
        ident, _, _, status, tests, why = cells
        out.append(Row(section, ident, status, tuple(TEST_REF.findall(tests)), why))
    return out


@cache
def collected_tests(path: str) -> dict[str, ast.FunctionDef]:
    """The test functions pytest collects from a file of ours, by name."""
    tree = ast.parse((ROOT / path).read_text())
    return {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }


def skipped(fn: ast.FunctionDef) -> bool:
    return any("skip" in ast.unparse(d) or "xfail" in ast.unparse(d) for d in fn.decorator_list)


ROWS = rows()


def test_the_table_has_rows_for_every_public_test_file_in_scope() -> None:
    assert {row.section for row in ROWS} == set(IN_SCOPE)


def test_row_ids_are_unique() -> None:
    ids = [row.id for row in ROWS]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_each_row_says_same_different_unsupported_or_pending(row: Row) -> None:
    assert row.status in STATUSES


@pytest.mark.parametrize(
    "row", [r for r in ROWS if r.status in ("same", "different")], ids=lambda r: r.id
)
def test_a_same_or_different_row_names_the_tests_that_prove_ours(row: Row) -> None:
    assert row.tests, f"{row.id} names no test of ours"


@pytest.mark.parametrize("row", [r for r in ROWS if r.status != "same"], ids=lambda r: r.id)
def test_a_row_that_is_not_the_same_says_why(row: Row) -> None:
    assert len(row.why) > 40, f"{row.id} gives no reason"


@pytest.mark.parametrize("row", [r for r in ROWS if r.status == "same"], ids=lambda r: r.id)
def test_a_same_row_needs_no_reason(row: Row) -> None:
    assert row.why == "", f"{row.id} is listed as the same but explains a difference"


@pytest.mark.parametrize(
    "ref", sorted({ref for row in ROWS for ref in row.tests}), ids=lambda r: "::".join(r)
)
def test_every_named_test_exists_and_is_not_skipped(ref: tuple[str, str]) -> None:
    path, name = ref
    assert Path(path).name.startswith("test_") and (ROOT / path).is_file(), path
    fn = collected_tests(path).get(name)
    assert fn is not None, f"{path}::{name} does not exist"
    assert not skipped(fn), f"{path}::{name} is skipped"
