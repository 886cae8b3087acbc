"""Every condition reason the composers can set is a constant of modelplane.reasons, declared
under its kind with the condition it goes with (tools/reasons_table.py writes
docs/troubleshooting.md's tables from those rows: tests/docs/test_reasons_table.py)."""

from __future__ import annotations

import ast

from modelplane import reasons as declared
from tests.docs.reasons import SRC, Module, reasons, scan


def rows() -> dict[str, set[str]]:
    return {k.__name__: {r.reason for r in k.ROWS} for k in declared.Kind.__subclasses__()}


def test_every_reason_in_the_code_is_declared_under_its_kind() -> None:
    table = rows()
    missing = {kind: sorted(found - table.get(kind, set())) for kind, found in reasons().items()}
    assert {k: v for k, v in missing.items() if v} == {}


def test_reasons_py_declares_no_reason_the_code_cannot_set() -> None:
    code = reasons()
    extra = {kind: sorted(names - code.get(kind, set())) for kind, names in rows().items()}
    assert {k: v for k, v in extra.items() if v} == {}


def test_no_reason_is_written_as_a_string_literal() -> None:
    assert scan().literals == []


def test_no_condition_type_is_written_as_a_string_literal() -> None:
    literal = [
        f"{path.relative_to(SRC)}:{call.lineno}"
        for path in sorted(SRC.rglob("*.py"))
        for call in ast.walk(ast.parse(path.read_text()))
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == "Condition"
        and call.args
        and isinstance(call.args[0], ast.Constant)
    ]
    assert literal == []


def test_a_literal_reason_passed_through_a_parameter_is_caught() -> None:
    module = Module(
        ast.parse(
            "from modelplane.reasons import ModelCache\n"
            "def hold(reason):\n"
            "    return Condition(ModelCache.HYDRATED, 'False', reason, '')\n"
            "def compose(failed):\n"
            "    return hold('Broken' if failed else ModelCache.HYDRATING)\n"
        ),
        "modelcache/x.py",
    )
    assert module.reasons() == {"Broken", "Hydrating"}
    assert module.literals == ["modelcache/x.py:5: 'Broken'"]


def test_the_reasons_are_read_from_the_code_not_an_empty_list() -> None:
    found = reasons()
    assert "EntryMatchesNothing" in found["ModelService"]
    assert {"Installing", "Failed", "Installed"} <= found["InferenceCluster"]
    assert found["InferenceGatewayShard"] == {"HopsCreated", "WaitingForHops"}
