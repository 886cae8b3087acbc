"""Every example engine that loads a gated Hugging Face repository reads a token for it: without
one the download is refused (401) and the engine never starts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GATED = ("meta-llama/",)
"""Organisations whose repositories ask each user to accept a licence before downloading."""


def _containers(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        if "image" in node and "name" in node:
            yield node
        for value in node.values():
            yield from _containers(value)
    elif isinstance(node, list):
        for item in node:
            yield from _containers(item)


def _loading_gated() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(EXAMPLES.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            for container in _containers(doc):
                said = " ".join(
                    map(str, [*container.get("command", []), *container.get("args", [])])
                )
                if any(org in said for org in GATED):
                    out.append((f"{path.relative_to(EXAMPLES)}:{container['name']}", container))
    return out


GATED_ENGINES = _loading_gated()


def test_the_examples_load_gated_repositories() -> None:
    assert len(GATED_ENGINES) >= 4


@pytest.mark.parametrize(
    "container", [c for _, c in GATED_ENGINES], ids=[i for i, _ in GATED_ENGINES]
)
def test_an_engine_loading_a_gated_repository_reads_a_token_from_a_secret(
    container: dict[str, Any],
) -> None:
    env = {e["name"]: e for e in container.get("env") or []}
    assert "secretKeyRef" in env["HF_TOKEN"]["valueFrom"]
