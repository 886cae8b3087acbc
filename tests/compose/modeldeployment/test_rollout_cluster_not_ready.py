"""A cluster whose serving stack goes down mid-rollout (issue 38.4): its replicas are held
there, not moved, and ReplicasScheduled says so at every step (False, ``ClusterNotReady``,
naming the cluster and the replicas held), never True; the rest of the rollout never stops
more serving replicas than maxUnavailable allows; once the stack is back it completes."""

from __future__ import annotations

from tests.compose.modeldeployment.test_rollout_timing import md_at, never_below, truthful
from tests.compose.modeldeployment.timing import World

V2 = "vllm/vllm-openai:v2"


def says_where_it_holds(world: World) -> None:
    """Judge: while replicas stand on a cluster whose stack is down, ReplicasScheduled is not
    True and names it; otherwise it says nothing of it."""
    if world.stepped != "deployment":
        return
    assert world.last is not None
    status, reason, message = world.last.condition("ReplicasScheduled")
    held = {o["spec"]["clusterName"] for o in world.replicas.values()} & world.not_ready
    if held:
        assert (status, reason) == ("False", "ClusterNotReady"), message
        assert all(f"{c} (Unavailable): replicas " in message for c in held), message
    else:
        assert status == "True", message


def test_a_cluster_down_mid_rollout_holds_its_replicas_and_says_so() -> None:
    world = World()
    world.settle(md_at())
    world.judges = [truthful, says_where_it_holds]
    new = md_at(V2)
    world.play(new, "DDR", 2)
    on_c = [
        o["metadata"]["name"] for o in world.replicas.values() if o["spec"]["clusterName"] == "c"
    ]
    assert on_c
    world.stack_down("c")
    world.judges.append(never_below(6 - len(on_c) - 1))
    world.play(new, "DDR", 10)
    # Held, not moved: the same replicas stand on c.
    assert sorted(
        o["metadata"]["name"] for o in world.replicas.values() if o["spec"]["clusterName"] == "c"
    ) == sorted(on_c)
    status, reason, message = world.deployment(new).condition("RolledOut")
    assert (status, reason) == ("False", "Stalled")
    assert all(name in message for name in on_c), message
    world.stack_down("c", down=False)
    world.play(new, "DDR", 30)
    assert world.rolled_out()
    assert world.deployment(new).condition("RolledOut")[:2] == ("True", "Complete")
    assert world.deployment(new).condition("ReplicasScheduled")[0] == "True"
