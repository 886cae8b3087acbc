"""The composer contract's shared helpers."""

from __future__ import annotations

from modelplane.composer import namespace_of


def test_namespace_of_reads_the_objects_namespace() -> None:
    assert namespace_of({"metadata": {"name": "a", "namespace": "ml-team"}}) == "ml-team"


def test_namespace_of_defaults_like_the_api_server() -> None:
    assert namespace_of({"metadata": {"name": "a"}}) == "default"
    assert namespace_of({"metadata": {"name": "a", "namespace": ""}}) == "default"
    assert namespace_of({}) == "default"
