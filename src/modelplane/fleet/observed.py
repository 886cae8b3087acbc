"""Carrying observed composed resources forward: a composer that cannot decide deletes nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.composer import Desired

Obj = dict[str, Any]
_METADATA_KEPT = ("name", "namespace", "labels", "annotations")


def carried(observed: Obj) -> Obj:
    """The desired form of an observed resource: what was applied, without server-owned fields."""
    metadata = observed.get("metadata") or {}
    out: Obj = {
        "apiVersion": observed.get("apiVersion"),
        "kind": observed.get("kind"),
        "metadata": {k: metadata[k] for k in _METADATA_KEPT if k in metadata},
    }
    if "spec" in observed:
        out["spec"] = observed["spec"]
    return out


def carry_forward(observed: Mapping[str, Obj]) -> dict[str, Desired]:
    return {name: Desired(carried(obj)) for name, obj in sorted(observed.items())}
