"""Every condition reason the composers can set, per kind, read from the code: each
``Condition(type, status, reason, ...)`` call's reason, followed through a module constant, a
local assignment (``"Failed" if failed else "Installing"``) or a parameter of the enclosing
function (every literal the module passes for it)."""

from __future__ import annotations

import ast
from pathlib import Path

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


def reasons() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {kind: set() for kind in [*KINDS.values(), *MODULES.values()]}
    for package, kind in KINDS.items():
        for path in sorted((SRC / package).rglob("*.py")):
            owner = MODULES.get(path.relative_to(SRC).as_posix(), kind)
            out[owner] |= _module_reasons(ast.parse(path.read_text()))
    return out


def _strings(node: ast.AST) -> set[str]:
    return {
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def _module_reasons(tree: ast.Module) -> set[str]:
    constants = {
        t.id: n.value
        for n in tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    functions = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    found: set[str] = set()
    for fn in functions.values():
        for call in ast.walk(fn):
            if not (isinstance(call, ast.Call) and _name(call.func) == "Condition"):
                continue
            arg = _reason_arg(call)
            if arg is not None:
                found |= _resolve(arg, fn, tree, constants)
    # A condition built once at module level (its reason a literal).
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            continue
        for call in ast.walk(node):
            if isinstance(call, ast.Call) and _name(call.func) == "Condition":
                arg = _reason_arg(call)
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.add(arg.value)
    return found


def _reason_arg(call: ast.Call) -> ast.AST | None:
    if len(call.args) >= 3:
        return call.args[2]
    return next((k.value for k in call.keywords if k.arg == "reason"), None)


def _resolve(arg: ast.AST, fn: ast.FunctionDef, tree: ast.Module, constants: dict) -> set[str]:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return {arg.value}
    if isinstance(arg, ast.IfExp):
        return _resolve(arg.body, fn, tree, constants) | _resolve(arg.orelse, fn, tree, constants)
    if not isinstance(arg, ast.Name):
        return _strings(arg)
    local = [
        n.value
        for n in ast.walk(fn)
        if isinstance(n, ast.Assign) and any(_name(t) == arg.id for t in n.targets)
    ]
    if local:
        return set().union(*(_strings(v) for v in local))
    params = [a.arg for a in fn.args.args]
    if arg.id in params:
        index = params.index(arg.id)
        passed: set[str] = set()
        for call in ast.walk(tree):
            if (
                isinstance(call, ast.Call)
                and _name(call.func) == fn.name
                and len(call.args) > index
            ):
                passed |= _resolve(call.args[index], fn, tree, constants)
        return passed
    if arg.id in constants:
        return _strings(constants[arg.id])
    raise AssertionError(f"cannot follow the reason {arg.id} in {fn.name}")


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""
