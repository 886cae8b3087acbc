"""Which revision of its ModelCache each replica reads: the deployment pins it on the replica
(the ``modelplane.ai/model-revision`` annotation, among what the rollout stamps), so a revision
change is a change to what replicas are stamped with and reaches them by the rollout strategy,
like a new image.

The cache's revision is stamped only once the cache reports it hydrated on every cluster the
deployment's replicas are placed on; until then each replica keeps the revision it reads, and a
replica placed anew reads what most of the others read (if its cluster holds it), so serving
replicas never read two revisions but in the steps the rollout takes. The ``RolledOut``
condition says what the rollout waits for.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from modelplane.compose.shared.cache import cache_revision, hydrated_revisions, resolved_commit
from modelplane.compose.shared.cache import pinned_revision as _pinned
from modelplane.composer import Condition
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.labels import MODEL_REVISION
from modelplane.reasons import ModelDeployment
from modelplane.structs import plain


@dataclass(frozen=True)
class Pinning:
    cache: Mapping[str, Any] | None = None
    hydrating: tuple[str, ...] = ()
    """Clusters with placed replicas where the cache's revision is not hydrated yet."""
    usual: str | None = None
    """The revision most of the observed replicas are pinned to (None: unpinned)."""
    peers: bool = False
    """Whether any replica of the cache is observed (a new deployment has none)."""

    def revision_for(self, cluster: str, observed: Obj | None) -> str | None:
        assert self.cache is not None
        if not self.hydrating:
            return cache_revision(self.cache)
        if observed is not None and _ref(observed).get("name") == objects.name(self.cache):
            return _pinned(observed)
        if self.peers and (
            self.usual is None or self.usual in hydrated_revisions(self.cache, cluster)
        ):
            return self.usual
        # Not resolved yet: no commit to pin; the replica is pinned once there is one.
        return resolved_commit(self.cache)

    def held(self, rolled_out: Condition) -> Condition:
        """The rollout's condition, saying it waits for the revision while it does."""
        if self.cache is None or not self.hydrating:
            return rolled_out
        where = ", ".join(self.hydrating)
        state = "hydrated yet on" if resolved_commit(self.cache) else "resolved to a commit for"
        message = (
            f"revision {cache_revision(self.cache)} of ModelCache {objects.name(self.cache)} is "
            f"not {state} {where}: replicas keep the revision they read until it is "
            f"hydrated on every cluster they run on; {rolled_out.message}"
        )
        return Condition(rolled_out.type, "False", ModelDeployment.WAITING_FOR_REVISION, message)


def pinning(
    cache: Mapping[str, Any] | None, clusters: Iterable[str], observed: Iterable[Obj]
) -> Pinning:
    if cache is None:
        return Pinning()
    # A branch or tag not resolved yet is hydrated nowhere: every cluster waits for its commit.
    revision = resolved_commit(cache)
    hydrating = sorted({c for c in clusters if revision not in hydrated_revisions(cache, c)})
    pins = Counter(_pinned(o) for o in observed if _ref(o).get("name") == objects.name(cache))
    usual = min(pins, key=lambda p: (-pins[p], p or "")) if pins else None
    return Pinning(cache, tuple(hydrating), usual, bool(pins))


def pin(replica: Obj, observed: Obj | None, weights: Pinning) -> None:
    """Stamp ``replica`` with the revision it reads; while its cache is not read, with the one
    it was stamped with (a cache not read is no reason to move it)."""
    ref = replica["spec"].get("modelCacheRef")
    if ref is None:
        return
    if weights.cache is not None and ref.get("name") == objects.name(weights.cache):
        revision = weights.revision_for(str(replica["spec"]["clusterName"]), observed)
    elif observed is not None and _ref(observed).get("name") == ref.get("name"):
        revision = _pinned(observed)
    else:
        revision = None
    annotations = replica["metadata"].setdefault("annotations", {})
    annotations.pop(MODEL_REVISION, None)
    if revision is not None:
        annotations[MODEL_REVISION] = revision


def _ref(replica: Mapping[str, Any]) -> Mapping[str, Any]:
    return objects.mapping(replica, "spec", "modelCacheRef")


def unpinned(observed: Obj, weights: Pinning) -> Obj | None:
    """The observed replica pinned to the revision its cache would pin it to now, as it runs
    otherwise, when it reads its cache unpinned (placed before the cache's revision resolved);
    None when it is pinned, reads another cache, or there is nothing to pin it to yet.

    An unpinned replica follows its cache's revision at once, outside any rollout: the next
    revision change would restart every such replica together. Pinning it to what it reads
    restarts nothing; the rollout does it a few at a time, below a partition too."""
    if weights.cache is None or _ref(observed).get("name") != objects.name(weights.cache):
        return None
    if _pinned(observed) is not None or weights.hydrating:
        return None
    # Plain, and copied where it is changed: a plain copy may be shared.
    out: Obj = dict(plain(observed))
    meta = out["metadata"]
    out["metadata"] = {**meta, "annotations": dict(meta.get("annotations") or {})}
    pin(out, observed, weights)
    return out if _pinned(out) is not None else None
