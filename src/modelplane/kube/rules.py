"""``x-kubernetes-validations``: compile every CEL rule of a schema once, evaluate them all.

Semantics follow apiextensions-apiserver's CEL validator for a create:

- ``self`` is the node the rule sits on; property names that are CEL keywords or carry
  ``.``, ``-``, ``/`` or ``__`` are escaped (``namespace`` → ``__namespace__``).
- Transition rules (those reading ``oldSelf``) are compiled but not evaluated: there is no old
  object on a create. With ``optionalOldSelf: true`` they run with ``oldSelf`` set to
  ``optional.none()``.
- A false rule reports ``Invalid value: "<schema type>": <message>`` at the node's path (plus the
  rule's ``fieldPath``), or the error kind its ``reason`` names. ``messageExpression`` wins when it
  yields a non-empty single-line string. A runtime error reports
  ``<error> evaluating rule: <message or rule>``.
- Rules are evaluated only on present values.

Rules that call ``matches`` are memoised per (rule, node content): cel-cpp recompiles the
regular expression on every evaluation (the metadata label-key rule costs ~250 µs per key), and
the same XR comes back on every reconcile. Other rules are cheaper to evaluate than to key.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from modelplane.kube.cel.names import escape
from modelplane.kube.cel.runtime import (
    DYN,
    CelCompileError,
    CelEvaluationError,
    Environment,
    Program,
)
from modelplane.kube.errors import ErrorType, FieldError, Key, Path, render_path
from modelplane.kube.lru import Lru
from modelplane.kube.schema import Schema

_SERIALS = itertools.count()
_OLD_SELF = re.compile(r"\boldSelf\b")


class RuleCompileError(ValueError):
    """One or more rules of a definition do not compile."""


@dataclass
class Rule:
    source: str
    program: Program | None  # None: a transition rule, not evaluated on create
    message: str
    message_program: Program | None
    reason: str | None
    field_path: str
    memoised: bool = False
    # Unique for the life of the process (unlike id(), which a collected rule hands on).
    serial: int = field(default_factory=lambda: next(_SERIALS))


@functools.cache
def _self_env() -> Environment:
    return Environment({"self": DYN})


@functools.cache
def _transition_env() -> Environment:
    return Environment({"self": DYN, "oldSelf": DYN})


def _compile_rule(raw: dict[str, Any]) -> Rule:
    source = str(raw.get("rule", ""))
    message = str(raw.get("message") or "").strip()
    program: Program | None = None
    if not _OLD_SELF.search(source):
        program = _self_env().compile(source)
    elif raw.get("optionalOldSelf"):
        program = _self_env().compile(f"cel.bind(oldSelf, optional.none(), {source})")
    else:
        _transition_env().compile(source)
    message_program = None
    if raw.get("messageExpression"):
        message_program = _self_env().compile(str(raw["messageExpression"]))
    return Rule(
        source=source,
        program=program,
        message=message,
        message_program=message_program,
        reason=raw.get("reason"),
        field_path=str(raw.get("fieldPath") or ""),
        memoised="matches(" in source,
    )


def compile_rules(schema: Schema) -> None:
    """Compile every rule below ``schema`` (once); raise ``RuleCompileError`` listing failures."""
    failures: list[str] = []
    _compile_tree(schema, "openAPIV3Schema", failures)
    if failures:
        raise RuleCompileError("; ".join(failures))


def _compile_tree(schema: Schema, where: str, failures: list[str]) -> None:
    if not schema.has_rules:
        return
    if schema.compiled_rules is None:
        compiled = []
        for i, raw in enumerate(schema.rules):
            try:
                compiled.append(_compile_rule(raw))
            except CelCompileError as e:
                at = f"{where}.x-kubernetes-validations[{i}]"
                failures.append(f"{at}: rule {raw.get('rule')!r}: {e}")
        schema.compiled_rules = compiled
    for sub, below in schema.children(where):
        _compile_tree(sub, below, failures)


# --- evaluation ----------------------------------------------------------------------------

_MEMO: Lru[tuple[bool, str]] = Lru(4096)
"""Rule outcomes keyed by (rule, node content)."""
# Benchmarks switch this off to measure evaluation itself.
memoise = True


def evaluate(schema: Schema, obj: Any) -> list[FieldError]:
    """Every CEL rule error of ``obj`` (pruned and defaulted, rules compiled)."""
    errors: list[FieldError] = []
    _walk(schema, obj, (), errors)
    return errors


def _walk(schema: Schema, value: Any, path: Path, errors: list[FieldError]) -> None:
    if value is None or not schema.has_rules:
        return
    if schema.rules:
        if schema.compiled_rules is None:
            compile_rules(schema)
        _check(schema, value, path, errors)
    if isinstance(value, dict):
        props = schema.properties
        additional = schema.additional
        for key, sub in value.items():
            if props is not None and key in props:
                _walk(props[key], sub, (*path, key), errors)
            elif additional is not None:
                _walk(additional, sub, (*path, Key(key)), errors)
    elif isinstance(value, list) and schema.items is not None:
        for i, item in enumerate(value):
            _walk(schema.items, item, (*path, i), errors)


def _check(schema: Schema, value: Any, path: Path, errors: list[FieldError]) -> None:
    cel_value = value if schema.cel_identity else to_cel(schema, value)
    content: str | None = None
    activation = None
    for rule in schema.compiled_rules:
        if rule.program is None:
            continue
        key: tuple[int, str] | None = None
        outcome = None
        if memoise and rule.memoised:
            if content is None:
                content = json.dumps(cel_value, sort_keys=True, separators=(",", ":"), default=str)
            key = (rule.serial, content)
            outcome = _MEMO.get(key)
        if outcome is None:
            if activation is None:
                activation = _self_env().raw_activation({"self": cel_value})
            outcome = _run(rule, activation)
            if key is not None:
                _MEMO.put(key, outcome)
        ok, detail = outcome
        if not ok:
            errors.append(_error(schema, rule, path, detail))


def _run(rule: Rule, activation: Any) -> tuple[bool, str]:
    assert rule.program is not None
    shown = rule.message or rule.source
    try:
        result = rule.program.evaluate_raw(activation)
    except CelEvaluationError as e:
        return False, f"{e} evaluating rule: {shown}"
    if result is True:
        return True, ""
    if result is not False:
        return False, f"rule did not evaluate to a bool evaluating rule: {shown}"
    if rule.message_program is not None:
        try:
            text = rule.message_program.evaluate_raw(activation)
        except CelEvaluationError:
            text = None
        if isinstance(text, str) and text.strip() and "\n" not in text:
            return False, text
    return False, rule.message or f"failed rule: {rule.source.strip()}"


def _error(schema: Schema, rule: Rule, path: Path, detail: str) -> FieldError:
    where = render_path(path, keys_in_brackets=True)
    if rule.field_path:
        where = (where + rule.field_path) if path else rule.field_path.lstrip(".")
    reason = rule.reason
    if reason in ("FieldValueRequired", "FieldValueForbidden"):
        return FieldError(where, ErrorType(reason), detail=detail)
    if reason == "FieldValueDuplicate":
        return FieldError(where, ErrorType.DUPLICATE, schema.type)
    return FieldError(where, ErrorType.INVALID, schema.type, detail)


def to_cel(schema: Schema, value: Any) -> Any:
    """``value`` as CEL sees it: declared property names escaped where needed."""
    if schema.cel_identity:
        return value
    if isinstance(value, dict):
        props = schema.properties
        additional = schema.additional
        out: dict[str, Any] = {}
        for key, sub in value.items():
            if props is not None and key in props:
                name = escape(key)
                if name is not None:
                    out[name] = to_cel(props[key], sub)
            elif additional is not None:
                out[key] = to_cel(additional, sub)
            else:
                out[key] = sub
        return out
    if isinstance(value, list) and schema.items is not None:
        return [to_cel(schema.items, v) for v in value]
    return value
