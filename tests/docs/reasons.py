"""Every condition reason the composers can set, per kind, read from the code: each
``Condition(type, status, reason, ...)`` call's reason, followed through a local assignment
(``FAILED if failed else INSTALLING``), a parameter of the enclosing function (every value the
module passes for it) or a module constant, down to a constant of modelplane.reasons. A reason
written as a string literal anywhere on that path is reported: it would be set without a row in
the troubleshooting tables."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from modelplane import reasons as declared

SRC = Path(__file__).resolve().parents[2] / "src" / "modelplane" / "compose"
KINDS = {
    "inferenceclass": "InferenceClass",
    "inferencecluster": "InferenceCluster",
    "inferencegateway": "InferenceGateway",
    "modelcache": "ModelCache",
    "modeldeployment": "ModelDeployment",
    "modelendpoint": "ModelEndpoint",
    "modelreplica": "ModelReplica",
    "modelservice": "ModelService",
}
MODULES = {"inferencegateway/shard.py": "InferenceGatewayShard"}
"""A kind composed by a module of another kind's package."""


@dataclass
class Found:
    """The reasons a kind's modules set, and every string literal found where one was due."""

    reasons: dict[str, set[str]] = field(default_factory=dict)
    literals: list[str] = field(default_factory=list)


def scan() -> Found:
    found = Found({kind: set() for kind in [*KINDS.values(), *MODULES.values()]})
    for package, kind in KINDS.items():
        for path in sorted((SRC / package).rglob("*.py")):
            rel = path.relative_to(SRC).as_posix()
            module = Module(ast.parse(path.read_text()), rel)
            found.reasons[MODULES.get(rel, kind)] |= module.reasons()
            found.literals += module.literals
    return found


def reasons() -> dict[str, set[str]]:
    return scan().reasons


class Module:
    def __init__(self, tree: ast.Module, path: str) -> None:
        self.tree, self.path = tree, path
        self.literals: list[str] = []
        self.constants = {
            t.id: n.value
            for n in tree.body
            if isinstance(n, ast.Assign)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        # The names this module imports from modelplane.reasons, by the name it uses.
        self.kinds = {
            a.asname or a.name: getattr(declared, a.name)
            for n in tree.body
            if isinstance(n, ast.ImportFrom) and n.module == "modelplane.reasons"
            for a in n.names
        }

    def reasons(self) -> set[str]:
        found: set[str] = set()
        for fn in [n for n in ast.walk(self.tree) if isinstance(n, ast.FunctionDef)]:
            for call in ast.walk(fn):
                if isinstance(call, ast.Call) and _name(call.func) == "Condition":
                    arg = _reason_arg(call)
                    if arg is not None:
                        found |= self.resolve(arg, fn)
        # A condition built once at module level.
        for node in self.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                continue
            for call in ast.walk(node):
                if isinstance(call, ast.Call) and _name(call.func) == "Condition":
                    arg = _reason_arg(call)
                    if arg is not None:
                        found |= self.resolve(arg, None)
        return found

    def resolve(self, arg: ast.AST, fn: ast.FunctionDef | None) -> set[str]:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            self.literals.append(f"{self.path}:{arg.lineno}: {arg.value!r}")
            return {arg.value}
        if isinstance(arg, ast.IfExp):
            return self.resolve(arg.body, fn) | self.resolve(arg.orelse, fn)
        if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name):
            kind = self.kinds.get(arg.value.id)
            if kind is not None and isinstance(getattr(kind, arg.attr, None), str):
                return {getattr(kind, arg.attr)}
        if isinstance(arg, ast.Name):
            return self._name(arg.id, fn)
        raise AssertionError(
            f"{self.path}:{arg.lineno}: cannot follow the reason {ast.unparse(arg)}"
        )

    def _name(self, name: str, fn: ast.FunctionDef | None) -> set[str]:
        if fn is not None:
            local = [
                n.value
                for n in ast.walk(fn)
                if isinstance(n, ast.Assign) and any(_name(t) == name for t in n.targets)
            ]
            if local:
                return set().union(*(self.resolve(v, fn) for v in local))
            params = [a.arg for a in fn.args.args]
            if name in params:
                return self._passed(fn, params.index(name), name)
        if name in self.constants:
            return self.resolve(self.constants[name], None)
        raise AssertionError(f"{self.path}: cannot follow the reason {name}")

    def _passed(self, fn: ast.FunctionDef, index: int, name: str) -> set[str]:
        """Every value this module passes ``fn`` for its parameter ``name``."""
        passed: set[str] = set()
        for call in ast.walk(self.tree):
            if not (isinstance(call, ast.Call) and _name(call.func) == fn.name):
                continue
            given = [k.value for k in call.keywords if k.arg == name]
            given += call.args[index : index + 1]
            for value in given:
                caller = _enclosing(self.tree, call)
                passed |= self.resolve(value, caller)
        return passed


def _enclosing(tree: ast.Module, node: ast.AST) -> ast.FunctionDef | None:
    """The innermost function holding ``node``, None at module level."""
    holders = [
        fn
        for fn in ast.walk(tree)
        if isinstance(fn, ast.FunctionDef) and any(n is node for n in ast.walk(fn))
    ]
    return min(holders, key=lambda fn: fn.end_lineno - fn.lineno, default=None)


def _reason_arg(call: ast.Call) -> ast.AST | None:
    if len(call.args) >= 3:
        return call.args[2]
    return next((k.value for k in call.keywords if k.arg == "reason"), None)


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""
