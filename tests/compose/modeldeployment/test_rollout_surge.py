"""maxSurge: a template change replaces serving replicas make-before-break where the fleet has
room, through the FunctionRunner over several reconciles. A replica counts as serving traffic
while it serves and its ModelEndpoint is composed (a leaving one has lost its endpoint)."""

from __future__ import annotations

from typing import Any

from modelplane.compose.modeldeployment.endpoints import endpoint_key
from modelplane.labels import SURGE_FOR
from tests.compose.modeldeployment.running import Running
from tests.compose.modeldeployment.test_rollout import md
from tests.fleet.builders import inference_class, inference_cluster

Obj = dict[str, Any]
ONE_GPU = inference_class("h100", gpus=1)


def clusters(nodes: int) -> list[Obj]:
    """Three clusters of ``nodes`` one-GPU nodes: 2 hold six replicas exactly, 3 leave room."""
    return [
        inference_cluster(n, {"h100": ("h100", nodes)}, classes=[ONE_GPU]) for n in ("a", "b", "c")
    ]


def six_routed(nodes: int) -> Running:
    fleet = Running(clusters(nodes), classes=[ONE_GPU])
    for _ in range(3):
        fleet.reconcile(md())
    assert fleet.routed() == 6
    return fleet


NEW = md("vllm/vllm-openai:v2", maxSurge=1, maxUnavailable=0)


def test_with_room_a_surge_never_leaves_fewer_than_all_replicas_serving() -> None:
    fleet = six_routed(nodes=3)
    old = fleet.stamps()
    routed = []
    for _ in range(30):
        rsp = fleet.reconcile(NEW)
        routed.append(fleet.routed())
    assert min(routed) == 6
    assert fleet.stamps().isdisjoint(old)
    assert len(fleet.replicas()) == 6
    assert rsp.condition("RolledOut")[:2] == ("True", "Complete")


def test_a_replica_list_that_lags_a_deletion_revives_no_deleted_replica() -> None:
    fleet = six_routed(nodes=3)
    fleet.lagging = True
    created: list[str] = []
    routed = []
    for _ in range(30):
        before = set(fleet.replicas())
        fleet.reconcile(NEW)
        created += sorted(set(fleet.replicas()) - before)
        routed.append(fleet.routed())
    assert len(created) == 6, created  # one new replica per old one, none composed twice
    assert min(routed) == 6
    assert len(fleet.replicas()) == 6


def test_the_surge_replica_is_placed_beside_the_old_one_and_status_counts_it() -> None:
    fleet = six_routed(nodes=3)
    before = set(fleet.replicas())
    rsp = fleet.reconcile(NEW)
    assert rsp.status["rollout"] == {"updated": 0, "serving": 0, "remaining": 6, "surge": 1}
    assert rsp.status["replicas"]["total"] == 6
    [surge] = set(fleet.replicas()) - before
    replaced = fleet.replicas()[surge]["metadata"]["annotations"][SURGE_FOR]
    assert replaced in {o["metadata"]["name"] for o in fleet.replicas().values()}
    assert "1 surging beside them" in rsp.condition("RolledOut")[2]


def test_the_old_replica_loses_its_endpoint_before_it_is_deleted() -> None:
    fleet = six_routed(nodes=3)
    for _ in range(30):
        before = fleet.observed
        fleet.reconcile(NEW)
        for key in set(before) - set(fleet.observed):
            if before[key]["kind"] == "ModelReplica":
                assert endpoint_key(key) not in before, key


def test_at_most_max_surge_replicas_are_placed_beside_the_old_ones() -> None:
    fleet = six_routed(nodes=3)
    for _ in range(30):
        rsp = fleet.reconcile(md("vllm/vllm-openai:v2", maxSurge=2, maxUnavailable=0))
        assert rsp.status["rollout"].get("surge", 0) <= 2
        assert len(fleet.replicas()) <= 8
    assert fleet.routed() == 6


def test_without_room_replicas_are_updated_in_place_as_max_unavailable_allows() -> None:
    fleet = six_routed(nodes=2)
    names = set(fleet.replicas())
    routed = []
    for _ in range(20):
        rsp = fleet.reconcile(md("vllm/vllm-openai:v2", maxSurge=1, maxUnavailable=1))
        routed.append(fleet.routed())
        assert "surge" not in rsp.status["rollout"]
    assert min(routed) == 5
    assert set(fleet.replicas()) == names
    assert rsp.condition("RolledOut")[1] == "Complete"


def test_without_room_and_max_unavailable_0_no_serving_replica_stops() -> None:
    fleet = six_routed(nodes=2)
    old = fleet.stamps()
    for _ in range(4):
        rsp = fleet.reconcile(NEW)
        assert fleet.routed() == 6
    assert fleet.stamps() == old
    status, reason, message = rsp.condition("RolledOut")
    assert (status, reason) == ("False", "Stalled")
    assert "no room for a surge replica" in message


def test_a_surge_replica_that_never_serves_keeps_the_old_one_serving() -> None:
    fleet = six_routed(nodes=3)
    old = fleet.stamps()
    fleet.reconcile(NEW)
    fleet.broken = frozenset(fleet.stamps() - old)
    for _ in range(6):
        rsp = fleet.reconcile(NEW)
        assert fleet.routed() == 6
    assert len(fleet.replicas()) == 7
    status, reason, message = rsp.condition("RolledOut")
    assert (status, reason) == ("False", "Stalled")
    assert "held by updated replicas not serving" in message


def test_a_paused_rollout_places_no_surge() -> None:
    fleet = six_routed(nodes=3)
    names = set(fleet.replicas())
    for _ in range(3):
        rsp = fleet.reconcile(md("vllm/vllm-openai:v2", maxSurge=1, paused=True))
    assert set(fleet.replicas()) == names
    assert rsp.condition("RolledOut")[1] == "Paused"
