"""A cache's claim outlives the replicas that mount it.

When the cache's clusterSelector stops matching a cluster, its replicas there are moved make
before break: they keep reading the weights until their replacements serve. So the cluster
keeps its claim, and says why, until the replicas are read and none of the cache's is on it;
a list that lags, comes back empty or is not read yet is no evidence of that. Judged after
every step (world.py)."""

from __future__ import annotations

import pytest

from tests.compose.modelcache.test_modelcache import cache
from tests.compose.modelcache.world import Listing, World, gpu_cluster, mounting
from tests.fleet.builders import deployment


def staged_on_gold(status_lag: int = 0) -> World:
    """Clusters a (zone 1) and b (zone 2) selected as tier gold, a replica mounting on each."""
    md = deployment("qwen", replicas=2)
    md["spec"]["template"]["spec"]["modelCacheRef"] = {"name": "weights"}
    world = World.of(
        cache(selector={"tier": "gold"}, resolved=False),
        [gpu_cluster("a", {"tier": "gold", "zone": "1"}), gpu_cluster("b", {"tier": "gold"})],
        deployments=[md],
        replicas=[mounting("qwen-a-0", "a"), mounting("qwen-b-1", "b")],
    )
    world.steps(3)
    assert world.staged() == ["a", "b"]
    world.status_lag = status_lag
    return world


def narrowed(world: World) -> None:
    """The cache's clusterSelector edited to stop matching b."""
    world.cache["spec"]["clusterSelector"] = {"matchLabels": {"zone": "1"}}


def kept(world: World) -> str:
    assert world.staged() == ["a", "b"]
    return str(world.entries()["b"].get("message", ""))


@pytest.mark.parametrize("status_lag", [0, 1], ids=["fresh-status", "status-a-write-late"])
def test_the_claim_stays_until_the_replicas_moved_make_before_break_are_gone(
    status_lag: int,
) -> None:
    world = staged_on_gold(status_lag)
    narrowed(world)
    rsp = world.step()
    assert kept(world).endswith("kept while these ModelReplicas mount it: qwen-b-1")
    assert rsp.condition("Hydrated") == (
        "True",
        "AllClustersReady",
        "2 of 2 clusters ready; kept until no ModelReplica mounts its claim: b",
    )
    world.step(replicas=Listing.EMPTY)
    assert "no ModelReplica is listed while ModelDeployment qwen references" in kept(world)
    world.step(replicas=Listing.UNREAD)
    assert "kept until the ModelReplicas that may mount it are read" in kept(world)
    world.replicas.append(mounting("qwen-a-2", "a"))  # the replacement, placed first
    world.step()
    kept(world)
    world.replicas = [r for r in world.replicas if r["metadata"]["name"] != "qwen-b-1"]
    world.step(replicas=Listing.STALE)  # the list still holds the one just deleted
    kept(world)
    rsp = world.step()
    assert world.staged() == ["a"]
    assert world.deleted == [("b", [])]
    assert rsp.condition("Hydrated") == ("True", "AllClustersReady", "1 of 1 clusters ready")


def test_a_cluster_no_longer_selected_with_no_replica_on_it_loses_its_claim() -> None:
    world = staged_on_gold()
    world.replicas = [mounting("qwen-a-0", "a"), mounting("qwen-a-1", "a")]
    narrowed(world)
    world.step()
    assert world.staged() == ["a"]


def test_with_nothing_referencing_the_cache_an_empty_replica_list_is_evidence() -> None:
    world = staged_on_gold()
    world.deployments, world.replicas = [], []
    narrowed(world)
    world.step()
    assert world.staged() == ["a"]


def test_a_cluster_relabelled_out_of_the_selector_keeps_its_claim_for_its_replicas() -> None:
    world = staged_on_gold()
    world.clusters["b"]["metadata"]["labels"] = {"tier": "silver"}
    world.step()
    assert kept(world).endswith("mount it: qwen-b-1")
