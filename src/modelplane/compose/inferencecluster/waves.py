"""Upgrades of the serving stack's default versions, rolled out across the fleet in waves.

A component without a pinned version is installed at Modelplane's tested default, so a release
of Modelplane that moves a default would otherwise upgrade every such cluster within a poll.
A cluster labelled ``modelplane.ai/stack-wave`` (a decimal from 0) belongs to that wave and
takes the new defaults only once every cluster of the wave before it (only those, read by that
label) publishes the new stack revision with ``StackReady`` True; wave 0 and an unlabelled
cluster (in no wave) take them at once. Until then, or while
``spec.servingStack.rollout.paused`` is set, it keeps the version each component's Release or
Object was last composed at, as observed: evidence of what runs, so a list not read yet or a
status not written yet neither upgrades nor downgrades anything. A
component with nothing observed yet is installed at the default (nothing runs to keep).

The revision a cluster publishes (``status.servingStack.revision``) names Modelplane's defaults;
it publishes the current one only once its gate is open and each of its unpinned components
reports, from the provider, the default version installed (a Release's
``status.atProvider.version``, provider-helm v1.4.0 ``generateObservation``; the bundle version
of the CRD an Object applied), so the wave after it never starts on a stale Ready. Pinned and
External components are outside the revision: a cluster that pins versions is unaffected.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from modelplane.apis import API_VERSION
from modelplane.compose.inferencecluster import components
from modelplane.compose.inferencecluster.crds import BUNDLES
from modelplane.compose.inferencecluster.releases import composed_version, installed_version
from modelplane.compose.inferencecluster.target import MANAGED, Setting, Target
from modelplane.composer import Condition, Requirement
from modelplane.kube import objects
from modelplane.labels import STACK_COMPONENT, STACK_WAVE
from modelplane.reasons import InferenceCluster

PREVIOUS_WAVE = "stack-wave-previous"
"""The requirement listing the clusters of the wave before this cluster's."""
STACK_UP_TO_DATE = InferenceCluster.STACK_UP_TO_DATE
_NAMED_MAX = 5


def revision() -> str:
    """The stack revision of this Modelplane: a digest of every component's default version."""
    return _revision(tuple((c.name, c.version) for c in components.INSTALLED))


@functools.cache
def _revision(defaults: tuple[tuple[str, str], ...]) -> str:
    text = ",".join(f"{name}={version}" for name, version in defaults)
    return "r" + hashlib.sha256(text.encode()).hexdigest()[:10]


@dataclass(frozen=True)
class Change:
    component: str
    running: str
    """The version observed composed ("" when nothing is observed yet)."""
    default: str


@dataclass(frozen=True)
class Plan:
    """What a cluster composes of Modelplane's defaults this reconcile, and why."""

    target: Target
    """The cluster's target with every Managed component's version resolved."""
    requirement: Requirement | None
    open: bool
    """Whether the new defaults may be composed (the wave before is done, not paused)."""
    waiting: str
    """Why not, when not open: the message of the condition."""
    invalid: bool
    """The wave label is not a wave number."""
    paused: bool
    changes: tuple[Change, ...]
    """Unpinned components observed at another version than the default."""
    not_installed: tuple[Change, ...]
    """Unpinned components not yet reported installed at their default."""


def plan(
    cluster: Mapping[str, Any],
    t: Target,
    observed: Mapping[str, Mapping[str, Any]],
    previous: Sequence[Mapping[str, Any]] | None,
) -> Plan:
    """``previous``: the clusters of the wave before (None: not read yet)."""
    gate = _gate(cluster, previous)
    open_ = not gate.waiting
    resolved = _resolve(t, observed, open_)
    return Plan(
        replace(t, settings=resolved.settings),
        gate.requirement,
        open_,
        gate.waiting,
        gate.invalid,
        gate.paused,
        resolved.changes,
        resolved.not_installed,
    )


@dataclass(frozen=True)
class _Gate:
    """Whether the cluster's wave may take the new defaults: why not ("": it may), and the
    requirement listing the wave before (None: it is in no wave, or wave 0)."""

    requirement: Requirement | None
    waiting: str
    invalid: bool
    paused: bool


def _gate(cluster: Mapping[str, Any], previous: Sequence[Mapping[str, Any]] | None) -> _Gate:
    wave, invalid = _wave(cluster)
    requirement = None
    if wave:
        requirement = Requirement(
            API_VERSION, "InferenceCluster", match_labels={STACK_WAVE: str(wave - 1)}
        )
    paused = bool(objects.dig(cluster, "spec", "servingStack", "rollout", "paused"))
    if invalid:
        waiting = invalid
    elif paused:
        waiting = "spec.servingStack.rollout.paused is set"
    elif wave:
        waiting = _previous_wave(wave - 1, previous)
    else:
        waiting = ""
    return _Gate(requirement, waiting, bool(invalid), paused)


@dataclass(frozen=True)
class _Resolved:
    """Every component's setting with the version it composes at, and the unpinned components
    observed at another version than the default or not yet reported installed at it."""

    settings: dict[str, Setting]
    changes: tuple[Change, ...]
    not_installed: tuple[Change, ...]


def _pinned(found: Setting | None) -> bool:
    return found is not None and (not found.managed or bool(found.version))


def _resolve(t: Target, observed: Mapping[str, Mapping[str, Any]], open_: bool) -> _Resolved:
    """Each unpinned Managed component at the default, or (the gate closed) at the version it
    was last composed at, as observed."""
    versioned = _versioned(observed)
    settings = dict(t.settings)
    changes = []
    not_installed = []
    for component in components.for_stack(t.stack):
        found = t.settings.get(component.field)
        if _pinned(found):
            continue  # pinned or External: not Modelplane's default to roll
        objs = versioned.get(component.name, ())
        installed = [installed_version(obj) for obj in objs] or [""]
        if any(v != component.version for v in installed):
            not_installed.append(Change(component.name, installed[0], component.version))
        # The version it was last composed at, as observed.
        running = composed_version(objs[0]) if objs else ""
        version = component.version
        if not open_ and running and _composable(component, running):
            version = running
        if running and running != component.version:
            changes.append(Change(component.name, running, component.version))
        spec = found.spec if found is not None else {}
        settings[component.field] = Setting(MANAGED, version, spec)
    return _Resolved(settings, tuple(changes), tuple(not_installed))


def published_revision(cluster: Mapping[str, Any], p: Plan, stack_ready: bool) -> str:
    """The revision the cluster publishes: the current one once its gate is open, its stack is
    ready and every unpinned component reports the default installed; else the last published."""
    if p.open and stack_ready and not p.not_installed:
        return revision()
    return str(objects.dig(cluster, "status", "servingStack", "revision") or "")


def up_to_date(p: Plan, published: str) -> Condition:
    current = revision()
    if published == current:
        message = (
            f"stack revision {current}: every component without a pinned version runs "
            "Modelplane's default"
        )
        return Condition(STACK_UP_TO_DATE, "True", InferenceCluster.UP_TO_DATE, message)
    held = _changes(p.changes)
    if not p.open:
        keeps = f"keeping {held}" if held else "nothing to change here"
        reason = InferenceCluster.PAUSED if p.paused else InferenceCluster.WAITING_FOR_WAVE
        if p.invalid:
            reason = InferenceCluster.INVALID_WAVE
        message = f"{p.waiting}: {keeps}; revision {current} is not published until it proceeds"
        return Condition(STACK_UP_TO_DATE, "False", reason, message)
    installing = p.not_installed
    detail = f"installing {_changes(installing)}" if installing else "waiting for StackReady"
    message = (
        f"upgrading to stack revision {current}: {detail}; published once every component "
        "reports its version installed and StackReady is True"
    )
    return Condition(STACK_UP_TO_DATE, "False", InferenceCluster.UPGRADING, message)


def _wave(cluster: Mapping[str, Any]) -> tuple[int, str]:
    value = objects.labels(cluster).get(STACK_WAVE)
    if value is None:
        return 0, ""
    text = str(value)
    if not text.isdigit() or len(text) > 6:
        return 0, (
            f"label {STACK_WAVE}: {text!r} is not a wave number (a decimal from 0); the stack "
            "keeps the versions it runs until the label is fixed"
        )
    return int(text), ""


def _previous_wave(wave: int, clusters: Sequence[Mapping[str, Any]] | None) -> str:
    selector = f"{STACK_WAVE}={wave}"
    if clusters is None:
        return f"reading the InferenceClusters labelled {selector}"
    if not clusters:
        # Not evidence that the wave is done: waves number one after another.
        return (
            f"no InferenceCluster labelled {selector} is listed (waves follow one another "
            "from 0, without gaps)"
        )
    current = revision()
    behind = sorted(str(c["metadata"]["name"]) for c in clusters if not _done(c, current))
    if not behind:
        return ""
    named = ", ".join(behind[:_NAMED_MAX]) + (", ..." if len(behind) > _NAMED_MAX else "")
    return (
        f"{len(behind)} of {len(clusters)} clusters of wave {wave} ({selector}) not yet on "
        f"stack revision {current} with StackReady True: {named}"
    )


def _done(cluster: Mapping[str, Any], current: str) -> bool:
    stack = objects.mapping(cluster, "status", "servingStack")
    ready = objects.condition(cluster, InferenceCluster.STACK_READY)
    return stack.get("revision") == current and objects.dig(ready, "status") == "True"


def _changes(changes: Sequence[Change]) -> str:
    return ", ".join(f"{c.component} {c.running or '(none)'} -> {c.default}" for c in changes)


def _versioned(
    observed: Mapping[str, Mapping[str, Any]],
) -> dict[str, tuple[Mapping[str, Any], ...]]:
    """Each component's observed Releases and CRD-bundle Objects, in key order: read once."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for _key, obj in sorted(observed.items()):
        component = objects.labels(obj).get(STACK_COMPONENT)
        if component and composed_version(obj):
            out.setdefault(str(component), []).append(obj)
    return {component: tuple(objs) for component, objs in out.items()}


def _composable(component: components.Component, version: str) -> bool:
    # Only the CRD bundles Modelplane ships can be applied; every one shipped stays shipped.
    return component.field != "inferenceExtension" or version in BUNDLES
