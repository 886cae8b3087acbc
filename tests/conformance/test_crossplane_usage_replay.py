"""Crossplane v2.3.4 replays a delete that a Usage refused, whenever that Usage is released,
however long ago the attempt was: what a ModelDeployment relies on to tell a doomed replica
(``compose/modeldeployment/doomed.py``, issue 38.8).

- ``internal/webhook/protection/usage/handler.go`` (``Handle``): a DELETE of an object that any
  Usage holds (``FindUsageOf``) is refused, and the object is patched with the annotation
  ``usage.crossplane.io/deletion-attempt-with-policy`` set to the delete's propagation policy
  (``Background`` when none is given). Nothing in Crossplane removes it.
- ``internal/controller/protection/usage/reconciler.go`` (``Reconcile``, the ``WasDeleted``
  branch): when a Usage with ``replayDeletion`` is deleted and the object it holds carries that
  annotation, the object is deleted again with the recorded policy, two seconds later, whether
  or not anything still wants it.
- ``internal/controller/apiextensions/composite/composition_functions.go``
  (``GarbageCollectComposedResources``): a composed resource left out of the desired state is
  deleted with ``Foreground`` propagation, and a refused delete fails the whole reconcile; the
  composed resources are applied by server-side apply under the composite's own field owner
  (``ComposedFieldOwnerName``), so the webhook's annotation, which that owner never set, stays.
"""

from __future__ import annotations

from modelplane.compose.modeldeployment.doomed import DELETION_ATTEMPT, is_doomed
from modelplane.labels import SURGE_FOR
from tests.compose.modeldeployment.test_rollout_timing import md_at, name_at
from tests.compose.modeldeployment.timing import World


def test_the_attempt_is_read_from_crossplanes_own_annotation() -> None:
    """``internal/protection/usage.go``: ``AnnotationKeyDeletionAttempt``."""
    assert DELETION_ATTEMPT == "usage.crossplane.io/deletion-attempt-with-policy"
    assert is_doomed({"metadata": {"annotations": {DELETION_ATTEMPT: "Foreground"}}})
    assert not is_doomed({"metadata": {"annotations": {}}})


def recorded_on(world: World, index: int) -> str:
    """The replica at ``index`` as the webhook leaves it after refusing a garbage collection."""
    name = name_at(world, index)
    [obj] = [o for o in world.replicas.values() if o["metadata"]["name"] == name]
    obj["metadata"]["annotations"][DELETION_ATTEMPT] = "Foreground"
    return name


def test_a_replica_carrying_the_attempt_is_replaced_under_a_new_name_and_kept_meanwhile() -> None:
    """The annotation outlives whatever wanted the replica since: the deployment counts on it
    going, and places a replacement beside it before it does (make before break)."""
    world = World()
    world.settle(md_at())
    doomed = recorded_on(world, 5)
    rsp = world.deployment(md_at())
    names = {o["metadata"]["name"] for o in world.replicas.values()}
    assert doomed in names and len(names) == 7
    [new] = [
        o for o in world.replicas.values() if o["metadata"].get("annotations", {}).get(SURGE_FOR)
    ]
    assert new["metadata"]["annotations"][SURGE_FOR] == doomed
    assert rsp.condition("RolledOut")[0] == "False"


def test_a_replica_carrying_the_attempt_is_never_updated_in_place() -> None:
    """An update restarts it and withdraws its endpoint: its Usage would be released and the
    delete replayed under it."""
    world = World()
    world.settle(md_at())
    doomed = recorded_on(world, 0)
    before = {o["metadata"]["name"]: o for o in world.replicas.values()}[doomed]
    world.play(md_at("vllm/vllm-openai:v2", maxUnavailable=6), "D", 1)
    after = {o["metadata"]["name"]: o for o in world.replicas.values()}[doomed]
    assert after["metadata"]["annotations"] == before["metadata"]["annotations"]


def test_the_replica_carrying_the_attempt_leaves_once_its_replacement_serves() -> None:
    world = World()
    world.settle(md_at())
    doomed = recorded_on(world, 5)
    world.play(md_at(), "DR", 6)
    names = {o["metadata"]["name"] for o in world.replicas.values()}
    assert doomed not in names and len(names) == 6
    assert world.serving_count() == 6
    assert world.deployment(md_at()).condition("RolledOut")[:2] == ("True", "Complete")


def test_rolled_out_names_the_replica_it_replaces_and_why() -> None:
    world = World()
    world.settle(md_at())
    doomed = recorded_on(world, 5)
    message = world.deployment(md_at()).condition("RolledOut")[2]
    assert f"replacing {doomed}: a delete a Usage refused is replayed" in message
