"""The rollout strategy: a changed template (or a change the function itself makes to what a
replica is stamped with) reaches the replicas a few at a time, as a Deployment's reaches pods.

A replica is *updated* when what it was last stamped with (``modelplane.ai/template-hash``)
is what the deployment stamps now. Each reconcile updates outdated replicas, lowest index
first, only while fewer than ``spec.rollout.maxUnavailable`` placed replicas are not serving:
an updated replica that has not come back serving holds the rollout, so it advances only as
updated replicas serve. Replicas below ``partition`` keep what they run; ``paused`` updates
none. An outdated replica is composed as it is observed, untouched.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modelplane.composer import Condition
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.labels import (
    MODEL_REVISION,
    PODS_REVISION,
    PRE_STOP_SECONDS,
    TEMPLATE_HASH,
    TERMINATION_GRACE,
)
from modelplane.reasons import ModelDeployment

ROLLED_OUT = ModelDeployment.ROLLED_OUT


@dataclass(frozen=True)
class Strategy:
    max_unavailable: int = 1
    max_surge: int = 0
    """Replicas placed beside outdated ones, make before break, where the fleet has room."""
    partition: int = 0
    paused: bool = False
    by_cluster: bool = False
    """Update every outdated replica of one cluster together, the next cluster only once no
    placed replica is left not serving (maxUnavailable does not apply)."""

    @classmethod
    def of(cls, md: Mapping[str, Any]) -> Strategy:
        spec = objects.mapping(md, "spec", "rollout")
        return cls(
            max_unavailable=int(spec.get("maxUnavailable", 1)),
            max_surge=int(spec.get("maxSurge", 0)),
            partition=int(spec.get("partition", 0)),
            paused=bool(spec.get("paused", False)),
            by_cluster=spec.get("unit") == "Cluster",
        )


STAMPED_ANNOTATIONS = (TERMINATION_GRACE, PRE_STOP_SECONDS, MODEL_REVISION, PODS_REVISION)
"""Annotations that reach the replica's pods: a change to them rolls out like the template."""


def template_hash(replica: Mapping[str, Any]) -> str:
    """What a replica is stamped with: its spec, labels and the annotations its pods read."""
    annotations = replica["metadata"].get("annotations") or {}
    stamped = {
        "spec": replica["spec"],
        "labels": replica["metadata"].get("labels") or {},
        "pods": {k: annotations[k] for k in STAMPED_ANNOTATIONS if k in annotations},
    }
    return hashlib.sha256(json.dumps(stamped, sort_keys=True).encode()).hexdigest()[:16]


def outdated(observed: Mapping[str, Any], stamped: Mapping[str, Any]) -> bool:
    """Whether the observed replica runs something other than ``stamped``. One stamped before
    replicas carried the hash is outdated only if it lacks or differs in something stamped
    (the API server adds defaults to what it holds)."""
    meta, annotations = objects.metadata(observed), objects.annotations(observed)
    was = annotations.get(TEMPLATE_HASH)
    if was is not None:
        return str(was) != stamped["metadata"]["annotations"][TEMPLATE_HASH]
    wanted = stamped["metadata"]["annotations"]
    return (
        not _holds(observed.get("spec"), stamped["spec"])
        or not _holds(meta.get("labels"), stamped["metadata"].get("labels") or {})
        or any(annotations.get(k) != wanted.get(k) for k in STAMPED_ANNOTATIONS)
    )


def _holds(observed: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        return isinstance(observed, Mapping) and all(
            k in observed and _holds(observed[k], v) for k, v in wanted.items()
        )
    if isinstance(wanted, list):
        return (
            isinstance(observed, Sequence)
            and not isinstance(observed, str)
            and len(observed) == len(wanted)
            and all(_holds(o, w) for o, w in zip(observed, wanted, strict=True))
        )
    return bool(observed == wanted)


@dataclass(frozen=True)
class Candidate:
    index: int
    key: str
    serving: bool
    cluster: str = ""
    pin: bool = False
    """Below the partition, it reads its cache unpinned: updated only to be pinned to what it
    reads (``weights.unpinned``), whatever the partition."""


def to_update(candidates: list[Candidate], strategy: Strategy, unavailable: int) -> set[str]:
    """The outdated replicas to update now; ``unavailable``: placed replicas not serving, new
    placements included.

    Outdated replicas that serve nothing go first, whatever the budget: updating them stops
    nothing, and one left outdated would spend the budget for good, so no serving replica
    would ever be updated (nor would the rollout say what holds it)."""
    if strategy.paused:
        return set()
    eligible = _eligible(candidates, strategy)
    idle = {c.key for c in eligible if not c.serving}
    serving = [c for c in eligible if c.serving]
    if strategy.by_cluster:
        if unavailable or not serving:
            return idle
        return idle | {c.key for c in serving if c.cluster == serving[0].cluster}
    budget = strategy.max_unavailable - unavailable
    return idle | {c.key for c in serving[: max(budget, 0)]}


def _eligible(candidates: list[Candidate], strategy: Strategy) -> list[Candidate]:
    """The candidates the partition lets through (and those only to be pinned), by index."""
    out = [c for c in candidates if c.index >= strategy.partition or c.pin]
    return sorted(out, key=lambda c: c.index)


@dataclass(frozen=True)
class Progress:
    updated: int
    serving: int
    remaining: int
    stalled: tuple[str, ...] = ()
    """Updated replicas that report ModelServing False: what holds the rollout."""
    partitioned: int = 0
    """Of ``remaining``, those below the partition."""
    surge: int = 0
    """Replicas placed beside outdated ones, not counted in ``updated`` until these leave."""
    no_room: bool = False
    """Nothing moves: no surge finds room and maxUnavailable allows no in-place update."""
    doomed: tuple[str, ...] = ()
    """Replicas whose delete a Usage refused, being replaced (``doomed.py``)."""

    def status(self) -> Obj:
        out = {"updated": self.updated, "serving": self.serving, "remaining": self.remaining}
        if self.surge:
            out["surge"] = self.surge
        return out

    def condition(self, strategy: Strategy) -> Condition:
        cond = self._condition(strategy)
        if not self.doomed:
            return cond
        line = (
            f"replacing {', '.join(self.doomed)}: a delete a Usage refused is replayed when "
            "the Usage goes (usage.crossplane.io/deletion-attempt-with-policy)"
        )
        return cond._replace(message=f"{cond.message}; {line}")

    def _stalled(self, counts: str) -> Condition:
        message = f"{counts}; held by updated replicas not serving: {', '.join(self.stalled)}"
        return Condition(ROLLED_OUT, "False", ModelDeployment.STALLED, message)

    def _updated(self, counts: str) -> Condition:
        """Nothing is left to update but below the partition: Complete (or, with replicas
        below the partition, PartitionReached) once every updated replica serves."""
        waiting = self.updated - self.serving
        if waiting <= 0 and not self.remaining:
            return Condition(ROLLED_OUT, "True", ModelDeployment.COMPLETE, counts)
        if waiting <= 0:
            # Complete up to the partition: every replica from it serves the current stamp and
            # every one below it is pinned, so a revision change moves none of them at once.
            message = f"{counts}; complete up to the partition: lower spec.rollout.partition"
            return Condition(ROLLED_OUT, "False", ModelDeployment.PARTITION_REACHED, message)
        if self.stalled:
            return self._stalled(counts)
        # Every replica carries the new template, but Complete means they serve it too.
        message = f"{counts}; waiting for {waiting} updated replica(s) to serve"
        return Condition(ROLLED_OUT, "False", ModelDeployment.PROGRESSING, message)

    def _condition(self, strategy: Strategy) -> Condition:
        pace = (
            "a cluster at a time"
            if strategy.by_cluster
            else f"maxSurge {strategy.max_surge}, maxUnavailable {strategy.max_unavailable}"
        )
        surge = f", {self.surge} surging beside them" if self.surge else ""
        counts = (
            f"{self.updated} updated ({self.serving} serving), {self.remaining} to update"
            f"{surge} ({pace}, partition {strategy.partition})"
        )
        if self.partitioned == self.remaining:
            return self._updated(counts)
        if strategy.paused:
            message = f"{counts}; spec.rollout.paused"
            return Condition(ROLLED_OUT, "False", ModelDeployment.PAUSED, message)
        if self.no_room:
            message = (
                f"{counts}; the fleet has no room for a surge replica and maxUnavailable "
                f"{strategy.max_unavailable} allows no serving replica to stop: add capacity "
                "or raise spec.rollout.maxUnavailable"
            )
            return Condition(ROLLED_OUT, "False", ModelDeployment.STALLED, message)
        if self.stalled:
            return self._stalled(counts)
        return Condition(ROLLED_OUT, "False", ModelDeployment.PROGRESSING, counts)


_GENERATION = re.compile(r"generation (\d+): ")


def at_generation(rolled_out: Condition, generation: int | None) -> Condition:
    """``RolledOut``, its message first naming the generation it describes.

    Crossplane writes a function's composite status and its conditions in two writes: the
    status (``status.rollout`` with its ``observedGeneration``) by a server-side apply that
    carries the conditions as they were, then the conditions by a status update at the end of
    the reconcile (crossplane v2.3.4, internal/controller/apiextensions/composite:
    composition_functions.go ``Compose``, reconciler.go ``Reconcile``), and it stamps no
    generation on a function's condition. Between the writes, or until the next reconcile if
    the second fails, ``observedGeneration`` names the edit while ``RolledOut`` still says
    what it said of the template before. Only what the condition itself carries is written
    with it."""
    if generation is None:
        return rolled_out
    return rolled_out._replace(message=f"generation {generation}: {rolled_out.message}")


def described_generation(message: str) -> int | None:
    """The generation a ``RolledOut`` message describes (``at_generation``), if it names one."""
    match = _GENERATION.match(message)
    return int(match.group(1)) if match else None
