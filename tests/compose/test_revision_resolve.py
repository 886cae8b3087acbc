"""A ModelCache on a branch, through the FunctionRunner over many reconciles of the cache and its
deployment: the branch is resolved to one commit once for the whole cache, every cluster
hydrates that commit however the branch moves meanwhile, the replicas never point at two
commits, and only a new request resolves the branch again."""

from __future__ import annotations

from typing import Any

from modelplane.compose.modelcache import composer as cache_composer
from modelplane.compose.shared.cache import RESOLVE_ANNOTATION
from tests.compose.test_revision_rollout import FLEET, World, commit, md, named
from tests.compose.through import run

Obj = dict[str, Any]


def on_main(deployment: Obj) -> World:
    """The world with the cache's revision unset (main), the Hub's main at main@1."""
    world = World(deployment, "main")
    del world.mc["spec"]["huggingFace"]["revision"]
    return world


def rounds(world: World, n: int, moves: dict[int, str] | None = None) -> list[set[str]]:
    """``n`` rounds; at round i of ``moves`` the Hub's main moves to that label. After each
    round, the commits the replicas are pinned to."""
    out = []
    for i in range(n):
        if i in (moves or {}):
            world.hub["main"] = commit((moves or {})[i])
        world.round()
        out.append({p for p in world.pins().values() if p != "None"})
    return out


def settle(world: World) -> None:
    """Rounds until every replica is pinned and serves."""
    for _ in range(30):
        world.round()
        if "None" not in world.pins().values() and len(world.serving_reads()) == 6:
            return
    raise AssertionError(world.pins())


def resolve_keys(rsp_resources: dict[str, Obj]) -> list[str]:
    return [k for k in rsp_resources if k.startswith(f"{cache_composer.RESOLVE}-")]


def test_clusters_hydrating_a_branch_minutes_apart_hold_the_same_commit() -> None:
    world = on_main(md())
    world.finishing = {"a"}
    rounds(world, 3)
    world.hub["main"] = commit("main@2")
    world.finishing |= {"b", "c"}
    rounds(world, 3)
    assert world.disk == {n: {"main@1"} for n in ("a", "b", "c")}
    assert len(world.resolved) == 1


def test_the_branch_is_resolved_once_on_the_first_cluster_by_name() -> None:
    world = on_main(md())
    rounds(world, 4)
    assert world.resolved == [("a", commit("main@1"))]


def test_the_deployment_s_replicas_never_point_at_two_commits() -> None:
    world = on_main(md(maxUnavailable=2))
    history = rounds(world, 16, moves={1: "main@2", 5: "main@3"})
    assert all(len(pins) <= 1 for pins in history)
    assert world.serving_reads() == {i: "main@1" for i in range(6)}


def test_the_cache_s_status_shows_the_commit_its_branch_resolved_to() -> None:
    world = on_main(md())
    rounds(world, 4)
    status = world.mc["status"]
    assert status["resolved"] == {
        "repo": "Qwen/Qwen3-8B",
        "revision": "main",
        "commit": commit("main@1"),
    }
    assert {e["name"]: e["revisions"] for e in named(status["clusters"])} == {
        n: ["main@1"] for n in ("a", "b", "c")
    }


def test_the_resolve_pod_stays_until_its_commit_is_recorded_then_goes() -> None:
    world = on_main(md())
    first = world.reconcile_cache()
    assert resolve_keys(first.resources)
    observed = world.reconcile_cache()  # observed done: used at once, and still composed
    assert resolve_keys(observed.resources)
    assert [k for k in observed.resources if k.startswith("hydrate-")]
    recorded = world.reconcile_cache()
    assert not resolve_keys(recorded.resources)


def test_a_resolve_pod_no_longer_observed_never_resolves_the_branch_again() -> None:
    world = on_main(md())
    rounds(world, 4)
    world.hub["main"] = commit("main@2")
    world.cache_observed = {
        k: v for k, v in world.cache_observed.items() if not k.startswith("resolve-")
    }
    for _ in range(4):
        rsp = world.reconcile_cache()
        assert not resolve_keys(rsp.resources)
    assert world.mc["status"]["resolved"]["commit"] == commit("main@1")
    assert len(world.resolved) == 1


def test_a_new_value_of_the_annotation_resolves_again_and_rolls_onto_the_new_commit() -> None:
    world = on_main(md(maxUnavailable=2))
    settle(world)
    world.hub["main"] = commit("main@2")
    world.mc["metadata"]["annotations"] = {RESOLVE_ANNOTATION: "2026-12-02"}
    history = rounds(world, 20)
    assert world.mc["status"]["resolved"] == {
        "repo": "Qwen/Qwen3-8B",
        "revision": "main",
        "request": "2026-12-02",
        "commit": commit("main@2"),
    }
    assert world.serving_reads() == {i: "main@2" for i in range(6)}
    assert max(len(pins) for pins in history) == 2  # old and new, only while rolling
    assert world.disk == {n: {"main@2"} for n in ("a", "b", "c")}


def test_while_the_branch_resolves_replicas_keep_the_commit_they_read() -> None:
    world = on_main(md())
    settle(world)
    world.mc["metadata"]["annotations"] = {RESOLVE_ANNOTATION: "again"}
    world.reconcile_cache()
    rsp = world.reconcile_deployment()
    assert rsp.condition("RolledOut")[1] == "WaitingForRevision"
    assert "not resolved to a commit for a, b, c" in rsp.condition("RolledOut")[2]
    assert set(world.pins().values()) == {"main@1"}


def test_a_commit_given_needs_no_resolve_step() -> None:
    world = on_main(md())
    world.mc["spec"]["huggingFace"]["revision"] = commit("v1")
    for _ in range(4):
        rsp = world.reconcile_cache()
        assert not resolve_keys(rsp.resources)
    assert world.disk == {n: {"v1"} for n in ("a", "b", "c")}
    assert world.resolved == []


def test_while_resolving_no_cluster_downloads_and_hydrated_says_so() -> None:
    world = on_main(md())
    rsp = run(world.mc, {}, {cache_composer.CLUSTERS: FLEET})
    assert not [k for k in rsp.resources if k.startswith("hydrate-")]
    status, reason, message = rsp.condition("Hydrated")
    assert (status, reason) == ("False", "Resolving")
    assert "a: Pending (resolving revision main to a commit here" in message
    assert "b: Pending (waiting for revision main to be resolved on a)" in message
