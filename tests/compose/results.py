"""Reading a composer's Result in a test: the composed resources as plain objects, the remote
manifest a provider-kubernetes Object carries (one, or every one), and one condition by type."""

from __future__ import annotations

from typing import Any

from modelplane.composer import Result
from modelplane.kube.objects import Obj


def resources(result: Result) -> dict[str, Obj]:
    """Each composed resource, by composition resource name."""
    return {k: d.resource for k, d in result.resources.items()}


def manifest(obj: Obj) -> Obj:
    """The remote manifest inside a wrapped provider-kubernetes Object."""
    return obj["spec"]["forProvider"]["manifest"]


def manifests(result: Result) -> dict[str, Obj]:
    """Each composed Object's remote manifest, by composition resource name."""
    return {
        k: manifest(d.resource)
        for k, d in result.resources.items()
        if d.resource.get("kind") == "Object"
    }


def condition(result: Result, type_: str) -> Any:
    """The result's condition of type ``type_`` (StopIteration when it sets none)."""
    return next(c for c in result.conditions if c.type == type_)
