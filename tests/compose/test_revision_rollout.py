"""A ModelCache revision change, through the FunctionRunner over many reconciles of the cache and
its deployment: the new revision hydrates beside the old one, replicas move onto it by the
rollout strategy only once it is hydrated on every cluster they run on, no engine ever reads a
revision that is not hydrated where it runs, and the old revision is pruned once nothing uses
it, never before."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.cache import revision_path
from modelplane.compose.modelcache import composer as cache_composer
from modelplane.compose.modeldeployment.composer import CLASSES, CLUSTERS, REPLICAS
from modelplane.compose.modeldeployment.drain import ROUTES
from modelplane.compose.modeldeployment.footprint import CACHE
from modelplane.compose.modeldeployment.rollout import TEMPLATE_HASH
from tests.compose.through import Response, run
from tests.fleet.builders import (
    deployment,
    inference_class,
    inference_cluster,
    model_cache,
    with_condition,
)

Obj = dict[str, Any]
H100 = inference_class("h100")
NAMES = ("a", "b", "c")


def fleet() -> list[Obj]:
    out = []
    for name in NAMES:
        cluster = inference_cluster(name, {"h100": ("h100", 2)}, classes=[H100])
        cluster["status"]["cache"] = {"storageClassName": "rwx"}
        out.append(cluster)
    return out


FLEET = fleet()


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

    A hydration Job completes once its cluster is in ``finishing``; a prune Job at once. On
    disk each claim holds what completed Jobs wrote and did not delete. A replica whose stamp
    changed restarts (not serving for a reconcile); it serves only once the revision it is
    pinned to is on its cluster's disk, as its pods wait for that revision's marker.
    """

    def __init__(self, deployment: Obj, revision: str) -> None:
        self.md = deployment
        self.mc = cache(revision)
        self.cache_observed: dict[str, Obj] = {}
        self.observed: dict[str, Obj] = {}
        self.disk: dict[str, set[str]] = {n: set() for n in NAMES}
        self.finishing: set[str] = set(NAMES)
        self.pruned: list[tuple[str, str, set[str]]] = []
        """(cluster, revision, what replicas there were pinned to) for every deletion."""

    def replicas(self) -> list[Obj]:
        return [o for o in self.observed.values() if o["kind"] == "ModelReplica"]

    def reconcile_cache(self) -> Response:
        rsp = run(
            self.mc,
            self.cache_observed,
            {
                cache_composer.CLUSTERS: FLEET,
                cache_composer.DEPLOYMENTS: [self.md],
                cache_composer.REPLICAS: self.replicas(),
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
            if role in (cache_composer.HYDRATE, cache_composer.PRUNE) and done:
                manifest["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
                self._ran(role, cluster, _manifest(obj))
            obj["status"] = {"atProvider": {"manifest": manifest}}
            observed[key] = obj
        self.cache_observed = observed
        self.mc = {**self.mc, "status": rsp.status}
        return rsp

    def _ran(self, role: str, cluster: str, job: Obj) -> None:
        [container] = job["spec"]["template"]["spec"]["containers"]
        if role == cache_composer.HYDRATE:
            env = {e["name"]: e.get("value") for e in container["env"]}
            self.disk[cluster].add(self._revision_at(env["HF_HUB_CACHE"]))
            return
        for path in container["args"]:
            if "/revisions/" in path:
                revision = self._revision_at(path)
                pins = {_pin(r) for r in self.replicas() if r["spec"]["clusterName"] == cluster}
                self.pruned.append((cluster, revision, pins))
                self.disk[cluster].discard(revision)

    def _revision_at(self, path: str) -> str:
        [revision] = [r for r in ("v1", "v2") if revision_path(self.mc, r) == path]
        return revision

    def reconcile_deployment(self) -> Response:
        required = {
            CLUSTERS: FLEET,
            CLASSES: [H100],
            REPLICAS: self.replicas(),
            ROUTES: [],
            CACHE: [self.mc],
        }
        rsp = run(self.md, self.observed, required)
        assert rsp.fatal is None, rsp.fatal
        after = {}
        for key, obj in rsp.resources.items():
            obj = copy.deepcopy(obj)
            if obj["kind"] == "ModelReplica":
                before = self.observed.get(key)
                restarted = before is None or _stamp(before) != _stamp(obj)
                on_disk = _pin(obj) in self.disk[obj["spec"]["clusterName"]]
                obj = with_condition(
                    obj, "ModelServing", "True" if on_disk and not restarted else "False"
                )
            after[key] = obj
        self.observed = after
        return rsp

    def round(self) -> Response:
        self.reconcile_cache()
        return self.reconcile_deployment()

    def serving(self) -> dict[int, str]:
        """The revision each serving replica reads, by replica index."""
        return {
            _index(r): _pin(r)
            for r in self.replicas()
            if any(
                c["type"] == "ModelServing" and c["status"] == "True"
                for c in r["status"]["conditions"]
            )
        }

    def pins(self) -> dict[int, str]:
        return {_index(r): _pin(r) for r in self.replicas()}


def _stamp(obj: Obj) -> str:
    return str(obj["metadata"]["annotations"][TEMPLATE_HASH])


def _pin(replica: Obj) -> str:
    return str(replica["spec"]["modelCacheRef"].get("revision"))


def _index(replica: Obj) -> int:
    return int(replica["metadata"]["labels"]["modelplane.ai/replica-index"])


def settled(deployment: Obj) -> World:
    world = World(deployment, "v1")
    for _ in range(4):
        world.round()
    assert world.serving() == {i: "v1" for i in range(6)}
    return world


def changed(world: World, rounds: int, finishing: dict[int, str]) -> list[tuple[Response, int]]:
    """The cache moved to v2; ``finishing``: the round at which each cluster's download ends.
    Each round's deployment response, and how many replicas serve after it."""
    world.mc = {**cache("v2"), "status": world.mc["status"]}
    world.finishing = set()
    out = []
    for n in range(rounds):
        if n in finishing:
            world.finishing.add(finishing[n])
        rsp = world.round()
        out.append((rsp, len(world.serving())))
        on_disk = world.disk
        for index, revision in world.serving().items():
            replica = next(r for r in world.replicas() if _index(r) == index)
            assert revision in on_disk[replica["spec"]["clusterName"]], (n, index, revision)
        if not all("v2" in on_disk[c] for c in NAMES):
            assert set(world.pins().values()) == {"v1"}, n
        # Updated lowest index first from the partition on: never scattered.
        first = int((world.md["spec"].get("rollout") or {}).get("partition", 0))
        moved = sorted(i for i, r in world.pins().items() if r == "v2")
        assert moved == list(range(first, first + len(moved))), n
    return out


def test_no_replica_moves_until_the_new_revision_is_hydrated_on_every_cluster() -> None:
    world = settled(md())
    rsps = changed(world, 6, {0: "a", 2: "b"})
    assert set(world.pins().values()) == {"v1"}
    assert world.serving() == {i: "v1" for i in range(6)}
    status, reason, message = rsps[-1][0].condition("RolledOut")
    assert (status, reason) == ("False", "WaitingForRevision")
    assert "not hydrated yet on c" in message


def test_the_new_revision_hydrates_beside_the_old_one() -> None:
    world = settled(md())
    changed(world, 3, {0: "a"})
    entries = {e["name"]: e for e in world.mc["status"]["clusters"]}
    assert entries["a"]["revisions"] == ["v2", "v1"]
    assert entries["b"]["revisions"] == ["v1"]
    assert world.disk["a"] == {"v1", "v2"}


def test_replicas_roll_onto_the_new_revision_by_the_strategy_never_below_it() -> None:
    world = settled(md(maxUnavailable=2))
    history = [serving for _, serving in changed(world, 14, {0: "a", 1: "b", 2: "c"})]
    assert min(history) == 4
    assert world.serving() == {i: "v2" for i in range(6)}


def test_an_old_revision_is_pruned_everywhere_once_no_replica_reads_it() -> None:
    world = settled(md(maxUnavailable=2))
    changed(world, 20, {0: "a", 1: "b", 2: "c"})
    assert world.disk == {n: {"v2"} for n in NAMES}
    assert {e["name"]: e["revisions"] for e in world.mc["status"]["clusters"]} == {
        n: ["v2"] for n in NAMES
    }
    assert all(revision not in pins for _, revision, pins in world.pruned)
    assert sorted(c for c, _, _ in world.pruned) == list(NAMES)


def test_a_revision_replicas_still_read_is_never_pruned() -> None:
    world = settled(md(partition=3))
    changed(world, 20, {0: "a", 1: "b", 2: "c"})
    assert world.pins() == {0: "v1", 1: "v1", 2: "v1", 3: "v2", 4: "v2", 5: "v2"}
    clusters_with_v1 = {r["spec"]["clusterName"] for r in world.replicas() if _pin(r) == "v1"}
    for cluster in clusters_with_v1:
        assert "v1" in world.disk[cluster]
    assert all(revision not in pins for _, revision, pins in world.pruned)
