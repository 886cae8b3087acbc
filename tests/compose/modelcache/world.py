"""A ModelCache and the workload clusters it stages on, reconciled many times as Crossplane runs
it, and judged after every step.

Each step composes the cache through the real FunctionRunner from what the world holds: the
cache's spec and the status its writes left (``status_lag`` writes late: a requeue on its own
status write can read the one before), the InferenceClusters, ModelDeployments and ModelReplicas
as their lists return them on that step (``Listing``: as they are, as the step before saw them,
empty, or not read), with every by-name lookup answered as the world is, the way Crossplane
calls the function again within one reconcile until its requirements settle.

The clusters then do what provider-kubernetes and the workloads would: an Object left out of
desired state is deleted with what it carries (a claim takes its weights with it), a hydration
Job downloads its repo at the commit it names, or fails when that repo has no such commit (as
``hf download`` does), a resolve Pod ends with the commit the Hub names for its repo and
revision, a prune Job completes.

After every step ``judge`` checks what must hold at every step: no claim was deleted while a
replica mounts it, no Job asked a repo for a commit it does not have, and the cache's status
and ``Hydrated`` condition say what the clusters hold.
"""

from __future__ import annotations

import copy
import enum
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.compose.modelcache.composer import (
    CLAIM,
    CLASSES,
    CLUSTERS,
    DEPLOYMENTS,
    HYDRATE,
    PRUNE,
    READY,
    REPLICAS,
    RESOLVE,
)
from modelplane.simulate import readiness
from tests.compose.through import Response, run
from tests.fleet.builders import H100, inference_cluster, with_condition

Obj = dict[str, Any]
REPO = "Qwen/Qwen3-8B"


def commit(repo: str, revision: str) -> str:
    """The commit ``revision`` names in ``repo`` on the Hub of these tests."""
    return hashlib.sha1(f"{repo}@{revision}".encode()).hexdigest()


def gpu_cluster(name: str, labels: dict[str, str] | None = None) -> Obj:
    """A reachable cluster with an h100 pool, an RWX class and its serving stack ready."""
    out = inference_cluster(name, {"h100": ("h100", 2)}, labels=labels, classes=[H100])
    out["status"]["cache"] = {"storageClassName": "rwx"}
    return with_condition(out, "StackReady", "True", "Available")


def mounting(name: str, cluster: str, cache: str = "weights") -> Obj:
    """A ModelReplica on ``cluster`` whose engines mount the cache's claim."""
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"clusterName": cluster, "modelCacheRef": {"name": cache}, "engines": []},
    }


class Listing(enum.Enum):
    """What a list returns on one step."""

    FRESH = "as the world is"
    STALE = "as the step before listed it"
    EMPTY = "empty"
    UNREAD = "not read yet"


@dataclass
class Claim:
    uid: str
    weights: set[tuple[str, str]] = field(default_factory=set)
    """(repo, commit) of every snapshot downloaded into it."""


@dataclass
class World:
    cache: Obj
    """The ModelCache as the user wrote it (its status is ``statuses``)."""
    clusters: dict[str, Obj]
    deployments: list[Obj] = field(default_factory=list)
    replicas: list[Obj] = field(default_factory=list)
    """The ModelReplicas that exist, whatever a list returns."""
    status_lag: int = 0
    statuses: list[Obj] = field(default_factory=list)
    observed: dict[str, Obj] = field(default_factory=dict)
    claims: dict[str, Claim] = field(default_factory=dict)
    downloads: list[tuple[str, str, str]] = field(default_factory=list)
    """(cluster, repo, commit) of every download that ran."""
    deleted: list[tuple[str, list[str]]] = field(default_factory=list)
    """(cluster, replicas mounting the claim then) of every claim deleted."""
    asked: list[tuple[str, str, str]] = field(default_factory=list)
    """(repo, commit, cluster) of every hydration Job that ran."""
    last: Response | None = None
    _listed: dict[str, list[Obj]] = field(default_factory=dict)
    _uids: int = 0

    @classmethod
    def of(cls, cache: Obj, clusters: Iterable[Obj], **kw: Any) -> World:
        world = cls(copy.deepcopy(cache), {c["metadata"]["name"]: c for c in clusters}, **kw)
        world.statuses.append(copy.deepcopy(cache.get("status") or {}))
        world.cache.pop("status", None)
        return world

    # --- one reconcile ------------------------------------------------------------------------

    def composite(self) -> Obj:
        """The cache as a reconcile reads it: the status written ``status_lag`` writes ago."""
        status = self.statuses[max(0, len(self.statuses) - 1 - self.status_lag)]
        return {**copy.deepcopy(self.cache), "status": copy.deepcopy(status)}

    def step(
        self, clusters: Listing = Listing.FRESH, replicas: Listing = Listing.FRESH
    ) -> Response:
        required: dict[str, list[Obj] | None] = {
            CLUSTERS: self._list(CLUSTERS, list(self.clusters.values()), clusters),
            DEPLOYMENTS: list(self.deployments),
            REPLICAS: self._list(REPLICAS, self.replicas, replicas),
            CLASSES: [H100],
        }
        composite = self.composite()
        rsp = run(composite, self.observed, required)
        for _ in range(5):  # Crossplane answers new requirements within the same reconcile
            asked = {k: v for k, v in rsp.by_name.items() if k not in required}
            if not asked:
                break
            for key, (kind, name, _ns) in asked.items():
                required[key] = self._by_name(kind, name)
            rsp = run(composite, self.observed, required)
        assert rsp.fatal is None, rsp.fatal
        self._apply(rsp)
        self.statuses.append(copy.deepcopy(rsp.status))
        self.last = rsp
        self.judge(rsp)
        return rsp

    def steps(self, n: int, **listing: Listing) -> Response:
        for _ in range(n):
            rsp = self.step(**listing)
        return rsp

    def _list(self, kind: str, now: list[Obj], listing: Listing) -> list[Obj] | None:
        if listing is Listing.UNREAD:
            return None
        if listing is Listing.EMPTY:
            return []
        if listing is Listing.STALE:
            return self._listed.get(kind, [])
        self._listed[kind] = copy.deepcopy(now)
        return copy.deepcopy(now)

    def _by_name(self, kind: str, name: str) -> list[Obj]:
        if kind == "InferenceCluster":
            return [copy.deepcopy(self.clusters[name])] if name in self.clusters else []
        return [H100] if kind == "InferenceClass" and name == "h100" else []

    # --- the clusters apply what was composed ---------------------------------------------------

    def _apply(self, rsp: Response) -> None:
        for key in sorted(set(self.observed) - set(rsp.resources)):
            if key.startswith(f"{CLAIM}-"):
                cluster = _cluster(key)
                self.deleted.append((cluster, self.readers(cluster)))
                self.claims.pop(cluster, None)
        # Claims first: a Job composed beside its claim finds it.
        order = sorted(rsp.resources, key=lambda k: not k.startswith(f"{CLAIM}-"))
        self.observed = {key: self._observe(key, rsp.resources[key]) for key in order}

    def _observe(self, key: str, obj: Obj) -> Obj:
        role, cluster = key.partition("-")[0], _cluster(key)
        manifest = obj["spec"]["forProvider"]["manifest"]
        before = self.observed.get(key)
        remote = copy.deepcopy(manifest)
        if before is not None and role != CLAIM:
            remote["status"] = before["status"]["atProvider"]["manifest"].get("status")
        elif role == CLAIM:
            claim = self.claims.get(cluster)
            if claim is None:
                self._uids += 1
                claim = self.claims[cluster] = Claim(f"uid-{self._uids}")
            remote.setdefault("metadata", {})["uid"] = claim.uid
            remote["status"] = {"phase": "Bound"}
        elif role == HYDRATE:
            remote["status"] = self._hydrate(cluster, _container(manifest)["args"])
        elif role == RESOLVE:
            remote["status"] = self._resolve(_container(manifest)["args"])
        elif role == PRUNE:
            remote["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
        out = copy.deepcopy(obj)
        ready = readiness(obj["spec"].get("readiness") or {}, remote)
        out["status"] = {
            "atProvider": {"manifest": remote},
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        }
        return out

    def _hydrate(self, cluster: str, args: list[str]) -> Obj:
        repo, _flag, sha = args
        self.asked.append((repo, sha, cluster))
        if sha not in self.commits(repo):
            failed = {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}
            return {"conditions": [failed]}
        self.claims[cluster].weights.add((repo, sha))
        self.downloads.append((cluster, repo, sha))
        return {"conditions": [{"type": "Complete", "status": "True"}]}

    def _resolve(self, args: list[str]) -> Obj:
        repo, revision = args
        done = {"exitCode": 0, "message": commit(repo, revision)}
        return {"phase": "Succeeded", "containerStatuses": [{"state": {"terminated": done}}]}

    @staticmethod
    def commits(repo: str) -> set[str]:
        """Every commit the Hub holds for ``repo`` in these tests."""
        return {commit(repo, r) for r in ("main", "v1", "v2")}

    # --- what holds at every step ---------------------------------------------------------------

    def readers(self, cluster: str) -> list[str]:
        """The replicas that mount the cache's claim on ``cluster``."""
        name = self.cache["metadata"]["name"]
        return sorted(
            r["metadata"]["name"]
            for r in self.replicas
            if r["spec"]["clusterName"] == cluster
            and (r["spec"].get("modelCacheRef") or {}).get("name") == name
        )

    def entries(self) -> dict[str, Obj]:
        """The cache's status entries by cluster, as the last step wrote them."""
        return {e["name"]: e for e in self.statuses[-1].get("clusters") or ()}

    def judge(self, rsp: Response) -> None:
        for cluster, readers in self.deleted:
            assert not readers, f"the claim on {cluster} was deleted under {readers}"
        repo = self.cache["spec"]["huggingFace"]["repo"]
        for asked_repo, sha, cluster in self.asked:
            assert sha in self.commits(asked_repo), f"{cluster} asked {asked_repo} for {sha}"
        resolved = self.statuses[-1].get("resolved")
        if resolved is not None:
            assert resolved.get("repo") == repo, resolved
            assert resolved["commit"] in self.commits(repo), resolved
        for name, entry in self.entries().items():
            if entry["phase"] == READY:
                claim = self.claims.get(name)
                assert claim is not None, f"{name} is Ready with no claim"
                assert resolved is not None and (repo, resolved["commit"]) in claim.weights, name
        status, reason, message = rsp.condition("Hydrated")
        if status == "True":
            assert self.entries() and all(e["phase"] == READY for e in self.entries().values())
            assert message.startswith(f"{len(self.entries())} of {len(self.entries())} "), message
        if reason == "Resolving":
            assert resolved is None, resolved

    def staged(self) -> list[str]:
        """The clusters holding a claim, by name."""
        return sorted(self.claims)

    def downloads_on(self, cluster: str) -> int:
        return sum(1 for c, _, _ in self.downloads if c == cluster)


def _cluster(key: str) -> str:
    return key.rsplit("-", 1)[1]


def _container(manifest: Mapping[str, Any]) -> Obj:
    spec = manifest["spec"]
    [container] = (spec.get("template", {}).get("spec") or spec)["containers"]
    return dict(container)
