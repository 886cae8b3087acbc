"""Replicas placed before their ModelCache's tag resolved start unpinned (issue 38.9): each then
follows the cache's revision at once, outside any rollout. Through the FunctionRunner over many
reconciles of the cache and its deployment: once the cache resolves, they are pinned to what
they read a few at a time (by ``maxUnavailable``), below a partition too; a later revision
change then moves only the replicas from the partition on, one at a time, and the rollout says
``PartitionReached`` once it is complete up to the partition: the safe moment to change the
revision again or lower the partition."""

from __future__ import annotations

from tests.compose.test_revision_rollout import World, cache, md, reconciled

COMMITTED = {i: "v1" for i in range(6)}


def created_before_the_cache_resolved(partition: int) -> tuple[World, list[int]]:
    """A deployment and its cache created together: the first replicas are placed before the
    tag resolves. Rounds until every replica serves pinned; how many served after each."""
    world = World(md(partition=partition), "v1")
    world.round()  # placed while the cache's tag is not resolved yet
    assert set(world.pins().values()) == {"None"}
    history = []
    for _ in range(30):
        world.round()
        history.append(len(world.serving_reads()))
        if world.pins() == COMMITTED == world.serving_reads():
            return world, history
    raise AssertionError(world.pins())


def test_replicas_placed_unpinned_are_pinned_below_the_partition_too() -> None:
    world, _ = created_before_the_cache_resolved(partition=3)
    assert world.pins() == COMMITTED


def test_replicas_placed_unpinned_are_pinned_a_few_at_a_time() -> None:
    _, history = created_before_the_cache_resolved(partition=3)
    first = history.index(6)
    assert min(history[first:]) >= 5


def test_a_revision_change_moves_only_the_replicas_from_the_partition_on() -> None:
    world, _ = created_before_the_cache_resolved(partition=3)
    world.mc = {**cache("v2"), "status": world.mc["status"]}
    world.finishing = set()
    history = reconciled(world, 20, {0: "a", 1: "b", 2: "c"}, new="v2")
    # The replicas below the partition never restart: they read v1, pinned.
    assert min(serving for _, serving in history) >= 5
    assert world.pins() == {0: "v1", 1: "v1", 2: "v1", 3: "v2", 4: "v2", 5: "v2"}
    status, reason, message = history[-1][0].condition("RolledOut")
    assert (status, reason) == ("False", "PartitionReached")
    assert "complete up to the partition" in message


def test_rolled_out_says_partition_reached_only_once_the_updated_replicas_serve() -> None:
    world, _ = created_before_the_cache_resolved(partition=3)
    world.mc = {**cache("v2"), "status": world.mc["status"]}
    world.finishing = set()
    history = reconciled(world, 20, {0: "a", 1: "b", 2: "c"}, new="v2")
    for rsp, serving in history:
        if rsp.condition("RolledOut")[1] == "PartitionReached":
            assert serving == 6
