"""A ModelCache revision change, through the FunctionRunner over many reconciles of the cache and
its deployment: the new revision hydrates beside the old one, replicas move onto it by the
rollout strategy only once it is hydrated on every cluster they run on, no engine ever reads a
revision that is not hydrated where it runs, and the old revision is pruned once nothing uses
it, never before."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

from modelplane.compose.modelcache import composer as cache_composer
from modelplane.compose.modeldeployment.rollout import TEMPLATE_HASH, template_hash
from modelplane.compose.shared.cache import (
    UNVERSIONED,
    pinned_revision,
    replica_weights,
    revision_path,
)
from modelplane.labels import MODEL_REVISION
from tests.compose.modeldeployment.running import as_run
from tests.compose.through import Response, deployment_required, reconcile_deployment, run
from tests.fleet.builders import H100, deployment, fleet, is_serving, model_cache

Obj = dict[str, Any]
NAMES = ("a", "b", "c")


def commit(label: str) -> str:
    """The commit a label (a tag, or a branch at some point of its history) stands for."""
    return hashlib.sha1(label.encode()).hexdigest()


LABELS = {commit(n): n for n in ("v1", "v2", "main@1", "main@2")}


def named(node: Any) -> Any:
    """``node`` with every commit of LABELS shown as its label, keys included."""
    if isinstance(node, dict):
        return {named(k): named(v) for k, v in node.items()}
    if isinstance(node, list):
        return [named(v) for v in node]
    return LABELS.get(node, node) if isinstance(node, str) else node


FLEET = fleet(*NAMES)
for _cluster in FLEET:  # each names a ReadWriteMany class: it can stage a model cache
    _cluster["status"]["cache"] = {"storageClassName": "rwx"}


def md(**rollout: Any) -> Obj:
    out = deployment("qwen", replicas=6)
    out["spec"]["template"]["spec"]["modelCacheRef"] = {"name": "weights"}
    if rollout:
        out["spec"]["rollout"] = rollout
    return out


def cache(revision: str) -> Obj:
    out = model_cache("weights")
    out["spec"]["huggingFace"]["revision"] = revision
    return out


def _manifest(obj: Obj) -> Obj:
    return obj["spec"]["forProvider"]["manifest"]


class World:
    """The cache's claims and the deployment's replicas as the clusters run them.

    A hydration Job completes once its cluster is in ``finishing``; a prune Job at once; a
    resolve Pod at once, with the commit ``hub`` names for its revision then. On disk each
    claim holds what completed Jobs wrote and did not delete, by label (LABELS). A replica
    whose stamp changed restarts (not serving for a reconcile); it serves only once the revision
    it is pinned to is on its cluster's disk, as its pods wait for that revision's marker.
    """

    def __init__(self, deployment: Obj, revision: str) -> None:
        self.md = deployment
        self.mc = cache(revision)
        self.cache_observed: dict[str, Obj] = {}
        self.observed: dict[str, Obj] = {}
        self.disk: dict[str, set[str]] = {n: set() for n in NAMES}
        self.finishing: set[str] = set(NAMES)
        self.hub = {"v1": commit("v1"), "v2": commit("v2"), "main": commit("main@1")}
        self.resolved: list[tuple[str, str]] = []
        """(cluster, commit) for every resolve Pod that ran."""
        self.pruned: list[tuple[str, str, set[str]]] = []
        """(cluster, revision, what the replicas there read) for every deletion."""

    def replicas(self) -> list[Obj]:
        return [o for o in self.observed.values() if o["kind"] == "ModelReplica"]

    def reconcile_cache(self, listed: bool = True) -> Response:
        """``listed``: the cache's replicas are read (else not fetched yet)."""
        rsp = run(
            self.mc,
            self.cache_observed,
            {
                cache_composer.CLUSTERS: FLEET,
                cache_composer.DEPLOYMENTS: [self.md],
                cache_composer.REPLICAS: self.replicas() if listed else None,
                cache_composer.CLASSES: [H100],
            },
        )
        assert rsp.fatal is None, rsp.fatal
        observed = {}
        for key, obj in rsp.resources.items():
            obj = copy.deepcopy(obj)
            role = key.partition("-")[0]
            cluster = key.rsplit("-", 1)[1]
            done = role == cache_composer.PRUNE or (
                role == cache_composer.HYDRATE and cluster in self.finishing
            )
            manifest: Obj = {"metadata": {"uid": f"uid-{cluster}"}}
            if role == cache_composer.RESOLVE:
                manifest["status"] = self._resolve(cluster, _manifest(obj), key)
            if role in (cache_composer.HYDRATE, cache_composer.PRUNE) and done:
                manifest["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
                self._ran(role, cluster, _manifest(obj))
            obj["status"] = {"atProvider": {"manifest": manifest}}
            observed[key] = obj
        self.cache_observed = observed
        self.mc = {**self.mc, "status": rsp.status}
        return rsp

    def _resolve(self, cluster: str, pod: Obj, key: str) -> Obj:
        """The Pod's status: once terminated, it keeps the commit it ended with."""
        before = self.cache_observed.get(key)
        if before is not None:
            return dict(before["status"]["atProvider"]["manifest"]["status"])
        [container] = pod["spec"]["containers"]
        sha = self.hub[container["args"][1]]
        self.resolved.append((cluster, sha))
        terminated = {"exitCode": 0, "message": sha}
        return {"phase": "Succeeded", "containerStatuses": [{"state": {"terminated": terminated}}]}

    def _ran(self, role: str, cluster: str, job: Obj) -> None:
        [container] = job["spec"]["template"]["spec"]["containers"]
        if role == cache_composer.HYDRATE:
            env = {e["name"]: e.get("value") for e in container["env"]}
            self.disk[cluster].add(self._revision_at(env["HF_HUB_CACHE"]))
            return
        for path in container["args"]:
            if "/.modelplane/" not in path:
                revision = self._revision_at(path)
                reads = {self.reads(r) for r in self.replicas() if _cluster(r) == cluster}
                self.pruned.append((cluster, revision, reads))
                self.disk[cluster].discard(revision)

    def _revision_at(self, path: str) -> str:
        if "/revisions/" not in path:
            return UNVERSIONED
        [revision] = [n for c, n in LABELS.items() if revision_path(self.mc, c) == path]
        return revision

    def reads(self, replica: Obj) -> str:
        """The revision the replica's pods read, as its composition resolves it."""
        weights = replica_weights(self.mc, pinned_revision(replica), _cluster(replica))
        return str(named(weights.revision))

    def reconcile_deployment(self) -> Response:
        rsp = reconcile_deployment(
            self.md, FLEET, self.observed, replicas=self.replicas(), unrouted=True, cache=[self.mc]
        )
        self.observed = as_run(
            rsp.resources, self.observed, lambda r: self.reads(r) in self.disk[_cluster(r)]
        )
        return rsp

    def round(self) -> Response:
        self.reconcile_cache()
        return self.reconcile_deployment()

    def serving_reads(self) -> dict[int, str]:
        """The revision each serving replica reads, by replica index."""
        return {_index(r): self.reads(r) for r in self.replicas() if is_serving(r)}

    def pins(self) -> dict[int, str]:
        return {_index(r): _pin(r) for r in self.replicas()}


def _pin(replica: Obj) -> str:
    return str(named(pinned_revision(replica)))


def _cluster(replica: Obj) -> str:
    return str(replica["spec"]["clusterName"])


def _index(replica: Obj) -> int:
    return int(replica["metadata"]["labels"]["modelplane.ai/replica-index"])


def pinned_to_v1(deployment: Obj) -> World:
    world = World(deployment, "v1")
    for _ in range(30):
        world.round()
        if world.pins() == {i: "v1" for i in range(6)} == world.serving_reads():
            return world
    raise AssertionError(world.pins())


def changed(world: World, rounds: int, finishing: dict[int, str]) -> list[tuple[Response, int]]:
    """The cache moved to v2; ``finishing``: the round at which each cluster's download ends.
    Each round's deployment response, and how many replicas serve after it."""
    world.mc = {**cache("v2"), "status": world.mc["status"]}
    world.finishing = set()
    return reconciled(world, rounds, finishing, new="v2")


def reconciled(
    world: World, rounds: int, finishing: dict[int, str], *, new: str
) -> list[tuple[Response, int]]:
    """Reconciles of the cache and the deployment, checking after each that every serving
    replica reads a revision on its cluster's disk, that none is pinned to ``new`` before it is
    hydrated on every cluster, and that the replicas pinned to it are the lowest indexes from
    the partition on (the rollout's order)."""
    out = []
    for n in range(rounds):
        if n in finishing:
            world.finishing.add(finishing[n])
        rsp = world.round()
        out.append((rsp, len(world.serving_reads())))
        on_disk = world.disk
        for index, revision in world.serving_reads().items():
            replica = next(r for r in world.replicas() if _index(r) == index)
            assert revision in on_disk[_cluster(replica)], (n, index, revision)
        if not all(new in on_disk[c] for c in NAMES):
            assert new not in world.pins().values(), n
        first = int((world.md["spec"].get("rollout") or {}).get("partition", 0))
        moved = sorted(i for i, r in world.pins().items() if r == new)
        assert moved == list(range(first, first + len(moved))), n
    return out


def test_no_replica_moves_until_the_new_revision_is_hydrated_on_every_cluster() -> None:
    world = pinned_to_v1(md())
    rsps = changed(world, 6, {0: "a", 2: "b"})
    assert set(world.pins().values()) == {"v1"}
    assert world.serving_reads() == {i: "v1" for i in range(6)}
    status, reason, message = rsps[-1][0].condition("RolledOut")
    assert (status, reason) == ("False", "WaitingForRevision")
    assert "not hydrated yet on c" in message


def test_the_new_revision_hydrates_beside_the_old_one() -> None:
    world = pinned_to_v1(md())
    changed(world, 3, {0: "a"})
    entries = {e["name"]: e for e in named(world.mc["status"]["clusters"])}
    assert entries["a"]["revisions"] == ["v2", "v1"]
    assert entries["b"]["revisions"] == ["v1"]
    assert world.disk["a"] == {"v1", "v2"}


def test_replicas_roll_onto_the_new_revision_by_the_strategy_never_below_it() -> None:
    world = pinned_to_v1(md(maxUnavailable=2))
    history = [serving for _, serving in changed(world, 14, {0: "a", 1: "b", 2: "c"})]
    assert min(history) == 4
    assert world.serving_reads() == {i: "v2" for i in range(6)}


def test_an_old_revision_is_pruned_everywhere_once_no_replica_reads_it() -> None:
    world = pinned_to_v1(md(maxUnavailable=2))
    changed(world, 20, {0: "a", 1: "b", 2: "c"})
    assert world.disk == {n: {"v2"} for n in NAMES}
    assert {e["name"]: e["revisions"] for e in named(world.mc["status"]["clusters"])} == {
        n: ["v2"] for n in NAMES
    }
    assert all(revision not in reads for _, revision, reads in world.pruned)
    assert sorted(c for c, _, _ in world.pruned) == list(NAMES)


def test_a_revision_replicas_still_read_is_never_pruned() -> None:
    world = pinned_to_v1(md())
    world.md["spec"]["rollout"] = {"partition": 3}
    changed(world, 20, {0: "a", 1: "b", 2: "c"})
    assert world.pins() == {0: "v1", 1: "v1", 2: "v1", 3: "v2", 4: "v2", 5: "v2"}
    clusters_with_v1 = {r["spec"]["clusterName"] for r in world.replicas() if _pin(r) == "v1"}
    for cluster in clusters_with_v1:
        assert "v1" in world.disk[cluster]
    assert all(revision not in reads for _, revision, reads in world.pruned)


def rolled_at_once() -> World:
    """Every replica moved from v1 to v2, hydrated everywhere at once, in one step."""
    world = pinned_to_v1(md(maxUnavailable=6))
    world.mc = {**cache("v2"), "status": world.mc["status"]}
    for _ in range(4):  # resolved, hydrated, pinned, serving
        world.round()
    assert world.serving_reads() == {i: "v2" for i in range(6)}
    return world


def test_an_old_revision_is_kept_while_the_replicas_are_not_read() -> None:
    world = rolled_at_once()
    for _ in range(6):
        rsp = world.reconcile_cache(listed=False)
    assert all(e["revisions"] == ["v2", "v1"] for e in named(rsp.status["clusters"]))
    assert not [k for k in rsp.resources if k.startswith("prune-")]


def test_an_old_revision_is_pruned_after_three_reconciles_unused_then_its_job_goes() -> None:
    world = rolled_at_once()
    seen = []
    for _ in range(5):
        rsp = world.reconcile_cache()
        [a] = [e for e in named(rsp.status["clusters"]) if e["name"] == "a"]
        pruner = [k for k in rsp.resources if k.startswith("prune-") and k.endswith("-a")]
        seen.append((a.get("unused"), a.get("pruning"), a["revisions"], bool(pruner)))
    assert seen == [
        ({"v1": 1}, None, ["v2", "v1"], False),
        ({"v1": 2}, None, ["v2", "v1"], False),
        (None, ["v1"], ["v2"], False),  # recorded first
        (None, ["v1"], ["v2"], True),  # then the Job runs
        (None, None, ["v2"], False),  # seen complete: the record drops it, and the Job goes
    ]


def legacy(world: World) -> None:
    """The world as a release before revision paths left it: the weights at each claim's root,
    the cache's entries Ready without revisions, the replicas unpinned."""
    world.mc["status"] = {
        "clusters": [{"name": n, "phase": "Ready", "hydratedBy": "0ld"} for n in NAMES]
    }
    world.disk = {n: {UNVERSIONED} for n in NAMES}
    world.cache_observed = {
        k: v for k, v in world.cache_observed.items() if not k.startswith("hydrate-")
    }
    for obj in world.replicas():
        del obj["metadata"]["annotations"][MODEL_REVISION]
        obj["metadata"]["annotations"][TEMPLATE_HASH] = template_hash(obj)


def test_an_upgrade_moves_replicas_off_the_claim_s_root_by_the_rollout_then_prunes_it() -> None:
    world = pinned_to_v1(md(maxUnavailable=2))
    legacy(world)
    world.finishing = set()
    first, *_ = history = reconciled(world, 20, {2: "a", 3: "b", 4: "c"}, new="v1")
    assert first[1] == 6  # nothing restarts on the upgrade itself
    assert min(serving for _, serving in history) == 4
    assert world.serving_reads() == {i: "v1" for i in range(6)}
    assert world.disk == {n: {"v1"} for n in NAMES}
    assert all(revision not in reads for _, revision, reads in world.pruned)


def test_a_replica_placed_while_the_revision_hydrates_reads_what_the_others_read() -> None:
    world = pinned_to_v1(md())
    world.md["spec"]["replicas"] = 7
    changed(world, 4, {0: "a"})
    assert world.pins() == {i: "v1" for i in range(7)}
    assert world.serving_reads() == {i: "v1" for i in range(7)}


def test_a_cache_not_read_keeps_every_replica_on_its_revision() -> None:
    world = pinned_to_v1(md())
    before = world.pins()
    rsp = run(
        world.md,
        world.observed,
        deployment_required(FLEET, replicas=world.replicas(), unrouted=True),
    )
    assert {
        _index(o): _pin(o) for o in rsp.resources.values() if o["kind"] == "ModelReplica"
    } == before


def test_a_revision_set_back_while_it_is_pruned_hydrates_again_only_once_that_is_done() -> None:
    world = rolled_at_once()
    for _ in range(3):
        world.reconcile_cache()
    assert all(e.get("pruning") == ["v1"] for e in named(world.mc["status"]["clusters"]))
    world.mc = {**cache("v1"), "status": world.mc["status"]}
    rsp = world.reconcile_cache()
    assert not [k for k in rsp.resources if k.startswith("hydrate-")]
    assert {e["phase"] for e in rsp.status["clusters"]} == {"Pending"}
    for _ in range(3):
        rsp = world.reconcile_cache()
    assert world.disk == {n: {"v1", "v2"} for n in NAMES}
    assert all(e["revisions"][0] == "v1" for e in named(rsp.status["clusters"]))
