"""A delete that a Usage refused is replayed later, whatever became of it (issue 38.8): scale
6 to 5 while the deployment's lists of routes and Usages lag, so Crossplane deletes the leaving
replica while the ModelService still holds it; the webhook refuses and records the attempt.
Scaled back to 6, that replica is wanted again, and the next release of its Usage (a rollout
withdrawing its endpoint) would delete it, serving or not. Judged after every step: a replayed
delete only ever removes a replica the deployment let go (draining), serving-and-routed replicas
never fall below ``replicas - maxUnavailable`` once it is back to 6, and a doomed replica is
replaced under a new name before it goes."""

from __future__ import annotations

from modelplane.compose.modeldeployment.doomed import DELETION_ATTEMPT
from tests.compose.modeldeployment.test_rollout_routed import behind_a_service, routed_never_below
from tests.compose.modeldeployment.test_rollout_timing import md_at, name_at
from tests.compose.modeldeployment.timing import World

V2 = "vllm/vllm-openai:v2"


def replayed_only_on_what_leaves(world: World) -> None:
    """Judge: no replayed delete removes a replica the deployment still wants."""
    wanted = [name for name, draining in world.replayed if not draining]
    assert not wanted, f"a replayed delete removed {wanted}, which the deployment still wants"


def doomed() -> tuple[World, str]:
    """Six replicas behind a service; scaled to 5 while the lists lag, the delete of the
    leaving one is refused and recorded; then the lists catch up and it is scaled back to 6."""
    world = behind_a_service()
    world.judges.append(replayed_only_on_what_leaves)
    leaving = name_at(world, 5)
    world.lists_lag = True
    world.play(md_at(replicas=5), "D", 2)
    [obj] = [o for o in world.replicas.values() if o["metadata"]["name"] == leaving]
    assert obj["metadata"]["annotations"][DELETION_ATTEMPT] == "Foreground"
    world.lists_lag = False
    return world, leaving


def test_a_replica_whose_delete_was_refused_is_replaced_before_the_replay_removes_it() -> None:
    world, leaving = doomed()
    md = md_at()
    world.play(md, "DRDRS", 2)
    world.judges.append(routed_never_below(5))
    world.play(md, "DRDRS", 20)
    names = {o["metadata"]["name"] for o in world.replicas.values()}
    assert leaving not in names and len(names) == 6
    assert world.serving_and_routed() == 6
    assert world.deployment(md).condition("RolledOut")[:2] == ("True", "Complete")


def test_a_rollout_after_the_scale_back_never_lets_the_replay_remove_a_wanted_replica() -> None:
    world, leaving = doomed()
    world.play(md_at(), "D", 1)
    world.judges.append(routed_never_below(5))
    new = md_at(V2)
    # The service on a faster poll than the deployment: an endpoint withdrawn for an update
    # stays out over two of its reconciles, and its Usage is released.
    world.play(new, "DRSS", 60)
    assert leaving not in {o["metadata"]["name"] for o in world.replicas.values()}
    assert world.rolled_out() and len(world.replicas) == 6
    assert world.deployment(new).condition("RolledOut")[:2] == ("True", "Complete")
