"""A serving stack that blips keeps the weights staged on its cluster.

A cache without a clusterSelector stages where a deployment referencing it could run. Whether a
cluster's serving stack is ready right now (a stack-wave upgrade turns StackReady False for a
while) says where a new replica may land, not where the weights are wanted: a cluster with
nothing placed on it yet keeps its claim through the blip, and nothing downloads again when
the stack is back. Judged after every step (world.py)."""

from __future__ import annotations

import pytest

from tests.compose.modelcache.test_modelcache import cache
from tests.compose.modelcache.world import Listing, World, gpu_cluster, mounting
from tests.fleet.builders import deployment, with_condition

NAMES = ("a", "b")


def staged_on_a_and_b(status_lag: int = 0) -> World:
    """A deployment referencing the cache, its one replica on a; the weights on a and b."""
    md = deployment("qwen", replicas=1)
    md["spec"]["template"]["spec"]["modelCacheRef"] = {"name": "weights"}
    world = World.of(
        cache(resolved=False),
        [gpu_cluster(n) for n in NAMES],
        deployments=[md],
        replicas=[mounting("qwen-a-0", "a")],
    )
    world.steps(3)
    assert world.staged() == ["a", "b"]
    assert world.last is not None and world.last.condition("Hydrated")[0] == "True"
    world.status_lag = status_lag
    return world


def stack(world: World, cluster: str, status: str) -> None:
    reason = "Available" if status == "True" else "Installing"
    world.clusters[cluster] = with_condition(
        world.clusters[cluster], "StackReady", status, reason, "upgrading cert-manager"
    )


@pytest.mark.parametrize("status_lag", [0, 1], ids=["fresh-status", "status-a-write-late"])
def test_a_stack_blip_keeps_the_weights_on_a_cluster_with_nothing_placed(status_lag: int) -> None:
    world = staged_on_a_and_b(status_lag)
    stack(world, "b", "False")
    for _ in range(3):
        rsp = world.step()
        assert world.staged() == ["a", "b"]
        assert world.entries()["b"]["phase"] == "Ready"
        assert rsp.condition("Hydrated")[:2] == ("True", "AllClustersReady")
    stack(world, "b", "True")
    world.steps(2)
    assert world.deleted == []
    assert (world.downloads_on("a"), world.downloads_on("b")) == (1, 1)


def test_a_stack_blip_while_the_replica_list_lags_keeps_the_weights() -> None:
    world = staged_on_a_and_b()
    stack(world, "b", "False")
    world.step(replicas=Listing.EMPTY)
    world.step(replicas=Listing.STALE)
    stack(world, "b", "True")
    world.step(clusters=Listing.STALE)
    world.step()
    assert world.deleted == []
    assert world.downloads_on("b") == 1


def test_a_cluster_whose_stack_is_still_installing_is_staged_ahead() -> None:
    world = staged_on_a_and_b()
    installing = gpu_cluster("c")
    world.clusters["c"] = with_condition(installing, "StackReady", "False", "Installing")
    world.steps(2)
    assert world.staged() == ["a", "b", "c"]
    assert world.entries()["c"]["phase"] == "Ready"
