"""The whole serving stack of one cluster: every component's composed resources, which
component each belongs to, and the order they must be deleted in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from modelplane.compose.inferencecluster.components import for_stack
from modelplane.compose.inferencecluster.gateway import (
    FLEET_COMPONENT,
    GATEWAY_COMPONENT,
    OUTLIVES,
    fleet_resources,
    gateway_resources,
)
from modelplane.compose.inferencecluster.target import MANAGED, Target

Obj = dict[str, Any]


@dataclass(frozen=True)
class Part:
    """One component as composed for a cluster."""

    name: str
    mode: str
    version: str
    resources: dict[str, Obj]


@dataclass(frozen=True)
class Stack:
    parts: list[Part]
    outlives: list[tuple[str, str]] = field(default_factory=list)

    def resources(self) -> dict[str, Obj]:
        return {k: v for p in self.parts for k, v in p.resources.items()}


def stack_for(t: Target) -> Stack:
    parts = []
    outlives: list[tuple[str, str]] = list(OUTLIVES)
    for component in for_stack(t.stack):
        setting = t.setting(component.field, component.version)
        version = setting.version if setting.managed else ""
        parts.append(Part(component.name, setting.mode, version, component.resources(t)))
        outlives.extend(component.outlives)
    parts.append(Part(GATEWAY_COMPONENT, t.gateway.mode, "", gateway_resources(t)))
    if t.gateway.mode == MANAGED:
        parts.append(Part(FLEET_COMPONENT, MANAGED, "", fleet_resources(t)))
    return Stack(parts, outlives)
