"""The scheduler's modules import one another in one direction only: no module reaches itself
through its imports, those inside functions and type-checking blocks included."""

from __future__ import annotations

from tests.test_layers import MODULES, imports

SCHEDULING = "modelplane.scheduling"


def _reached(start: str) -> set[str]:
    """Every scheduling module ``start`` imports, directly or through other scheduling ones."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for name in imports(todo.pop()):
            if name.startswith(f"{SCHEDULING}.") and name in MODULES and name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


def test_no_scheduling_module_imports_itself_through_another() -> None:
    circular = sorted(m for m in MODULES if m.startswith(f"{SCHEDULING}.") and m in _reached(m))
    assert circular == []
