"""The whole serving stack of one cluster: every component's composed resources, which
component each belongs to, and the order they must be deleted in."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from modelplane.compose.inferencecluster import fleetpriority
from modelplane.compose.inferencecluster.components import for_stack
from modelplane.compose.inferencecluster.gateway import (
    FLEET_COMPONENT,
    GATEWAY_COMPONENT,
    OUTLIVES,
    fleet_resources,
    gateway_resources,
)
from modelplane.compose.inferencecluster.target import MANAGED, Target
from modelplane.compose.inferencecluster.usages import deletion_order
from modelplane.kube.objects import Obj


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
    outlives: list[tuple[str, str]] = [*OUTLIVES, *fleetpriority.OUTLIVES]
    for component in for_stack(t.stack):
        setting = t.setting(component.field, component.version)
        version = setting.version if setting.managed else ""
        parts.append(Part(component.name, setting.mode, version, component.resources(t)))
        outlives.extend(component.outlives)
    gateway = {**gateway_resources(t), **fleetpriority.fleet_priority(t)}
    parts.append(Part(GATEWAY_COMPONENT, t.gateway.mode, "", gateway))
    if t.gateway.mode == MANAGED:
        parts.append(Part(FLEET_COMPONENT, MANAGED, "", fleet_resources(t)))
    return Stack(parts, outlives)


@dataclass(frozen=True)
class Built:
    """A cluster's stack with its resources and the Usages ordering their deletion: all that
    depends on the cluster's spec alone."""

    stack: Stack
    resources: dict[str, Obj]
    usages: dict[str, Obj]
    keys: list[tuple[str, ...]]
    """Each part's resource keys, in order."""


MEMO_SIZE = 256
"""Clusters whose stacks are kept: a cluster is recomposed on every reconcile (its status,
observed stack and replicas change; its spec rarely), and its stack is about 1,600 values."""
_built: OrderedDict[str, Built] = OrderedDict()


def built_for(t: Target) -> Built:
    """``t``'s stack, built once while it is among the last ``MEMO_SIZE`` used. Shared between
    calls: what it holds is read, never changed (the function writes it into its response,
    render copies it)."""
    key = repr(t)
    hit = _built.get(key)
    if hit is not None:
        _built.move_to_end(key)
        return hit
    stack = stack_for(t)
    resources = stack.resources()
    usages = deletion_order(t, resources, stack.outlives)
    keys = [tuple(sorted(p.resources)) for p in stack.parts]
    built = _built[key] = Built(stack, resources, usages, keys)
    if len(_built) > MEMO_SIZE:
        _built.popitem(last=False)
    return built
