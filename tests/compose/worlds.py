"""What the fault properties share: a world (a composite, the required resources as they truly
are, what an earlier reconcile composed) and the ways a required list departs from the truth.

Per requirement: intact; missing (not fetched yet: absent from the request); empty (fetched,
nothing listed: every object deleted, or a list that failed); stale (some items listed without
their status); synced (some items whose status holds only Crossplane's Synced condition);
lagging (some items not listed, only where ``World.partial`` says a list may lag what the
composite stands on).

A composer asks for what a list no longer holds by name; ``answer_by_name`` answers as the API
server would (a GET is never stale), or leaves it unanswered (not fetched yet).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

Obj = dict[str, Any]


@dataclass(frozen=True)
class World:
    composite: Obj
    required: dict[str, list[Obj]]
    observed: dict[str, Obj]
    partial: frozenset[str] = frozenset()
    """Requirements whose list may lag: lack some of its items."""
    own: str | None = None
    """The requirement listing the composite's own composed objects (a deployment's replicas)."""


SYNCED = {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"}


def truly(world: World, kind: str, name: str, namespace: str | None) -> list[Obj]:
    """What asking the API server for one object by name returns in ``world``."""
    for items in world.required.values():
        for item in items:
            meta = item.get("metadata") or {}
            if (
                item.get("kind") == kind
                and meta.get("name") == name
                and (namespace is None or meta.get("namespace", "default") == namespace)
            ):
                return [copy.deepcopy(item)]
    return []


@st.composite
def degraded_required(draw: st.DrawFn, world: World) -> dict[str, list[Obj] | None]:
    """The world's required resources as one request may carry them (None: not fetched)."""
    required: dict[str, list[Obj] | None] = {}
    modes = ["intact", "missing", "empty", "stale", "synced"]
    for name, items in world.required.items():
        mode = draw(st.sampled_from([*modes, "lagging"] if name in world.partial else modes))
        if mode == "missing":
            required[name] = None
        elif mode == "empty":
            required[name] = []
        elif mode == "lagging":
            keep = draw(st.lists(st.booleans(), min_size=len(items), max_size=len(items)))
            required[name] = [copy.deepcopy(i) for i, k in zip(items, keep, strict=True) if k]
        elif mode == "synced":
            synced = draw(st.lists(st.booleans(), min_size=len(items), max_size=len(items)))
            required[name] = [
                {**i, "status": {"conditions": [SYNCED]}} if s else i
                for i, s in zip(copy.deepcopy(items), synced, strict=True)
            ]
        elif mode == "stale":
            stale = draw(st.lists(st.booleans(), min_size=len(items), max_size=len(items)))
            required[name] = [
                {k: v for k, v in i.items() if not s or k != "status"}
                for i, s in zip(copy.deepcopy(items), stale, strict=True)
            ]
        else:
            required[name] = copy.deepcopy(items)
    return required
