"""A rollout behind a ModelService on real timing: an updated replica counts as available only
once the service routes it again (issue 38.2). Each restart is kill first at one copy (the
replica serves nothing, and says so, for a round), and the service reconciles on its own slower
schedule. Judged after every step against what the clusters run and what the route applied on
the cluster names: replicas serving and routed never fall below ``replicas - maxUnavailable``,
and ``RolledOut`` is Complete only once every replica serves its stamp and is routed."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from modelplane.compose.modeldeployment.reroute import REROUTE
from tests.compose.modeldeployment.test_rollout_timing import md_at, truthful
from tests.compose.modeldeployment.timing import World
from tests.fleet.builders import with_condition

V2 = "vllm/vllm-openai:v2"


def routed_never_below(floor: int) -> Any:
    def judge(world: World) -> None:
        now = world.serving_and_routed()
        assert now >= floor, f"{now} replicas serving and routed after a {world.stepped} step"

    return judge


def behind_a_service(lag: int = 0, endpoint_lag: bool = False) -> World:
    world = World(lag=lag, restart_rounds=1, service=True, endpoint_lag=endpoint_lag)
    world.settle(md_at())
    assert world.serving_and_routed() == 6
    world.judges = [truthful]
    return world


@pytest.mark.parametrize(
    ("pattern", "lag"),
    [
        ("DRDRS", 0),  # the service reconciles every other round
        ("DDRDRDRS", 0),  # requeued on its own write, the service slower still
        ("DRDRS", 1),  # replica status a round late too
        ("DRSS", 0),  # the service on a faster poll: it routes a replica still restarting
    ],
)
@pytest.mark.parametrize("max_unavailable", [1, 2])
def test_an_updated_replica_counts_only_once_its_service_routes_it_again(
    pattern: str, lag: int, max_unavailable: int
) -> None:
    # Issue 38.2: the next replica was updated as soon as the previous one reported serving,
    # before the ModelService put its lane back: one below the floor on every step.
    world = behind_a_service(lag)
    world.judges.append(routed_never_below(6 - max_unavailable))
    new = md_at(V2, maxUnavailable=max_unavailable)
    world.play(new, pattern, 60)
    assert world.rolled_out()
    assert world.deployment(new).condition("RolledOut")[:2] == ("True", "Complete")
    # Routed again, nothing is left recorded to wait for.
    assert not any(
        REROUTE in (o["metadata"].get("annotations") or {}) for o in world.replicas.values()
    )


def test_a_rollout_by_cluster_waits_for_each_cluster_to_be_routed_again() -> None:
    # Issue 38.2: with unit Cluster, a cluster's replicas serving again but withdrawn from the
    # routes left 2 of 6 serving and routed when the next cluster restarted.
    world = behind_a_service()
    world.judges.append(routed_never_below(4))
    new = md_at(V2, unit="Cluster")
    world.play(new, "DRDRS", 60)
    assert world.rolled_out()
    assert world.deployment(new).condition("RolledOut")[:2] == ("True", "Complete")


def test_a_deleted_service_releases_the_replicas_it_routed() -> None:
    # A route recorded on an updated replica that is gone (asked for by name, absent) holds
    # nothing: its ModelService was deleted, and no lane is coming back.
    world = behind_a_service()
    new = md_at(V2)
    world.play(new, "DR", 1)
    assert any(REROUTE in (o["metadata"].get("annotations") or {}) for o in world.replicas.values())
    world.route = None
    world.play(new, "DR", 30)
    assert world.rolled_out()
    assert world.deployment(new).condition("RolledOut")[:2] == ("True", "Complete")


def gateway_down(world: World, cluster: str) -> None:
    """The cluster says its gateway has no address: its endpoints are withdrawn, and what
    runs there, serving or not, is routed nowhere."""
    world.fleet = [
        with_condition(_address(c, None), "GatewayReady", "False", "NoAddress")
        if c["metadata"]["name"] == cluster
        else c
        for c in world.fleet
    ]
    world.unreachable.add(cluster)


def _address(cluster: Any, address: str | None) -> Any:
    """The cluster with its gateway's address published (None: withdrawn)."""
    out = copy.deepcopy(cluster)
    gateway = out["status"]["gateway"]
    gateway.pop("address", None)
    if address is not None:
        gateway["address"] = address
    return out


def test_replicas_behind_a_gateway_that_is_down_do_not_count_as_available() -> None:
    # Issue 38.2: a cluster's gateway down, its replicas still counted as serving while their
    # endpoints were withdrawn: the rollout restarted replicas elsewhere, leaving 2 of 6 serving
    # and routed. What cannot be reached is updated first (it costs nothing); nothing else
    # restarts while the floor is already spent.
    world = behind_a_service()
    gateway_down(world, "c")
    world.play(md_at(), "DRS", 2)
    lost = world.serving_and_routed()
    assert lost < 6
    world.judges.append(routed_never_below(lost))
    new = md_at(V2)
    before = world.stamps()
    world.play(new, "DRDRS", 20)
    on_c = {i for i, o in _by_index(world).items() if o["spec"]["clusterName"] == "c"}
    assert {i for i in range(6) if world.stamps()[i] != before[i]} == on_c
    # It cannot say Complete: two replicas serve and are reached by no route.
    assert world.deployment(new).condition("RolledOut")[0] == "False"
    assert world.serving_and_routed() == lost


def _by_index(world: World) -> dict[int, Any]:
    return {
        int(o["metadata"]["labels"]["modelplane.ai/replica-index"]): o
        for o in world.replicas.values()
    }


def test_a_replica_held_before_it_is_routed_again_gets_its_lane_back() -> None:
    # A replica updated, then outdated again by a paused edit while it waits to be routed
    # again, is held as it runs: its record moves on all the same, so its endpoint comes back
    # and it is routed again, not withdrawn for as long as the rollout is paused.
    world = behind_a_service()
    world.judges.append(routed_never_below(5))
    world.play(md_at(V2), "DR", 1)
    assert any(REROUTE in (o["metadata"].get("annotations") or {}) for o in world.replicas.values())
    paused = md_at("vllm/vllm-openai:v3", paused=True)
    world.play(paused, "DRDRS", 10)
    assert world.serving_and_routed() == 6
    assert world.deployment(paused).condition("RolledOut")[:2] == ("False", "Paused")
    assert not any(
        REROUTE in (o["metadata"].get("annotations") or {}) for o in world.replicas.values()
    )


def test_a_surge_s_old_replica_is_released_only_once_the_new_one_is_routed() -> None:
    # Surges trusted ModelServing alone: the old replica left as soon as its replacement said
    # it served, before the ModelService (which adds a lane a reconcile after it sees the
    # endpoint) routed the new one: one below spec.replicas routed.
    world = behind_a_service(endpoint_lag=True)
    world.judges.append(routed_never_below(6))
    new = md_at(V2, maxSurge=1, maxUnavailable=0)
    world.play(new, "DRDRS", 60)
    assert world.rolled_out() and len(world.replicas) == 6
    assert world.deployment(new).condition("RolledOut")[:2] == ("True", "Complete")


def test_a_moved_replica_leaves_only_once_its_replacement_is_routed() -> None:
    # Moves trusted ModelServing alone: a drained cluster's replica left as soon as its
    # replacement said it served, before the ModelService routed the replacement.
    world = behind_a_service(endpoint_lag=True)
    world.judges.append(routed_never_below(6))
    world.fleet = [
        {**c, "spec": {**c["spec"], "taints": [{"key": "maintenance", "effect": "NoExecute"}]}}
        if c["metadata"]["name"] == "c"
        else c
        for c in world.fleet
    ]
    world.play(md_at(), "DRDRS", 30)
    assert all(o["spec"]["clusterName"] != "c" for o in world.replicas.values())
    assert len(world.replicas) == 6 and world.serving_and_routed() == 6


def gateway_up(world: World, cluster: str) -> None:
    """The cluster's gateway has its address again."""
    world.fleet = [
        with_condition(_address(c, "10.0.0.9"), "GatewayReady", "True", "Programmed")
        if c["metadata"]["name"] == cluster
        else c
        for c in world.fleet
    ]
    world.unreachable.discard(cluster)


def routed_never_below_the_floor_or_before(floor: int) -> Any:
    """Judge: after every step, no fewer replicas serve and are routed than ``floor``, or than
    before the step while fewer did (a gateway coming back is routed only as its service
    reconciles)."""
    before: list[int] = []

    def judge(world: World) -> None:
        now = world.serving_and_routed()
        if before:
            assert now >= min(floor, before[-1]), f"{now} routed after {before[-1]}"
        before.append(now)

    return judge


def test_replicas_behind_a_gateway_that_comes_back_count_once_routed_and_the_rollout_goes_on() -> (
    None
):
    world = behind_a_service(endpoint_lag=True)
    gateway_down(world, "c")
    world.play(md_at(), "DRS", 2)
    new = md_at(V2)
    world.play(new, "DRDRS", 10)
    world.judges.append(routed_never_below_the_floor_or_before(5))
    gateway_up(world, "c")
    rsp = world.deployment(new)
    # Back, but not routed yet: they count for nothing until the service routes them.
    on_c = [o for o in world.replicas.values() if o["spec"]["clusterName"] == "c"]
    assert on_c and not any(world.routed(o["metadata"]["name"]) for o in on_c)
    assert rsp.status["rollout"]["serving"] <= world.serving_and_routed()
    world.play(new, "DRDRS", 60)
    assert world.rolled_out() and world.serving_and_routed() == 6
    assert world.deployment(new).condition("RolledOut")[:2] == ("True", "Complete")
