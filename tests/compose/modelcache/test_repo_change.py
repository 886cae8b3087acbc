"""A repository edit resolves the revision against the new repository.

The resolve record says what it answered: the repo, the revision (and the annotation asking
again) and the commit. A record for another repo is not used, so editing the repo resolves the
branch anew in the new repo before any cluster downloads, and no Job asks the new repo for the
old repo's commit. Judged after every step (world.py), with the status a write late too."""

from __future__ import annotations

import pytest

from modelplane.compose.shared.cache import resolved_commit
from tests.compose.modelcache.test_modelcache import cache
from tests.compose.modelcache.world import REPO, Listing, World, commit, gpu_cluster

NEW = "Qwen/Qwen3-14B"


def hydrated_on_main(status_lag: int = 0) -> World:
    """The cache on main of REPO, resolved and hydrated on a and b."""
    world = World.of(cache(resolved=False), [gpu_cluster("a"), gpu_cluster("b")])
    world.steps(3)
    assert world.statuses[-1]["resolved"]["commit"] == commit(REPO, "main")
    world.status_lag = status_lag
    return world


def moved(world: World) -> None:
    world.cache["spec"]["huggingFace"]["repo"] = NEW


@pytest.mark.parametrize("status_lag", [0, 1], ids=["fresh-status", "status-a-write-late"])
def test_a_new_repo_is_resolved_anew_and_hydrated_at_its_own_commit(status_lag: int) -> None:
    world = hydrated_on_main(status_lag)
    moved(world)
    rsp = world.step()
    assert rsp.condition("Hydrated")[:2] == ("False", "Resolving")
    world.steps(4)
    assert world.statuses[-1]["resolved"] == {
        "repo": NEW,
        "revision": "main",
        "commit": commit(NEW, "main"),
    }
    assert [(repo, sha) for repo, sha, _ in world.asked if repo == NEW] == [
        (NEW, commit(NEW, "main"))
    ] * 2
    assert world.last is not None
    assert world.last.condition("Hydrated")[:2] == ("True", "AllClustersReady")


def test_a_new_repo_edited_while_the_cluster_list_lags_asks_nothing_of_the_old_commit() -> None:
    world = hydrated_on_main()
    moved(world)
    world.step(clusters=Listing.STALE)
    world.step(clusters=Listing.EMPTY)
    world.steps(4)
    assert (NEW, commit(REPO, "main")) not in {(r, s) for r, s, _ in world.asked}
    assert world.entries()["a"]["phase"] == "Ready"


def test_the_record_names_the_repo_it_was_resolved_in() -> None:
    world = hydrated_on_main()
    assert world.statuses[-1]["resolved"]["repo"] == REPO


def test_a_record_for_another_repo_is_not_used() -> None:
    mc = cache(revision="v1")
    mc["status"]["resolved"]["repo"] = "someone/else"
    assert resolved_commit(mc) is None


def test_a_record_written_before_records_named_their_repo_stands_for_the_cache_s_repo() -> None:
    mc = cache(revision="v1")
    del mc["status"]["resolved"]["repo"]
    assert resolved_commit(mc) == mc["status"]["resolved"]["commit"]
