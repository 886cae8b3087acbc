"""Every function in the package stays below cyclomatic complexity 15, as radon counts it.

Fifteen is the ceiling the project holds itself to (docs/design/layout.md): past it a function
no longer reads in one pass, and the busiest functions are the ones changes land in. CI also
prints radon's report of compose/ and scheduling/ (.ci/run); this test is what keeps a new
function, a method or a function nested in one from crossing the line anywhere.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from radon.complexity import cc_visit
from radon.visitors import Function

import modelplane

PACKAGE = Path(modelplane.__file__).parent
CEILING = 15


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _functions(blocks: list[object]) -> Iterator[Function]:
    """Functions and methods (radon lists both flat) with the functions nested in them."""
    for block in blocks:
        if isinstance(block, Function):
            yield block
            yield from _functions(list(block.closures))


@pytest.mark.parametrize("module", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_function_reaches_the_complexity_ceiling(module: Path) -> None:
    over = [
        f"{f.fullname} (line {f.lineno}): {f.complexity}"
        for f in _functions(cc_visit(module.read_text()))
        if f.complexity >= CEILING
    ]
    assert not over, f"split into named steps, each below {CEILING}: {over}"
