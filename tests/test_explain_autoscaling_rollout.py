"""`modelplane explain` of an autoscaled ModelDeployment during a rollout: the replica it says a
scale-in removes first is the one the scheduler removes, a replica the rollout has yet to update
before an updated one (the composer's judgement, ``composer.rolling``: at or above the
partition, not doomed), and outside a rollout the cost order alone decides, as before
(docs/design/autoscaling.md, "Rollouts" and "Status and explain").

Two whole-node replicas: index 0 on west (10 per hour), index 1 on east (40 per hour). Render
serves no replica, and a rollout updates a replica that serves nothing at once, so a rollout
stays under way here only where its partition or ``paused`` holds it."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from modelplane.labels import TEMPLATE_HASH
from tests.explain_fleets import documents
from tests.test_explain_autoscaling import (
    autoscaled,
    explained,
    priced_cluster,
    render,
    replicas_of,
)

Obj = dict[str, Any]
ROLLING = "the rollout has yet to update it"


def with_image(md: Obj, image: str, **rollout: Any) -> Obj:
    out = copy.deepcopy(md)
    [member] = out["spec"]["template"]["spec"]["engines"][0]["members"]
    member["template"]["spec"]["containers"][0]["image"] = image
    out["spec"]["rollout"] = rollout
    return out


def west_and_east(md: Obj, replicas: dict[str, Obj] | None = None) -> list[Obj]:
    """``md`` on west and east, with ``replicas`` (as a previous render made them)."""
    docs = [*documents(md), *priced_cluster("west", 10.0, 1), *priced_cluster("east", 40.0, 1)]
    return docs + copy.deepcopy(list((replicas or {}).values()))


@cache
def _states() -> tuple[list[Obj], list[Obj], list[Obj]]:
    md = autoscaled(2)
    first = replicas_of(render(west_and_east(md)))
    # Partition 1: east's replica (index 1) is updated, west's keeps the old image.
    held = west_and_east(with_image(md, "vllm/vllm-openai:v2", partition=1), first)
    split = replicas_of(render(held))
    assert _hashes(split)["west"] == _hashes(first)["west"]
    assert _hashes(split)["east"] != _hashes(first)["east"]
    # Partition 0, paused: west's replica is outdated and the rollout updates none.
    paused = west_and_east(with_image(md, "vllm/vllm-openai:v2", paused=True), split)
    # Unpaused: the rollout completes.
    done = west_and_east(with_image(md, "vllm/vllm-openai:v2"), replicas_of(render(paused)))
    return held, paused, done


def _hashes(replicas: dict[str, Obj]) -> dict[str, str]:
    return {
        r["spec"]["clusterName"]: r["metadata"]["annotations"][TEMPLATE_HASH]
        for r in replicas.values()
    }


def paused_rollout() -> list[Obj]:
    """West's replica outdated (at or above the partition), east's updated, the rollout paused."""
    return copy.deepcopy(_states()[1])


def partition_reached() -> list[Obj]:
    """West's replica below the partition on the old image, east's updated."""
    return copy.deepcopy(_states()[0])


def rolled_out() -> list[Obj]:
    """Both replicas updated: the rollout complete."""
    return copy.deepcopy(_states()[2])


def removed_by_a_scale_in(docs: list[Obj]) -> set[str]:
    """The replicas the scheduler removes when the autoscaler writes one replica fewer over the
    replicas render made of ``docs``."""
    made = replicas_of(render(docs))
    fewer = []
    for d in docs:
        if d["kind"] == "ModelDeployment":
            d = copy.deepcopy(d)
            d["spec"]["replicas"] -= 1
        if d["kind"] != "ModelReplica":
            fewer.append(d)
    return set(made) - set(replicas_of(render([*fewer, *made.values()])))


def line(docs: list[Obj]) -> str:
    return next(s for s in explained(docs).text() if "scale-in would remove first" in s)


def test_during_a_rollout_the_first_to_leave_is_the_outdated_replica_a_scale_in_removes() -> None:
    # The cost order alone would name east's (the dearer capacity): the updated one.
    docs = paused_rollout()
    leaving = explained(docs).leaving
    assert leaving.cluster == "west"
    assert removed_by_a_scale_in(docs) == {leaving.name}


def test_during_a_rollout_the_first_to_leave_says_the_rollout_has_yet_to_update_it() -> None:
    assert f"on west: {ROLLING} (removing it advances the rollout); it is not serving" in line(
        paused_rollout()
    )


def test_a_replica_below_the_partition_is_not_first_to_leave_for_running_the_old_image() -> None:
    # Below the partition a replica keeps what it runs by design: the cost order decides.
    docs = partition_reached()
    leaving = explained(docs).leaving
    assert leaving.cluster == "east"
    assert ROLLING not in line(docs)
    assert removed_by_a_scale_in(docs) == {leaving.name}


def test_after_a_rollout_the_first_to_leave_is_the_dearest_as_without_one() -> None:
    # Judged against the deployment as written rather than as admitted (the defaults replicas
    # are stamped with), every replica would look outdated.
    docs = rolled_out()
    leaving = explained(docs).leaving
    assert leaving.cluster == "east"
    assert ROLLING not in line(docs)
    assert removed_by_a_scale_in(docs) == {leaving.name}
