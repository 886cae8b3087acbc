"""Scheduling behaviours the public implementation's own scheduler tests assert, checked on
ours (docs/design/parity.md lists them, each beside the test that proves it)."""

from __future__ import annotations

from typing import Any

from modelplane.scheduling import placement as pl
from modelplane.scheduling.scheduler import schedule
from tests.fleet.builders import (
    GPU_SELECTOR,
    device_member,
    engine_of,
    gpu_class,
    llm_deployment,
    stamp,
    where,
)
from tests.fleet.builders import declared_cluster as cluster
from tests.fleet.xrd import errors

Obj = dict[str, Any]
H100 = gpu_class("h100")
NIC = {
    "name": "nic",
    "driver": "rdma.example.com",
    "deviceClassName": "rdma.example.com",
    "claim": "Synthetic",
    "count": 8,
}
WITH_NIC = gpu_class("h100-ib", more=[NIC])
NIC_SELECTOR = 'device.driver == "rdma.example.com"'


def run(md: Obj, clusters: list[Obj], replicas: list[Obj] | None = None) -> pl.Schedule:
    return schedule(md, clusters, [H100, WITH_NIC], replicas or [])


def gpus(n: int, name: str = "gpu") -> tuple[str, int, list[str]]:
    return (name, n, [GPU_SELECTOR])


def one_node_each(*names: str, nodes: int = 1) -> list[Obj]:
    return [cluster(n, [("p", "h100", nodes)]) for n in names]


def test_with_one_cluster_replicas_pack_onto_it() -> None:
    assert where(run(llm_deployment(replicas=2), one_node_each("a", nodes=2))) == [
        (0, "a"),
        (1, "a"),
    ]


def test_replicas_spread_first_then_the_remainder_packs_by_load_then_name() -> None:
    placed = where(run(llm_deployment(replicas=3), one_node_each("b", "a", nodes=2)))
    assert placed == [(0, "a"), (1, "b"), (2, "a")]


def test_capacity_packs_past_the_spread_preference() -> None:
    fleet = [cluster("a", [("p", "h100", 2)]), cluster("b", [("p", "h100", 1)])]
    assert sorted(c for _, c in where(run(llm_deployment(replicas=3), fleet))) == ["a", "a", "b"]


def test_co_located_replicas_both_stay_where_they_are() -> None:
    md = llm_deployment(replicas=2)
    fleet = one_node_each("a", nodes=2)
    first = [stamp(md, p) for p in run(md, fleet).placements]
    again = run(md, fleet, first)
    assert where(again) == [(0, "a"), (1, "a")] and again.removed == ()


def test_two_requests_cannot_both_take_one_single_device() -> None:
    one_gpu = gpu_class("one", count=1)
    md = llm_deployment(
        engines=[engine_of("main", [device_member(devices=[gpus(1, "a"), gpus(1, "b")])])]
    )
    assert schedule(md, [cluster("c", [("p", "one", 1)])], [one_gpu], []).placements == ()


def test_two_requests_on_one_device_kind_must_fit_within_its_count() -> None:
    md = llm_deployment(
        engines=[engine_of("main", [device_member(devices=[gpus(5, "a"), gpus(5, "b")])])]
    )
    assert run(md, one_node_each("c")).placements == ()


def test_two_requests_share_a_device_kind_when_its_count_covers_both() -> None:
    md = llm_deployment(
        engines=[engine_of("main", [device_member(devices=[gpus(4, "a"), gpus(4, "b")])])]
    )
    [placed] = run(md, one_node_each("c")).placements
    [m] = placed.engine("main").members
    assert [(r["name"], r["count"]) for r in m.device_requests_dicts()] == [("a", 4), ("b", 4)]


def test_a_synthetic_device_matches_but_is_not_claimed() -> None:
    both = device_member(devices=[gpus(8), ("nic", 8, [NIC_SELECTOR])])
    md = llm_deployment(engines=[engine_of("main", [both])])
    [placed] = run(md, [cluster("c", [("p", "h100-ib", 1)])]).placements
    [m] = placed.engine("main").members
    assert [r["name"] for r in m.device_requests_dicts()] == ["gpu"]


def test_a_missing_synthetic_device_filters_the_pool_out() -> None:
    both = device_member(devices=[gpus(8), ("nic", 8, [NIC_SELECTOR])])
    md = llm_deployment(engines=[engine_of("main", [both])])
    assert run(md, one_node_each("c")).placements == ()


def claimless_leader_gang() -> Obj:
    leader = device_member("Leader")
    worker = device_member("Worker", devices=[gpus(8)], nodes=1)
    return llm_deployment(engines=[engine_of("main", [leader, worker])])


def test_a_claimless_leader_lands_on_its_gangs_pool_claiming_nothing() -> None:
    [placed] = run(claimless_leader_gang(), one_node_each("c", nodes=2)).placements
    lead, work = placed.engine("main").members
    assert (lead.pool, lead.device_requests) == ("p", ())
    assert work.pool == "p"


def test_a_claimless_gang_leader_is_charged_a_node_of_its_own() -> None:
    plan = run(claimless_leader_gang(), one_node_each("c", nodes=1))
    assert plan.placements == ()
    assert plan.shortfall == ("c: pool p has 1 node, engine main needs 2",)


def test_a_drain_with_nowhere_to_go_leaves_the_count_short() -> None:
    md = llm_deployment()
    fleet = one_node_each("a")
    first = [stamp(md, p) for p in run(md, fleet).placements]
    drained = [cluster("a", [("p", "h100", 1)], taints=[{"key": "m", "effect": "NoExecute"}])]
    plan = run(md, drained, first)
    assert plan.placements == () and [r.reason for r in plan.removed] == [
        "cluster a is drained (NoExecute taint m)"
    ]


def test_an_inference_class_device_count_of_zero_is_refused_at_admission() -> None:
    zero = gpu_class("zero", count=0)
    assert any("count" in str(e) for e in errors("inferenceclasses", zero))
