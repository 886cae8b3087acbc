"""The package's layers: imports only go down, and no composite kind reaches into another's.

cli -> commands (render, serve, validate, explain) -> function -> compose -> scheduling ->
kube, structs, labels, manifests. A module may import its own layer or any layer below; within
``compose``, a kind's package (``compose/<kind>/``) imports only itself and what the kinds
share (``compose/shared/``), which imports no kind's package. The scheduler is pure: it imports
nothing of protobuf, gRPC or the SDK, and nothing it reaches, directly or not, is the Struct
edge or a composer (the CEL runtime it evaluates selectors with keeps its own protobuf types,
below it). No module reaches itself through its imports, those inside functions included: a
circle only works while every import on it stays where it is.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

import modelplane

PACKAGE = Path(modelplane.__file__).parent

LAYERS: tuple[tuple[str, ...], ...] = (
    ("modelplane.cli", "modelplane.__main__"),
    (
        "modelplane.render",
        "modelplane.serve",
        "modelplane.validate",
        "modelplane.explain",
        "modelplane.explain_autoscaling",
        "modelplane.simulate",
        "modelplane.routes",
        "modelplane.usage",
    ),
    ("modelplane.function",),
    ("modelplane.compose", "modelplane.composer", "modelplane.observed"),
    ("modelplane.scheduling",),
    (
        "modelplane.kube",
        "modelplane.structs",
        "modelplane.wire",
        "modelplane.labels",
        "modelplane.manifests",
        "modelplane.apis",
        "modelplane",
    ),
)
KINDS = "modelplane.compose."
SHARED = "shared"
NOT_IN_THE_SCHEDULER = ("grpc", "google.protobuf", "crossplane")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@cache
def imports(module: str) -> frozenset[str]:
    """Every module ``module`` imports, at any depth of its code (lazy imports included)."""
    return imports_in(MODULES[module].read_text())


def imports_in(source: str) -> frozenset[str]:
    tree = ast.parse(source)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            # `from modelplane.compose import remote` imports a module, not a name: the package
            # counts only for the names it defines (its own modules import it on the way anyway).
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & MODULES.keys()
            found.update(submodules)
            if len(submodules) < len(node.names):
                found.add(node.module)
    return frozenset(found)


def circles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The import circles of ``graph``: each set of modules that all reach one another."""
    reach = {module: _reached(graph, module) for module in graph}
    return {
        frozenset(m for m in reach[module] if module in reach[m])
        for module in graph
        if module in reach[module]
    }


def _reached(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or not (itself only through a circle)."""
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return seen


def layer(module: str) -> int:
    best = max(
        (prefix for tier in LAYERS for prefix in tier if _within(module, prefix)),
        key=len,
    )
    return next(i for i, tier in enumerate(LAYERS) if best in tier)


def kind_of(module: str) -> str | None:
    """The composite kind whose package holds ``module``, if any (``compose/<kind>/...``);
    ``compose/shared/`` is what the kinds share, no kind's."""
    if not module.startswith(KINDS):
        return None
    rest = module[len(KINDS) :].split(".")
    return rest[0] if len(rest) > 1 and rest[0] != SHARED else None


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _internal(module: str) -> list[str]:
    return sorted(i for i in imports(module) if i in MODULES)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_only_go_down_the_layers(module: str) -> None:
    upward = [i for i in _internal(module) if layer(i) < layer(module)]
    assert not upward, f"{module} (layer {layer(module)}) imports from above: {upward}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if kind_of(m)))
def test_a_kind_imports_no_other_kinds_package(module: str) -> None:
    mine = kind_of(module)
    foreign = [i for i in _internal(module) if kind_of(i) not in (None, mine)]
    assert not foreign, f"{module} reaches into another kind's package: {foreign}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith(KINDS + SHARED)))
def test_what_the_kinds_share_imports_no_kinds_package(module: str) -> None:
    kinds = [i for i in _internal(module) if kind_of(i) is not None]
    assert not kinds, f"{module} is shared, yet reaches into a kind's package: {kinds}"


def test_the_scheduler_reaches_nothing_of_protobuf_grpc_or_composers() -> None:
    reached: set[str] = set()
    todo = [m for m in MODULES if _within(m, "modelplane.scheduling")]
    while todo:
        module = todo.pop()
        if module in reached:
            continue
        reached.add(module)
        todo.extend(_internal(module))
    assert not [m for m in reached if layer(m) < layer("modelplane.scheduling")]
    assert "modelplane.structs" not in reached
    own = [m for m in reached if _within(m, "modelplane.scheduling")]
    external = {i for m in own for i in imports(m) if i not in MODULES}
    assert not [i for i in external if any(_within(i, bad) for bad in NOT_IN_THE_SCHEDULER)]


def test_no_module_reaches_itself_through_its_imports() -> None:
    graph = {module: set(_internal(module)) for module in MODULES}
    found = circles(graph)
    assert not found, f"import circles: {sorted(sorted(c) for c in found)}"


def test_the_walk_sees_a_circle_through_a_lazy_import() -> None:
    # The check itself: a -> b at the top, b -> a inside a function, c beside them.
    graph = {"a": {"b"}, "b": {"a", "c"}, "c": set()}
    assert circles(graph) == {frozenset({"a", "b"})}
    lazy = "def f():\n    from modelplane.compose.shared import remote\n"
    assert imports_in(lazy) == {"modelplane.compose.shared.remote"}


def test_every_module_sits_in_a_layer() -> None:
    for module in MODULES:
        assert layer(module) >= 0


def test_the_walk_sees_an_upward_import() -> None:
    # The check itself: a compose module importing the function would be caught.
    assert layer("modelplane.function") < layer("modelplane.compose.registry")
    assert kind_of("modelplane.compose.modelreplica.pods") == "modelreplica"
    assert kind_of("modelplane.compose.shared.remote") is None
    assert kind_of("modelplane.compose.registry") is None
