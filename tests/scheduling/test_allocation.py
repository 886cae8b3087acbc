"""The capacity ledger with published allocation: each cluster arbitrates its own devices.

A cluster admits the replicas placed on it (those it admitted before first, then by creation
time) while they fit and publishes what each deployment holds; a deployment charges that for
the other deployments instead of listing the fleet's replicas, and re-places a replica its
cluster refused.
"""

from __future__ import annotations

from typing import Any

from modelplane.scheduling.allocation import decode, encode
from modelplane.scheduling.capacity import Pool, order_units
from modelplane.scheduling.devices import device_kinds
from modelplane.scheduling.scheduler import schedule
from tests.fleet.builders import (
    declared_cluster,
    device_member,
    engine_of,
    gpu_class,
    llm_deployment,
    stamp,
    standalone,
    where,
)
from tests.fleet.published import admitted, created, publish, publish_all, refused

Obj = dict[str, Any]
H100 = gpu_class("h100")
CLASSES = [H100]


def settle(md: Obj, clusters: list[Obj], replicas: list[Obj] | None = None) -> list[Obj]:
    """The ModelReplicas one reconcile of ``md`` creates, seeing ``clusters`` as published."""
    return [stamp(md, p) for p in schedule(md, clusters, CLASSES, replicas or []).placements]


def test_a_cluster_publishes_per_deployment_the_replicas_it_admits_and_the_devices_they_hold() -> (
    None
):
    fleet = [declared_cluster("a", [("p", "h100", 2)])]
    small = llm_deployment("small", replicas=2, engines=[standalone(gpus=2)])
    mine = settle(small, fleet)
    [a] = publish_all(fleet, CLASSES, mine)
    assert a["status"]["allocation"] == {
        "pools": [{"name": "p", "allocated": {"gpu": 4}}],
        "admitted": [
            {
                "deployment": "team-a/small",
                "replicas": sorted(r["metadata"]["name"] for r in mine),
                "pools": [{"name": "p", "units": ["2*gpu=2"]}],
            }
        ],
    }


def test_a_gangs_pods_and_a_claimless_leader_read_back_as_published() -> None:
    kinds = device_kinds(gpu_class("mix", more=[{**H100["spec"]["devices"][0], "name": "nic"}]))
    pool = Pool("a", "p", "mix", kinds, 4)
    units = (((0, 0), (8, 1), (8, 1)), ((2, 0),), ((2, 0),))
    published = encode(pool, units)
    assert published == ["gpu=8,nic=1+gpu=8,nic=1+0", "2*gpu=2"]
    assert order_units(decode(pool, published)) == order_units(units)


def test_devices_a_class_no_longer_has_charge_nothing_when_read_back() -> None:
    pool = Pool("a", "p", "h100", device_kinds(H100), 1)
    assert decode(pool, ["gpu=2,gone=4", "not a unit"]) == (((2,),),)


def test_of_replicas_racing_for_a_clusters_last_devices_the_earlier_created_is_admitted() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)])]
    theirs = created(settle(llm_deployment("other"), fleet), "2026-11-29T10:00:01Z")
    mine = created(settle(llm_deployment(), fleet), "2026-11-29T10:00:00Z")
    [a] = publish_all(fleet, CLASSES, theirs + mine)
    assert admitted(a) == {mine[0]["metadata"]["name"]}
    assert refused(a) == {
        theirs[0]["metadata"][
            "name"
        ]: "pool p cannot hold it beside the replicas admitted before it"
    }


def test_a_replica_once_admitted_stays_admitted_when_an_older_one_is_listed_late() -> None:
    # The cluster's list lagged: it admitted the later replica before it saw the earlier one.
    fleet = [declared_cluster("a", [("p", "h100", 1)])]
    late = created(settle(llm_deployment("other"), fleet), "2026-11-29T10:00:01Z")
    early = created(settle(llm_deployment(), fleet), "2026-11-29T10:00:00Z")
    [a] = publish_all(fleet, CLASSES, late)
    a = publish(a, CLASSES, late + early)
    assert admitted(a) == {late[0]["metadata"]["name"]}
    assert set(refused(a)) == {early[0]["metadata"]["name"]}


def test_a_deployment_charges_what_a_cluster_admitted_for_other_deployments() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)]), declared_cluster("b", [("p", "h100", 1)])]
    theirs = settle(llm_deployment("other"), fleet[:1])
    published = publish_all(fleet, CLASSES, theirs)
    # No replica of the other deployment is listed: the cluster's allocation is all it reads.
    assert where(schedule(llm_deployment(), published, CLASSES, [])) == [(0, "b")]


def test_a_deployment_charges_its_own_replicas_as_it_stamps_them_not_as_the_cluster_saw_them() -> (
    None
):
    fleet = [declared_cluster("a", [("p", "h100", 1)])]
    md = llm_deployment(engines=[standalone(gpus=4)])
    mine = settle(md, fleet)
    published = publish_all(fleet, CLASSES, mine)
    # Its own admitted 4 GPUs are not charged twice: a second 4-GPU replica fits beside them.
    grown = llm_deployment(replicas=2, engines=[standalone(gpus=4)])
    plan = schedule(grown, published, CLASSES, mine, mine)
    assert where(plan) == [(0, "a"), (1, "a")]
    assert plan.placements[0].existing == mine[0]["metadata"]["name"]


def test_a_replica_its_cluster_refused_is_placed_elsewhere() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)]), declared_cluster("b", [("p", "h100", 1)])]
    theirs = created(settle(llm_deployment("other"), fleet[:1]), "2026-11-29T10:00:00Z")
    mine = created(settle(llm_deployment(), fleet[:1]), "2026-11-29T10:00:01Z")
    published = publish_all(fleet, CLASSES, theirs + mine)
    plan = schedule(llm_deployment(), published, CLASSES, mine, mine)
    assert where(plan) == [(0, "b")]
    [removed] = plan.removed
    assert removed.reason == (
        "cluster a refused it: pool p cannot hold it beside the replicas admitted before it"
    )


def test_a_placement_the_cluster_has_not_admitted_moves_when_what_it_admitted_fills_the_pool() -> (
    None
):
    # The cluster has not seen this replica yet, but what it admitted leaves no room for it:
    # it will refuse it, so it moves now.
    fleet = [declared_cluster("a", [("p", "h100", 1)]), declared_cluster("b", [("p", "h100", 1)])]
    theirs = settle(llm_deployment("other"), fleet[:1])
    mine = settle(llm_deployment(), fleet[:1])
    published = publish_all(fleet, CLASSES, theirs)
    plan = schedule(llm_deployment(), published, CLASSES, mine, mine)
    assert where(plan) == [(0, "b")]
    assert plan.removed[0].reason == (
        "cluster a is overcommitted: replicas admitted before it hold its pool's devices"
    )


def test_a_placement_the_cluster_has_not_admitted_yet_stays_while_it_fits() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 2)])]
    mine = settle(llm_deployment(), fleet)
    published = publish_all(fleet, CLASSES, [])
    plan = schedule(llm_deployment(), published, CLASSES, mine, mine)
    assert [p.existing for p in plan.placements] == [mine[0]["metadata"]["name"]]


def test_a_listed_replica_its_clusters_allocation_holds_is_not_charged_twice() -> None:
    # As `explain` reads a fleet piped from kubectl: clusters with status, and every replica.
    fleet = [declared_cluster("a", [("p", "h100", 2)])]
    theirs = settle(llm_deployment("other"), fleet)
    published = publish_all(fleet, CLASSES, theirs)
    assert where(schedule(llm_deployment(), published, CLASSES, theirs)) == [(0, "a")]


def test_a_listed_replica_its_cluster_has_not_admitted_yet_is_charged() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)]), declared_cluster("b", [("p", "h100", 1)])]
    theirs = settle(llm_deployment("other"), fleet[:1])
    published = publish_all(fleet, CLASSES, [])
    assert where(schedule(llm_deployment(), published, CLASSES, theirs)) == [(0, "b")]


def test_a_gang_admitted_on_one_cluster_keeps_its_nodes_from_a_newcomer() -> None:
    # A leader and two workers take three distinct nodes of the pool, whatever their devices.
    gang = engine_of(
        "main",
        [device_member(devices=[("gpu", 1, [])]), device_member("Worker", [("gpu", 1, [])], 2)],
    )
    fleet = [declared_cluster("a", [("p", "h100", 3)]), declared_cluster("b", [("p", "h100", 1)])]
    theirs = settle(llm_deployment("gang", engines=[gang]), fleet[:1])
    published = publish_all(fleet, CLASSES, theirs)
    whole_node = llm_deployment(engines=[standalone(gpus=8)])
    assert where(schedule(whole_node, published, CLASSES, [])) == [(0, "b")]
