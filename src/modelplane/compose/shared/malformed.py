"""What is wrong with a required or observed resource no composer can read: not an object, no
metadata, no name. Crossplane hands over what the API server stored, so this is rare (a
hand-written render input, a resource of another kind answering a requirement), and the user
is told which requirement, which item and what is wrong, never a composer's bare exception.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from modelplane.composer import Inputs
from modelplane.structs import StructView


def malformed(inputs: Inputs, *, views: bool) -> str | None:
    """The first required resource that is not an object with ``metadata.name``, or observed one
    without metadata, said with its requirement and index (or its composition resource name).
    Observed resources are always checked (a composer that skips one would leave it out, and
    Crossplane would delete it); ``views``: check required resources read as views too, not only
    plain data (each costs microseconds on a fleet's thousands; the function checks them only
    once a composer has failed)."""
    for name, items in sorted(inputs.required.items()):
        for i, item in enumerate(items):
            problem = _problem(item, views)
            if problem:
                return f"required resource {name}[{i}] is malformed: {problem}"
    for key, obj in sorted(inputs.observed.items()):
        problem = _problem(obj, True, named=False)
        if problem:
            return f"observed resource {key!r} is malformed: {problem}"
    return None


def _problem(item: Any, views: bool, named: bool = True) -> str:
    """``named``: whether ``metadata.name`` is required (an observed resource is known by its
    composition resource name; one given to ``render`` may carry no other)."""
    if isinstance(item, StructView) and not views:
        return ""
    if not isinstance(item, Mapping):
        return f"it is {_a(item)}, not an object"
    meta = item.get("metadata")
    if meta is None:
        return "it has no metadata"
    if not isinstance(meta, Mapping):
        return f"metadata is {_a(meta)}, not an object"
    name = meta.get("name")
    if not named and name is None:
        return ""
    if not isinstance(name, str) or not name:
        return "metadata.name is missing" if name is None else f"metadata.name is {_a(name)}"
    return ""


def _a(value: Any) -> str:
    if isinstance(value, str):
        return "a string" if value else "an empty string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, Iterable):
        return "a list"
    return type(value).__name__


__all__ = ["malformed"]
