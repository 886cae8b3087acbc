"""What each cluster's claim holds, revision by revision, and when an old revision goes.

A revision change hydrates the new revision at its own path beside the old ones (cache.py):
running engines keep reading theirs. The cache's status records, per cluster, the revisions
hydrated there (``revisions``, the current one first), the weights hydrated at the claim's root
before revision paths (``unversioned``), and what is being removed (``pruning``).

A revision other than the current one is pruned only on evidence that nothing uses it: the
cache's ModelReplicas were read, every one of them on the cluster serves (none is between two
revisions), none reads it, and that held for ``PRUNE_AFTER`` reconciles in a row (``unused``
counts them: a list that lags is not evidence). Nothing is pruned on a cluster before the
current revision is hydrated there. The revision then moves to ``pruning`` (so no deployment
pins it any more), and from the next reconcile on, once that is recorded, a Job deletes its
marker, then its files; once the Job is complete the record drops it, and the Job goes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modelplane.compose.shared.cache import (
    CACHE_MOUNT_PATH,
    PRUNING,
    REVISIONS,
    UNVERSIONED,
    UNVERSIONED_FIELD,
    held_on,
    hydrated_marker,
    pinned_revision,
    replica_weights,
    revision_marker,
    revision_path,
    unversioned_on,
)
from modelplane.composer import namespace_of
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.scheduling.policy import is_serving

PRUNE_AFTER = 3
UNUSED = "unused"


@dataclass(frozen=True)
class Holding:
    """What one cluster's claim holds, as the cache's status records it."""

    revisions: tuple[str, ...] = ()
    unversioned: str | None = None
    pruning: tuple[str, ...] = ()
    unused: tuple[tuple[str, int], ...] = ()
    """Reconciles in a row each revision was seen unused."""

    def fields(self) -> Obj:
        out: Obj = {REVISIONS: list(self.revisions)}
        if self.unversioned:
            out[UNVERSIONED_FIELD] = self.unversioned
        if self.pruning:
            out[PRUNING] = list(self.pruning)
        if self.unused:
            out[UNUSED] = dict(self.unused)
        return out


def recorded(mc: Mapping[str, Any], cluster: str) -> Holding:
    entry = held_on(mc, cluster) or {}
    unused = entry.get(UNUSED) or {}
    return Holding(
        revisions=tuple(str(r) for r in entry.get(REVISIONS) or ()),
        unversioned=unversioned_on(mc, cluster),
        pruning=tuple(str(r) for r in entry.get(PRUNING) or ()),
        unused=tuple(sorted((str(k), int(v)) for k, v in unused.items()))
        if isinstance(unused, Mapping)
        else (),
    )


def hydrated(holding: Holding, revision: str) -> Holding:
    """``holding`` once ``revision`` is complete at its path."""
    rest = tuple(r for r in holding.revisions if r != revision)
    return dataclasses.replace(holding, revisions=(revision, *rest))


def by_cluster(replicas: Sequence[Obj] | None) -> dict[str, list[Obj]] | None:
    """The replicas listed by the cluster they stand on (None when they are not read): each
    cluster's revisions in use are read from its own replicas, not from every replica listed."""
    if replicas is None:
        return None
    out: dict[str, list[Obj]] = {}
    for replica in replicas:
        out.setdefault(str(objects.dig(replica, "spec", "clusterName")), []).append(replica)
    return out


def in_use(mc: Mapping[str, Any], cluster: str, replicas: Sequence[Obj] | None) -> set[str] | None:
    """The revisions the cache's replicas on ``cluster`` read, or None when that is not known:
    the replicas are not read, or one of them is not serving (its pods may be between two
    revisions)."""
    if replicas is None:
        return None
    name = str(mc["metadata"]["name"])
    used: set[str] = set()
    for replica in replicas:
        spec = objects.spec(replica)
        if objects.dig(spec, "modelCacheRef", "name") != name or spec.get("clusterName") != cluster:
            continue
        if namespace_of(replica) != namespace_of(mc):
            continue
        if not is_serving(replica):
            return None
        used.add(replica_weights(mc, pinned_revision(replica), cluster).revision)
    return used


def counted(holding: Holding, current: str, used: set[str] | None) -> Holding:
    """One more reconcile of evidence: each old revision unused again counts up, and one
    unused for PRUNE_AFTER reconciles moves to ``pruning``."""
    if used is None or holding.pruning or current not in holding.revisions:
        return dataclasses.replace(holding, unused=())
    before = dict(holding.unused)
    counts = {r: before.get(r, 0) + 1 for r in _old(holding, current) if r not in used}
    due = tuple(r for r, n in counts.items() if n >= PRUNE_AFTER)
    return Holding(
        revisions=tuple(r for r in holding.revisions if r not in due),
        unversioned=None if UNVERSIONED in due else holding.unversioned,
        pruning=due,
        unused=tuple(sorted((r, n) for r, n in counts.items() if r not in due)),
    )


def _old(holding: Holding, current: str) -> list[str]:
    """The revisions held besides ``current``, the unversioned download last."""
    old = [r for r in holding.revisions if r != current]
    if holding.unversioned:
        old.append(UNVERSIONED)
    return old


def prune_paths(mc: Mapping[str, Any], revisions: Sequence[str]) -> list[str]:
    """What removing ``revisions`` deletes, every marker before any file, so no engine starts
    on a revision half gone."""
    markers, trees = [], []
    for revision in revisions:
        if revision == UNVERSIONED:
            repo = str(mc["spec"]["huggingFace"]["repo"])
            markers.append(hydrated_marker(mc))
            trees.append(f"{CACHE_MOUNT_PATH}/models--{repo.replace('/', '--')}")
        else:
            markers.append(revision_marker(mc, revision))
            trees.append(revision_path(mc, revision))
    return [*markers, *trees]
