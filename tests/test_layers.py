"""The package's layers: imports only go down, and no composite kind reaches into another's.

cli -> commands (render, serve, validate, explain) -> function -> compose -> scheduling ->
kube, structs, labels, manifests. A module may import its own layer or any layer below; within
``compose``, a kind's package (``compose/<kind>/``) imports only itself and what every kind
shares at ``compose/`` level. The scheduler is pure: it imports nothing of protobuf, gRPC or
the SDK, and nothing it reaches, directly or not, is the Struct edge or a composer (the CEL
runtime it evaluates selectors with keeps its own protobuf types, below it).
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
        "modelplane.simulate",
        "modelplane.routes",
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
NOT_IN_THE_SCHEDULER = ("grpc", "google.protobuf", "crossplane")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@cache
def imports(module: str) -> frozenset[str]:
    """Every module ``module`` imports, at any depth of its code (lazy imports included)."""
    tree = ast.parse(MODULES[module].read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            # `from modelplane.compose import remote` imports a module, not a name.
            found.update(
                f"{node.module}.{alias.name}"
                for alias in node.names
                if f"{node.module}.{alias.name}" in MODULES
            )
    return frozenset(found)


def layer(module: str) -> int:
    best = max(
        (prefix for tier in LAYERS for prefix in tier if _within(module, prefix)),
        key=len,
    )
    return next(i for i, tier in enumerate(LAYERS) if best in tier)


def kind_of(module: str) -> str | None:
    """The composite kind whose package holds ``module``, if any (``compose/<kind>/...``)."""
    if not module.startswith(KINDS):
        return None
    rest = module[len(KINDS) :].split(".")
    return rest[0] if len(rest) > 1 else None


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


def test_every_module_sits_in_a_layer() -> None:
    for module in MODULES:
        assert layer(module) >= 0


def test_the_walk_sees_an_upward_import() -> None:
    # The check itself: a compose module importing the function would be caught.
    assert layer("modelplane.function") < layer("modelplane.compose.registry")
    assert kind_of("modelplane.compose.modelreplica.pods") == "modelreplica"
    assert kind_of("modelplane.compose.remote") is None
