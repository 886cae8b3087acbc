"""A deployment scaled in while a rollout is under way, through the FunctionRunner over several
reconciles: the replicas that leave are ones the rollout has yet to update (removing one both
scales in and advances the rollout), manual and autoscaled alike, and scaling and rolling count
against one budget: the scale-in never leaves fewer replicas taking traffic than the strategy
allows to be unavailable at once, nor places more than its surge allows."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.compose.modeldeployment.running import Running
from tests.compose.modeldeployment.test_rollout import md
from tests.compose.modeldeployment.test_rollout_surge import ONE_GPU, clusters
from tests.fleet.builders import (
    engine,
    inference_class,
    inference_cluster,
    is_serving,
    member,
    priced,
    stamp_of,
    with_condition,
)

Obj = dict[str, Any]
NEW_IMAGE = "vllm/vllm-openai:v2"


CHEAP, DEAR = priced(inference_class("cheap"), 1), priced(inference_class("dear"), 9)
# One whole-node replica per cluster: index 0 on the cheap one, index 1 on the dear one.
CLUSTERS = [
    inference_cluster("a", {"p": ("cheap", 1)}, classes=[CHEAP]),
    inference_cluster("b", {"p": ("dear", 1)}, classes=[DEAR]),
]


def two(image: str = "vllm/vllm-openai:v1", *, autoscaled: bool = False) -> Obj:
    out = md(image)
    out["spec"]["replicas"] = 2
    [main] = out["spec"]["template"]["spec"]["engines"]
    whole = engine("main", member(gpus=8))
    whole["members"][0]["template"] = main["members"][0]["template"]
    out["spec"]["template"]["spec"]["engines"] = [whole]
    if autoscaled:
        out["spec"]["autoscaling"] = {
            "minReplicas": 1,
            "maxReplicas": 3,
            "targets": {"waitingRequestsPerReplica": 4},
        }
    return out


def scaled(composite: Obj, replicas: int) -> Obj:
    out = copy.deepcopy(composite)
    out["spec"]["replicas"] = replicas
    return out


def updated_on_b_only(autoscaled: bool) -> tuple[Running, dict[str, str]]:
    """Two serving replicas (a's index 0, b's index 1), the rollout of a new image under way:
    b's replica, down when the image changed, was updated first (what serves nothing is
    updated whatever the budget) and serves it; a's still runs the old one. With each
    replica's stamp before the change, by key."""
    pair = Running(CLUSTERS, classes=[CHEAP, DEAR])
    for _ in range(3):
        pair.reconcile(two(autoscaled=autoscaled))
    before = {k: stamp_of(o) for k, o in pair.replicas().items()}
    assert {o["spec"]["clusterName"] for o in pair.replicas().values()} == {"a", "b"}
    [on_b] = [k for k, o in pair.replicas().items() if o["spec"]["clusterName"] == "b"]
    pair.observed[on_b] = with_condition(pair.observed[on_b], "ModelServing", "False")
    new = two(NEW_IMAGE, autoscaled=autoscaled)
    for _ in range(2):
        rsp = pair.reconcile(new)
    assert rsp.status["rollout"]["remaining"] == 1
    assert stamp_of(pair.observed[on_b]) != before[on_b]
    assert is_serving(pair.observed[on_b])
    return pair, before


@pytest.mark.parametrize(
    "autoscaled",
    [
        # Balance alone would take b's (the later cluster name): the updated one.
        pytest.param(False, id="manual"),
        # The cost order alone would take b's (the dearer capacity): the updated one.
        pytest.param(True, id="autoscaled"),
    ],
)
def test_a_scale_in_during_a_rollout_removes_the_outdated_replica(autoscaled: bool) -> None:
    pair, before = updated_on_b_only(autoscaled=autoscaled)
    new = two(NEW_IMAGE, autoscaled=autoscaled)
    for _ in range(3):
        rsp = pair.reconcile(scaled(new, 1))
    [(key, left)] = pair.replicas().items()
    assert left["spec"]["clusterName"] == "b"
    assert stamp_of(left) != before[key]
    assert rsp.condition("RolledOut")[:2] == ("True", "Complete")


def test_the_outdated_replica_leaves_without_being_updated_first() -> None:
    pair, before = updated_on_b_only(autoscaled=False)
    pair.reconcile(scaled(two(NEW_IMAGE), 1))
    restamped = [k for k, o in pair.replicas().items() if stamp_of(o) != before[k]]
    assert [pair.observed[k]["spec"]["clusterName"] for k in restamped] == ["b"]


def test_a_scale_in_keeps_the_replicas_below_the_partition_on_what_they_run() -> None:
    # Below the partition a replica is not the rollout's to update: no scale-in prefers it.
    fleet = Running(clusters(3), classes=[ONE_GPU])
    for _ in range(3):
        fleet.reconcile(md())
    before = {_index(o): stamp_of(o) for o in fleet.replicas().values()}
    canary = md(NEW_IMAGE, partition=3)
    for _ in range(8):
        fleet.reconcile(canary)
    assert fleet.history[-1].condition("RolledOut")[1] == "PartitionReached"
    for _ in range(3):
        fleet.reconcile(scaled(canary, 3))
    assert {_index(o): stamp_of(o) for o in fleet.replicas().values()} == {
        i: before[i] for i in range(3)
    }


def _index(replica: Obj) -> int:
    return int(replica["metadata"]["labels"]["modelplane.ai/replica-index"])


# --- one budget: six replicas on clusters a, b and c, scaled in at each point of a rollout -------


def scaled_in_at(rolling: Obj, at: int, to: int) -> tuple[Running, list[tuple[int, int, int]]]:
    """Six replicas serving, then ``rolling`` (a new image) applied, scaled in to ``to``
    replicas from its reconcile ``at`` on: the fleet, and after each reconcile the replicas
    asked for, those composed but draining ones (which take no traffic), and those routed."""
    fleet = Running(clusters(3), classes=[ONE_GPU])
    for _ in range(3):
        fleet.reconcile(md())
    seen = []
    for step in range(at + 20):
        wanted = 6 if step < at else to
        rsp = fleet.reconcile(scaled(rolling, wanted))
        placed = len(fleet.replicas()) - rsp.status["replicas"].get("draining", 0)
        seen.append((wanted, placed, fleet.routed()))
    return fleet, seen


def test_a_scale_in_during_a_rollout_leaves_no_fewer_routed_than_max_unavailable_allows() -> None:
    for at in range(18):
        fleet, seen = scaled_in_at(md(NEW_IMAGE, maxUnavailable=1), at, 2)
        assert all(routed >= wanted - 1 for wanted, _, routed in seen), (at, seen)
        assert len(fleet.replicas()) == 2
        assert fleet.history[-1].condition("RolledOut")[:2] == ("True", "Complete")


def test_a_scale_in_during_a_surge_rollout_stays_within_its_surge() -> None:
    # A surge replica may be in flight when the scale-in comes, or the old one it replaces.
    for at in range(18):
        fleet, seen = scaled_in_at(md(NEW_IMAGE, maxSurge=1, maxUnavailable=0), at, 4)
        assert all(placed <= wanted + 1 for wanted, placed, _ in seen), (at, seen)
        assert all(routed >= wanted for wanted, _, routed in seen), (at, seen)
        assert len(fleet.replicas()) == 4
        assert fleet.history[-1].condition("RolledOut")[:2] == ("True", "Complete")
