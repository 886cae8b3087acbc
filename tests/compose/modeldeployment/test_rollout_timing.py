"""A rollout on real timing: the deployment requeued on its own write before any replica
reports, replica status landing a round late, broken replicas at any index, a scale-up in the
same edit. Judged after every step against what the clusters really run: serving replicas never
fall below ``spec.replicas - maxUnavailable`` (nor, below it, below what served before), and
``RolledOut`` says only what is true at that step (issue 38)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.compose.modeldeployment.test_rollout import md
from tests.compose.modeldeployment.timing import World
from tests.fleet.builders import stamp_of

Obj = dict[str, Any]
V2 = "vllm/vllm-openai:v2"


def never_below(floor: int) -> Any:
    """Judge: after every step, no fewer replicas serve than ``floor``, or than served before
    the step while fewer did (a scale-up starts below it)."""
    before: list[int] = []

    def judge(world: World) -> None:
        now = world.serving_count()
        if before:
            assert now >= min(floor, before[-1]), f"{now} serving after {before[-1]}"
        before.append(now)

    return judge


def truthful(world: World) -> None:
    """Judge: RolledOut and status.rollout say only what the clusters run: Complete and the
    count serving the new template at every step (nothing the deployment does not know of
    changes them); what holds the rollout when it is said, unless the status it is read from
    lands late (it is then as late)."""
    rsp = world.last
    assert rsp is not None
    status, reason, message = rsp.condition("RolledOut")
    if status == "True":
        assert world.rolled_out(), f"{reason} while a replica does not serve its stamp"
    current = sum(
        1
        for o in world.replicas.values()
        if (run := world.runs.get(o["metadata"]["name"])) is not None
        and run.up
        and run.stamp == stamp_of(o)
    )
    assert rsp.status["rollout"]["serving"] <= current
    fresh = world.stepped == "deployment" and not world.lag
    if fresh and "held by updated replicas not serving: " in message:
        held = message.split("held by updated replicas not serving: ")[1].split(", ")
        for name in held:
            run = world.runs.get(name)
            assert run is None or not run.up, f"Stalled by {name}, which serves"


def serving_first_template(replicas: int = 6, lag: int = 0, broken: int | None = None) -> World:
    """Every replica serving the first template; with ``broken``, the replica at that index
    then stops serving it (reported before the test goes on)."""
    world = World(lag=lag)
    world.settle(md_at(replicas=replicas))
    if broken is not None:
        old, name = world.stamps()[broken], name_at(world, broken)
        world.broken = lambda n, stamp: n == name and stamp == old
        world.play(md_at(replicas=replicas), "DR", 2 + lag)
    world.judges = [truthful]
    return world


def md_at(image: str = "vllm/vllm-openai:v1", replicas: int = 6, **rollout: Any) -> Obj:
    out = md(image, **rollout)
    out["spec"]["replicas"] = replicas
    return out


def name_at(world: World, index: int) -> str:
    [name] = [
        o["metadata"]["name"]
        for o in world.replicas.values()
        if o["metadata"]["labels"]["modelplane.ai/replica-index"] == str(index)
    ]
    return str(name)


@pytest.mark.parametrize(
    ("pattern", "lag"),
    [
        ("DDDR", 0),  # requeued on its own write twice before any replica reconciles
        ("DR", 1),  # each replica's status lands a round late
        ("DDRDR", 1),  # both
    ],
)
@pytest.mark.parametrize("max_unavailable", [1, 2])
def test_a_deployment_reconciled_before_its_replicas_report_never_exceeds_max_unavailable(
    pattern: str, lag: int, max_unavailable: int
) -> None:
    # Issue 38.1: a status written before the restamp said the updated replica served, and the
    # next one was updated: 4 of 6 serving after one extra requeue, 3 after two.
    world = serving_first_template(lag=lag)
    world.judges.append(never_below(6 - max_unavailable))
    new = md_at(V2, maxUnavailable=max_unavailable)
    before = world.stamps()
    world.play(new, pattern, 30)
    assert world.lowest == 6 - max_unavailable
    assert all(world.stamps()[i] != before[i] for i in range(6))
    assert world.rolled_out()
    assert world.deployment(new).condition("RolledOut")[:2] == ("True", "Complete")


@pytest.mark.parametrize(("pattern", "lag"), [("DDDR", 0), ("DR", 1)])
def test_a_rollout_by_cluster_restarts_one_cluster_at_a_time_on_real_timing(
    pattern: str, lag: int
) -> None:
    # Issue 38.1: with unit Cluster, stale status restarted all six at once while RolledOut
    # said Complete.
    world = serving_first_template(lag=lag)

    def one_cluster_down(world: World) -> None:
        down = {
            o["spec"]["clusterName"]
            for o in world.replicas.values()
            if not world.runs[o["metadata"]["name"]].up
        }
        assert len(down) <= 1, f"clusters restarting together: {sorted(down)}"

    world.judges.append(one_cluster_down)
    new = md_at(V2, unit="Cluster")
    world.play(new, pattern, 30)
    assert world.rolled_out()
    assert world.deployment(new).condition("RolledOut")[:2] == ("True", "Complete")


@pytest.mark.parametrize("index", [0, 5])
def test_an_outdated_replica_that_serves_nothing_is_updated_first_whatever_its_index(
    index: int,
) -> None:
    # Issue 38.3: at a high index, the replica serving nothing spent the budget, the walk
    # stopped at the first serving replica, and the rollout never started.
    world = serving_first_template(broken=index)
    old = world.stamps()[index]
    assert world.serving_count() == 5
    world.judges.append(never_below(5))
    new = md_at(V2)
    world.play(new, "DDR", 4)
    # The new template mends it, and the rollout goes on a replica at a time.
    assert world.stamps()[index] != old
    world.play(new, "DDR", 30)
    assert world.rolled_out()
    assert world.deployment(new).condition("RolledOut")[:2] == ("True", "Complete")


def test_a_broken_replica_the_update_does_not_mend_stalls_the_rollout_and_says_which() -> None:
    # Issue 38.3: a broken replica blocking progress read Progressing for good.
    world = serving_first_template(broken=5)
    broken = name_at(world, 5)
    world.broken = lambda name, stamp: name == broken
    world.judges.append(never_below(5))
    before = world.stamps()
    new = md_at(V2)
    world.play(new, "DDDR", 10)
    # Updated (it cost nothing), it still serves nothing: it holds every serving replica.
    assert [world.stamps()[i] != before[i] for i in range(6)] == [False] * 5 + [True]
    status, reason, message = world.deployment(new).condition("RolledOut")
    assert (status, reason) == ("False", "Stalled")
    assert message.endswith(f"held by updated replicas not serving: {broken}")


@pytest.mark.parametrize(("pattern", "lag"), [("DR", 0), ("DDDR", 0), ("DR", 1)])
def test_a_scale_up_with_a_new_image_restarts_no_serving_replica_until_the_new_ones_serve(
    pattern: str, lag: int
) -> None:
    # Issue 38.5: the three new placements (not serving yet) did not count as unavailable,
    # so a serving replica was restarted in the same reconcile.
    world = serving_first_template(replicas=3, lag=lag)
    world.judges.append(never_below(5))
    new = md_at(V2, replicas=6)
    world.play(new, pattern, 30)
    assert world.lowest == 3
    assert world.rolled_out() and len(world.replicas) == 6
    assert world.deployment(new).condition("RolledOut")[:2] == ("True", "Complete")


@pytest.mark.parametrize(("pattern", "lag"), [("DR", 0), ("DDDR", 0), ("DR", 1)])
def test_a_cluster_deleted_mid_rollout_stops_no_serving_replica_until_its_own_are_replaced(
    pattern: str, lag: int
) -> None:
    # Issue 38.5: the deleted cluster's replicas were re-placed (new, not serving) while another
    # serving replica was updated in the same reconcile.
    world = serving_first_template(lag=lag)
    new = md_at(V2)
    world.play(new, pattern, 3)
    lost = {
        o["metadata"]["name"] for o in world.replicas.values() if o["spec"]["clusterName"] == "c"
    }
    assert lost
    world.delete_cluster("c")
    world.judges.append(never_below(5))
    world.play(new, pattern, 40)
    assert all(o["spec"]["clusterName"] != "c" for o in world.replicas.values())
    assert world.rolled_out() and len(world.replicas) == 6
    assert world.deployment(new).condition("RolledOut")[:2] == ("True", "Complete")


@pytest.mark.parametrize(("pattern", "lag"), [("DDDR", 0), ("DR", 1)])
def test_rolled_out_is_complete_only_once_every_replica_reports_serving_its_stamp(
    pattern: str, lag: int
) -> None:
    # Issue 38.7: "6 updated (5 serving)" read Complete, and Complete at 0 serving. With
    # maxUnavailable 6 every replica restarts at once: the truthful judge holds at every step.
    world = serving_first_template(lag=lag)
    new = md_at(V2, maxUnavailable=6)
    said: list[str] = []
    for _ in range(8):
        world.play(new, pattern, 1)
        assert world.last is not None
        said.append(world.last.condition("RolledOut")[1])
    assert said[0] == "Progressing"
    assert said[-1] == "Complete"
    assert world.rolled_out()
