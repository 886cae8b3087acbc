"""A template change reaches the replicas by the rollout strategy, through the FunctionRunner
over several reconciles: at most maxUnavailable replicas stop serving at once, the rollout
advances only as updated replicas serve, a partition and a pause hold it, and its status and
RolledOut condition say where it is."""

from __future__ import annotations

from typing import Any

from modelplane.compose.modeldeployment.rollout import TEMPLATE_HASH, described_generation
from tests.compose.modeldeployment.running import Running
from tests.fleet.builders import deployment, fleet

Obj = dict[str, Any]
FLEET = fleet("a", "b", "c")


def md(image: str = "vllm/vllm-openai:v1", **rollout: Any) -> Obj:
    out = deployment("qwen", replicas=6)
    out["spec"]["template"]["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][
        0
    ]["image"] = image
    if rollout:
        out["spec"]["rollout"] = rollout
    return out


def changed(fleet: Running, before: dict[int, str]) -> list[bool]:
    """Whether each replica, by index, runs another stamp than ``before``."""
    now = fleet.stamps_by_index()
    return [now[i] != before[i] for i in sorted(before)]


def six_serving(composite: Obj) -> Running:
    fleet = Running(FLEET)
    for _ in range(3):
        fleet.reconcile(composite)
    assert fleet.serving() == 6
    return fleet


def test_a_new_image_never_leaves_fewer_serving_than_max_unavailable_allows() -> None:
    fleet = six_serving(md())
    before = fleet.stamps_by_index()
    history = []
    for _ in range(10):
        rsp = fleet.reconcile(md("vllm/vllm-openai:v2", maxUnavailable=2))
        history.append(fleet.serving())
    assert min(history) == 4
    assert changed(fleet, before) == [True] * 6
    assert fleet.serving() == 6
    assert rsp.condition("RolledOut")[:2] == ("True", "Complete")


def test_the_rollout_advances_only_as_updated_replicas_serve() -> None:
    fleet = six_serving(md())
    first = fleet.reconcile(md("vllm/vllm-openai:v2"))
    assert first.status["rollout"] == {"updated": 1, "serving": 0, "remaining": 5}
    # The updated replica restarting holds the rest.
    held = fleet.reconcile(md("vllm/vllm-openai:v2"))
    assert held.status["rollout"]["remaining"] == 5
    assert held.condition("RolledOut")[1] == "Stalled"
    # It serves: the next one is updated.
    advanced = fleet.reconcile(md("vllm/vllm-openai:v2"))
    assert advanced.status["rollout"] == {"updated": 2, "serving": 1, "remaining": 4}


def test_an_updated_replica_that_never_serves_stalls_the_rollout() -> None:
    fleet = six_serving(md())
    before = fleet.stamps_by_index()
    new = md("vllm/vllm-openai:broken")
    fleet.reconcile(new)
    fleet.broken = frozenset(s for i, s in fleet.stamps_by_index().items() if s != before[i])
    for _ in range(5):
        rsp = fleet.reconcile(new)
    assert fleet.serving() == 5
    assert changed(fleet, before) == [True] + [False] * 5
    status, reason, message = rsp.condition("RolledOut")
    assert (status, reason) == ("False", "Stalled")
    assert "held by updated replicas not serving" in message


def test_a_paused_rollout_updates_nothing() -> None:
    fleet = six_serving(md())
    before = fleet.stamps_by_index()
    for _ in range(3):
        rsp = fleet.reconcile(md("vllm/vllm-openai:v2", paused=True))
    assert changed(fleet, before) == [False] * 6
    assert rsp.condition("RolledOut")[1] == "Paused"
    assert rsp.status["rollout"] == {"updated": 0, "serving": 0, "remaining": 6}


def test_a_partition_keeps_the_replicas_below_it_on_what_they_run() -> None:
    fleet = six_serving(md())
    before = fleet.stamps_by_index()
    for _ in range(6):
        rsp = fleet.reconcile(md("vllm/vllm-openai:v2", partition=4))
    assert changed(fleet, before) == [False] * 4 + [True] * 2
    assert rsp.condition("RolledOut")[1] == "PartitionReached"


def test_replicas_stamped_before_the_template_hash_are_not_restarted_by_an_upgrade() -> None:
    fleet = six_serving(md())
    for obj in fleet.observed.values():
        if obj["kind"] == "ModelReplica":
            del obj["metadata"]["annotations"][TEMPLATE_HASH]
    rsp = fleet.reconcile(md())
    assert rsp.status["rollout"] == {"updated": 6, "serving": 6, "remaining": 0}


def test_a_rollout_by_cluster_updates_one_cluster_at_a_time() -> None:
    fleet = six_serving(md())
    before = fleet.stamps_by_index()
    clusters = {
        int(o["metadata"]["labels"]["modelplane.ai/replica-index"]): o["spec"]["clusterName"]
        for o in fleet.observed.values()
        if o["kind"] == "ModelReplica"
    }
    assert len(set(clusters.values())) == 3
    restarting: list[set[str]] = []
    for _ in range(8):
        rsp = fleet.reconcile(md("vllm/vllm-openai:v2", unit="Cluster"))
        now = fleet.stamps_by_index()
        # The clusters whose replicas were updated by this reconcile.
        restarting.append(
            {clusters[i] for i in now if now[i] != before[i]} - set().union(*restarting)
        )
    assert all(len(step) <= 1 for step in restarting)
    assert changed(fleet, before) == [True] * 6
    assert rsp.condition("RolledOut")[1] == "Complete"


def test_every_replica_updated_is_complete_only_once_each_serves() -> None:
    # Issue 38.7: "6 updated (5 serving)" read Complete. With maxUnavailable 6 every replica is
    # restamped at once; the reconcile before they serve again says Progressing.
    fleet = six_serving(md())
    first = fleet.reconcile(md("vllm/vllm-openai:v2", maxUnavailable=6))
    assert first.status["rollout"]["remaining"] == 0
    assert first.status["rollout"]["serving"] < first.status["rollout"]["updated"]
    status, reason, message = first.condition("RolledOut")
    assert (status, reason) == ("False", "Progressing")
    assert "waiting for" in message and "to serve" in message
    for _ in range(3):
        done = fleet.reconcile(md("vllm/vllm-openai:v2", maxUnavailable=6))
    assert fleet.serving() == 6
    assert done.condition("RolledOut")[:2] == ("True", "Complete")


def test_the_rollout_status_names_the_generation_it_describes() -> None:
    fleet = six_serving(md())
    changed_spec = md("vllm/vllm-openai:v2")
    changed_spec["metadata"]["generation"] = 7
    rsp = fleet.reconcile(changed_spec)
    assert rsp.status["rollout"]["observedGeneration"] == 7
    assert rsp.condition("RolledOut")[1] != "Complete"


def test_rolled_out_names_the_generation_it_describes_first_in_its_message() -> None:
    # Crossplane writes the condition apart from status.rollout: it carries its own generation.
    fleet = six_serving(md())
    changed_spec = md("vllm/vllm-openai:v2")
    changed_spec["metadata"]["generation"] = 7
    message = fleet.reconcile(changed_spec).condition("RolledOut")[2]
    assert message.startswith("generation 7: 1 updated (0 serving), 5 to update")
    assert described_generation(message) == 7
