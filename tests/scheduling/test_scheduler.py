"""The fleet scheduler's rules, one behaviour per test."""

from __future__ import annotations

import random
from typing import Any

from modelplane import labels
from modelplane.scheduling import placement as pl
from modelplane.scheduling.devices import compile_selector, evaluate
from modelplane.scheduling.scheduler import schedule
from tests.fleet.builders import (
    GPU_SELECTOR,
    declared_cluster,
    device_member,
    engine_of,
    gpu_class,
    llm_deployment,
    memory_at_least,
    product,
    serving,
    stamp,
    standalone,
    where,
)

H100 = gpu_class("h100")
A100 = gpu_class("a100", product="A100", memory="40Gi")


def run(
    md: dict[str, Any],
    clusters: list[dict[str, Any]],
    classes: list[dict[str, Any]] | None = None,
    replicas: list[dict[str, Any]] | None = None,
) -> pl.Schedule:
    return schedule(md, clusters, classes or [H100, A100], replicas or [])


def settle(md: dict[str, Any], clusters: list[dict[str, Any]], **kw: Any) -> list[dict[str, Any]]:
    """The ModelReplicas a first reconcile would create."""
    return [stamp(md, p) for p in run(md, clusters, **kw).placements]


# --- placement ------------------------------------------------------------------------------


def test_new_replicas_spread_across_clusters_before_packing() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 2)]), declared_cluster("b", [("p", "h100", 1)])]
    assert where(run(llm_deployment(replicas=3), fleet)) == [(0, "a"), (1, "b"), (2, "a")]


def test_each_member_gets_its_pool_and_resolved_device_requests() -> None:
    fleet = [declared_cluster("a", [("small", "a100", 1), ("big", "h100", 1)])]
    md = llm_deployment(engines=[standalone(gpus=4, selectors=[product("H100")])])
    [placed] = run(md, fleet).placements
    [m] = placed.engine("main").members
    assert m.pool == "big"
    assert m.device_requests_dicts() == [
        {
            "name": "gpu",
            "deviceClassName": "gpu.nvidia.com",
            "count": 4,
            "selectors": [{"cel": product("H100")}],
        }
    ]


def test_clusters_are_filtered_by_the_cluster_selector() -> None:
    fleet = [
        declared_cluster("a", [("p", "h100", 1)], {"region": "eu"}),
        declared_cluster("b", [("p", "h100", 1)], {"region": "us"}),
    ]
    assert where(run(llm_deployment(selector={"region": "us"}), fleet)) == [(0, "b")]


def test_a_no_schedule_taint_blocks_new_replicas_unless_tolerated() -> None:
    taint = [{"key": "maintenance", "effect": "NoSchedule"}]
    fleet = [
        declared_cluster("a", [("p", "h100", 1)], taints=taint),
        declared_cluster("b", [("p", "h100", 1)]),
    ]
    assert where(run(llm_deployment(), fleet)) == [(0, "b")]
    tolerant = llm_deployment(
        replicas=2, tolerations=[{"key": "maintenance", "operator": "Exists"}]
    )
    assert where(run(tolerant, fleet)) == [(0, "a"), (1, "b")]


def test_four_two_gpu_copies_share_one_eight_gpu_node() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)])]
    md = llm_deployment(engines=[standalone(gpus=2, copies=4)])
    assert where(run(md, fleet)) == [(0, "a")]


def test_a_request_search_finds_what_greedy_device_order_misses() -> None:
    # The big device is listed first with one per node; greedy would give it to the "any"
    # request and leave the big-memory request without a device.
    mixed = gpu_class(
        "mixed",
        count=1,
        memory="200Gi",
        product="H200",
        more=[
            {
                "name": "small",
                "driver": "gpu.nvidia.com",
                "deviceClassName": "gpu.nvidia.com",
                "count": 1,
                "capacity": {"memory": {"value": "141Gi"}},
            }
        ],
    )
    md = llm_deployment(
        engines=[
            engine_of(
                "main",
                [
                    device_member(
                        devices=[("any", 1, [GPU_SELECTOR]), ("big", 1, [memory_at_least("200Gi")])]
                    )
                ],
            )
        ]
    )
    [placed] = run(md, [declared_cluster("a", [("p", "mixed", 1)])], classes=[mixed]).placements
    assert [r.name for r in placed.engines[0].members[0].device_requests] == ["any", "big"]


def test_an_engine_search_finds_what_greedy_engine_order_misses() -> None:
    # Engine "any" takes any GPU, engine "big" needs the H100 pool, listed first with one node.
    fleet = [declared_cluster("a", [("big", "h100", 1), ("small", "a100", 1)])]
    md = llm_deployment(
        engines=[standalone("any", gpus=8), standalone("big", selectors=[product("H100")])]
    )
    [placed] = run(md, fleet).placements
    assert [placed.engine("any").members[0].pool, placed.engine("big").members[0].pool] == [
        "small",
        "big",
    ]


def gang(
    nodes: int, leader: list[str] | None = None, worker: list[str] | None = None
) -> dict[str, Any]:
    return engine_of(
        "gang",
        [
            device_member("Leader", devices=[("gpu", 8, leader or [GPU_SELECTOR])]),
            device_member("Worker", devices=[("gpu", 8, worker or [GPU_SELECTOR])], nodes=nodes),
        ],
    )


def test_a_gang_needs_distinct_nodes_and_lands_on_a_big_enough_pool() -> None:
    fleet = [
        declared_cluster("a", [("small", "h100", 2)]),
        declared_cluster("b", [("large", "h100", 4)]),
    ]
    schedule_ = run(llm_deployment(engines=[gang(3)]), fleet)
    assert where(schedule_) == [(0, "b")]
    assert "pool small has 2 nodes, engine gang needs 4" in " ".join(
        t.reason for t in schedule_.trace if t.cluster == "a"
    )


def test_an_engine_stays_on_one_pool_when_one_pool_fits_all_its_members() -> None:
    fleet = [declared_cluster("a", [("p1", "h100", 2), ("p2", "h100", 2)])]
    [placed] = run(llm_deployment(engines=[gang(1)]), fleet).placements
    assert {m.pool for m in placed.engines[0].members} == {"p1"}


def test_members_split_across_pools_only_when_no_single_pool_fits_them() -> None:
    # Leader wants an A100, Worker an H100: no single pool satisfies both.
    fleet = [declared_cluster("a", [("ampere", "a100", 1), ("hopper", "h100", 1)])]
    md = llm_deployment(engines=[gang(1, leader=[product("A100")], worker=[product("H100")])])
    [placed] = run(md, fleet).placements
    assert [m.pool for m in placed.engines[0].members] == ["ampere", "hopper"]


def test_members_split_when_no_single_pool_has_the_nodes() -> None:
    fleet = [declared_cluster("a", [("p1", "h100", 1), ("p2", "h100", 1)])]
    [placed] = run(llm_deployment(engines=[gang(1)]), fleet).placements
    assert [m.pool for m in placed.engines[0].members] == ["p1", "p2"]


def test_all_engines_of_a_replica_land_on_one_cluster() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)]), declared_cluster("b", [("p", "a100", 1)])]
    md = llm_deployment(
        engines=[
            standalone("prefill", selectors=[product("A100")]),
            standalone("decode", selectors=[product("H100")]),
        ]
    )
    result = run(md, fleet)
    assert result.placements == ()
    assert len(result.shortfall) == 2


def test_prefill_and_decode_may_use_different_pools_of_one_cluster() -> None:
    fleet = [declared_cluster("a", [("small", "a100", 1), ("big", "h100", 1)])]
    md = llm_deployment(
        engines=[
            standalone("prefill", selectors=[product("A100")]),
            standalone("decode", selectors=[product("H100")]),
        ]
    )
    [placed] = run(md, fleet).placements
    assert (placed.engine("prefill").members[0].pool, placed.engine("decode").members[0].pool) == (
        "small",
        "big",
    )


def test_a_synthetic_only_match_claims_nothing_and_an_engine_must_claim_something() -> None:
    fabric = gpu_class(
        "ib", more=[{"name": "ib", "driver": "ib.example.com", "claim": "Synthetic"}]
    )
    fleet = [declared_cluster("a", [("p", "ib", 2)])]
    ib = 'device.driver == "ib.example.com"'
    claimless_leader = engine_of(
        "gang",
        [
            device_member("Leader", devices=[("fabric", 1, [ib])]),
            device_member(
                "Worker", devices=[("gpu", 8, [GPU_SELECTOR]), ("fabric", 1, [ib])], nodes=1
            ),
        ],
    )
    [placed] = run(llm_deployment(engines=[claimless_leader]), fleet, classes=[fabric]).placements
    leader, worker = placed.engines[0].members
    assert leader.device_requests == ()
    assert [r.name for r in worker.device_requests] == ["gpu"]
    only_fabric = engine_of("main", [device_member(devices=[("fabric", 1, [ib])])])
    assert run(llm_deployment(engines=[only_fabric]), fleet, classes=[fabric]).placements == ()


# --- the fleet-wide ledger ------------------------------------------------------------------


def test_replicas_of_other_deployments_and_namespaces_are_charged() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)]), declared_cluster("b", [("p", "h100", 1)])]
    other = llm_deployment(name="other", namespace="team-b")
    existing = settle(other, fleet)
    assert where(run(llm_deployment(replicas=2), fleet, replicas=existing)) == [(0, "b")]


def test_same_named_deployments_in_two_namespaces_never_adopt_each_others_replicas() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)]), declared_cluster("b", [("p", "h100", 1)])]
    theirs = settle(llm_deployment(namespace="team-b"), fleet)
    result = run(llm_deployment(namespace="team-a"), fleet, replicas=theirs)
    assert [(p.index, p.cluster, p.existing) for p in result.placements] == [(0, "b", None)]
    assert result.removed == ()


def test_a_shortfall_says_per_cluster_what_is_missing() -> None:
    fleet = [
        declared_cluster("cluster-a", [("h100", "h100", 2)]),
        declared_cluster("cluster-b", [("h100", "h100", 2)]),
    ]
    busy = settle(
        llm_deployment(name="busy", namespace="x", engines=[standalone(copies=1)]), fleet[1:]
    )
    md = llm_deployment(engines=[gang(1)], replicas=2)
    result = run(md, fleet, replicas=busy)
    assert where(result) == [(0, "cluster-a")]
    assert "cluster-b: pool h100 has 1 free node, engine gang needs 2" in result.shortfall
    assert "cluster-a: pool h100 has 0 free nodes, engine gang needs 2" in result.shortfall
    assert result.scheduled < result.desired


def test_a_shortfall_on_partly_used_nodes_counts_their_free_devices() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)])]
    result = run(llm_deployment(replicas=3, engines=[standalone(gpus=3)]), fleet)
    assert where(result) == [(0, "a"), (1, "a")]
    # "0 free nodes" alone would hide the 2 GPUs left, too few for a 3-GPU pod.
    assert result.shortfall == (
        "a: pool p has 0 free nodes (2 devices free on 1 partly used node), "
        "engine main needs 1 with up to 3 devices per pod",
    )


def test_a_shortfall_names_the_pool_that_came_closest() -> None:
    fleet = [declared_cluster("a", [("small", "h100", 1), ("large", "h100", 3)])]
    result = run(llm_deployment(engines=[gang(4)]), fleet)
    # Naming the 1-node pool would hide that even the 3-node one is short.
    assert result.shortfall == ("a: pool large has 3 nodes, engine gang needs 5",)


# --- existing replicas ----------------------------------------------------------------------


def test_placed_replicas_stay_where_they_are() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 2)])]
    existing = settle(llm_deployment(), fleet)
    grown = [
        declared_cluster("a", [("p", "h100", 2)]),
        declared_cluster("0-first", [("p", "h100", 2)]),
    ]
    [kept] = run(llm_deployment(), grown, replicas=existing).placements
    assert (kept.cluster, kept.existing) == ("a", existing[0]["metadata"]["name"])


def test_spec_edits_apply_in_place() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)])]
    existing = settle(llm_deployment(engines=[standalone(gpus=2)]), fleet)
    md = llm_deployment(engines=[standalone(gpus=2, copies=3)])
    result = run(md, fleet, replicas=existing)
    assert [p.existing for p in result.placements] == [existing[0]["metadata"]["name"]]
    assert result.removed == ()


def test_a_replica_on_a_deleted_cluster_is_re_placed_at_its_index() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)]), declared_cluster("b", [("p", "h100", 1)])]
    existing = settle(llm_deployment(replicas=2), fleet)
    result = run(
        llm_deployment(replicas=2),
        [*fleet[1:], declared_cluster("c", [("p", "h100", 1)])],
        replicas=existing,
    )
    assert where(result) == [(0, "c"), (1, "b")]
    assert [(r.index, r.cluster, r.reason) for r in result.removed] == [
        (0, "a", "cluster a no longer exists")
    ]


def test_a_drained_cluster_loses_its_replicas_to_another() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)]), declared_cluster("b", [("p", "h100", 1)])]
    existing = settle(llm_deployment(), fleet)
    drained = [
        declared_cluster("a", [("p", "h100", 1)], taints=[{"key": "drain", "effect": "NoExecute"}]),
        fleet[1],
    ]
    result = run(llm_deployment(), drained, replicas=existing)
    assert where(result) == [(0, "b")]
    assert "drained" in result.removed[0].reason


def test_a_no_schedule_taint_keeps_existing_replicas() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)])]
    existing = settle(llm_deployment(), fleet)
    tainted = [
        declared_cluster("a", [("p", "h100", 1)], taints=[{"key": "x", "effect": "NoSchedule"}])
    ]
    assert [p.existing for p in run(llm_deployment(), tainted, replicas=existing).placements] == [
        existing[0]["metadata"]["name"]
    ]


def test_a_replica_whose_pool_no_longer_fits_is_re_placed() -> None:
    fleet = [declared_cluster("a", [("old", "h100", 1), ("new", "a100", 1)])]
    existing = settle(llm_deployment(engines=[standalone(selectors=[product("H100")])]), fleet)
    md = llm_deployment(engines=[standalone(selectors=[product("A100")])])
    result = run(md, fleet, replicas=existing)
    assert [(p.cluster, p.engines[0].members[0].pool, p.existing) for p in result.placements] == [
        ("a", "new", None)
    ]
    assert "no longer fits" in result.removed[0].reason


def test_a_re_placed_replica_returns_to_its_own_cluster_when_it_fits_there() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)]), declared_cluster("b", [("p", "h100", 1)])]
    # Replica 0 sits on b, 1 on a (a past drain and return moved them).
    swapped = [
        {
            **r,
            "metadata": {
                **r["metadata"],
                "labels": {**r["metadata"]["labels"], labels.REPLICA_INDEX: i},
            },
        }
        for r, i in zip(settle(llm_deployment(replicas=2), fleet), ("1", "0"), strict=True)
    ]
    renamed = llm_deployment(replicas=2, engines=[standalone(name="engine")])
    result = run(renamed, fleet, replicas=swapped)
    # Swapping them would start each new replica where the old one, serving until its
    # replacement serves, still holds every GPU: neither would ever start.
    assert where(result) == [(0, "b"), (1, "a")]


def test_re_placed_replicas_that_fit_at_home_go_there_before_others_are_placed() -> None:
    fleet = [declared_cluster("a", [("p", "a100", 1)]), declared_cluster("b", [("p", "h100", 1)])]
    before = settle(llm_deployment(replicas=2), fleet)
    assert [r["spec"]["clusterName"] for r in before] == ["a", "b"]
    renamed = llm_deployment(
        replicas=2, engines=[standalone(name="v2", selectors=[product("H100")])]
    )
    result = run(renamed, fleet, replicas=before)
    # Replica 0 no longer fits on a; taking b from replica 1 (whose old self holds b's GPUs
    # until a replacement serves) would leave both waiting. Replica 1 is updated in place.
    assert where(result) == [(1, "b")]


def test_scale_down_never_leaves_a_cluster_empty_while_another_has_two() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 2)]), declared_cluster("b", [("p", "h100", 2)])]
    existing = settle(llm_deployment(replicas=3), fleet)  # a: 0, 2; b: 1
    result = run(llm_deployment(replicas=2), fleet, replicas=existing)
    assert where(result) == [(0, "a"), (1, "b")]
    assert [(r.index, r.reason) for r in result.removed] == [(2, "scale-down")]


def test_scale_down_on_equal_load_removes_the_later_cluster_highest_index() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 2)]), declared_cluster("b", [("p", "h100", 2)])]
    existing = settle(llm_deployment(replicas=4), fleet)  # a: 0, 2; b: 1, 3
    result = run(llm_deployment(replicas=3), fleet, replicas=existing)
    assert [r.index for r in result.removed] == [3]


def test_scale_down_on_equal_load_removes_a_replica_that_is_not_serving_first() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 2)]), declared_cluster("b", [("p", "h100", 2)])]
    on_a, on_b = settle(llm_deployment(replicas=2), fleet)
    existing = [serving(on_a, "False"), serving(on_b, "True")]
    result = run(llm_deployment(replicas=1), fleet, replicas=existing)
    # b is the later name, but removing its serving replica would keep the one that serves none.
    assert [(r.index, r.cluster) for r in result.removed] == [(0, "a")]


def test_a_new_replica_takes_the_lowest_free_index() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 2)]), declared_cluster("b", [("p", "h100", 2)])]
    existing = settle(llm_deployment(replicas=3), fleet)
    gap = [r for r in existing if r["metadata"]["labels"][labels.REPLICA_INDEX] != "1"]
    assert [p.index for p in run(llm_deployment(replicas=3), fleet, replicas=gap).placements] == [
        0,
        1,
        2,
    ]


# --- bad selectors and determinism ----------------------------------------------------------


def test_a_bad_selector_is_reported_by_name_and_keeps_existing_replicas() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)]), declared_cluster("b", [("p", "h100", 1)])]
    existing = settle(llm_deployment(), fleet)
    bad = llm_deployment(replicas=2, engines=[standalone(selectors=["device.driver =="])])
    result = run(bad, fleet, replicas=existing)
    [error] = result.selector_errors
    assert error.request == "gpu"
    assert error.path == (
        "spec.template.spec.engines[0].members[0].nodeSelector.devices[0].selectors[0].cel"
    )
    assert "does not compile" in error.message
    assert [p.existing for p in result.placements] == [existing[0]["metadata"]["name"]]
    assert result.removed == ()


def test_a_misspelt_device_field_is_a_selector_error_that_keeps_existing_replicas() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)])]
    existing = settle(llm_deployment(), fleet)
    typo = llm_deployment(engines=[standalone(selectors=['device.driverr == "gpu.nvidia.com"'])])
    result = run(typo, fleet, replicas=existing)
    [error] = result.selector_errors
    assert "undefined field 'driverr'" in error.message
    assert [p.existing for p in result.placements] == [existing[0]["metadata"]["name"]]
    assert result.removed == ()


def test_a_selector_that_returns_no_bool_is_reported() -> None:
    md = llm_deployment(
        engines=[standalone(selectors=['device.attributes["gpu.nvidia.com"].productName'])]
    )
    [error] = run(md, [declared_cluster("a", [("p", "h100", 1)])]).selector_errors
    assert "not bool" in error.message


def test_the_same_inputs_give_the_same_schedule_in_any_order() -> None:
    fleet = [declared_cluster(n, [("p", "h100", 2), ("q", "a100", 1)]) for n in "abcd"]
    others = settle(llm_deployment(name="other", namespace="z", replicas=3), fleet)
    md = llm_deployment(replicas=5)
    first = run(md, fleet, replicas=others)
    for seed in range(5):
        rng = random.Random(seed)
        shuffled_fleet, shuffled_others = fleet[:], others[:]
        rng.shuffle(shuffled_fleet)
        rng.shuffle(shuffled_others)
        again = run(md, shuffled_fleet, replicas=shuffled_others)
        assert again == first
        assert (again.shortfall, again.trace) == (first.shortfall, first.trace)


def test_the_trace_says_why_each_cluster_and_pool_was_taken_or_not() -> None:
    fleet = [
        declared_cluster("a", [("p", "h100", 1), ("q", "a100", 1)]),
        declared_cluster("b", [("p", "h100", 1)], {"tier": "x"}),
    ]
    md = llm_deployment(engines=[standalone(selectors=[product("H100")])], selector={})
    trace = {t.cluster: t for t in run(md, fleet).trace}
    assert trace["a"].indices == (0,)
    pools = {p.pool: p for p in trace["a"].pools}
    assert pools["p"].taken
    assert "no device of class a100 matches request gpu" in pools["q"].reason
    assert trace["b"].eligible and not trace["b"].indices


def test_replicas_on_one_cluster_are_repacked_together_when_one_more_needs_it() -> None:
    # Alone, a replica puts both engines on the H100 pool (listed first); two replicas fit only
    # with every "any" engine on the A100 pool and both "hopper" engines on the H100 pool.
    fleet = [declared_cluster("a", [("hopper", "h100", 1), ("ampere", "a100", 1)])]
    md = llm_deployment(
        replicas=2,
        engines=[
            standalone("any", gpus=4),
            standalone("hopper", gpus=4, selectors=[product("H100")]),
        ],
    )
    result = run(md, fleet)
    assert where(result) == [(0, "a"), (1, "a")]
    assert {p.engine("any").members[0].pool for p in result.placements} == {"ampere"}


def test_a_replica_on_a_cluster_that_no_longer_matches_the_selector_moves() -> None:
    fleet = [
        declared_cluster("a", [("p", "h100", 1)], {"region": "eu"}),
        declared_cluster("b", [("p", "h100", 1)], {"region": "us"}),
    ]
    existing = settle(llm_deployment(selector={"region": "eu"}), fleet)
    result = run(llm_deployment(selector={"region": "us"}), fleet, replicas=existing)
    assert where(result) == [(0, "b")]
    assert "no longer matches the clusterSelector" in result.removed[0].reason


def test_worker_nodes_edits_apply_in_place_while_the_pool_holds_the_gang() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 4)])]
    existing = settle(llm_deployment(engines=[gang(1)]), fleet)
    result = run(llm_deployment(engines=[gang(3)]), fleet, replicas=existing)
    assert [p.existing for p in result.placements] == [existing[0]["metadata"]["name"]]


def test_a_gang_grown_past_its_pool_is_re_placed() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 2)]), declared_cluster("b", [("p", "h100", 4)])]
    existing = settle(llm_deployment(engines=[gang(1)]), fleet)
    assert where(run(llm_deployment(engines=[gang(1)]), fleet)) == [(0, "a")]
    result = run(llm_deployment(engines=[gang(3)]), fleet, replicas=existing)
    assert where(result) == [(0, "b")]
    assert "too small for the replica alone" in result.removed[0].reason


def test_kept_replicas_are_charged_with_the_spec_they_will_carry() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 2)])]
    existing = settle(llm_deployment(engines=[standalone()]), fleet)
    grown = llm_deployment(replicas=2, engines=[standalone(copies=2)])
    result = run(grown, fleet, replicas=existing)
    # Replica 0 now needs both nodes, so replica 1 has nowhere to go.
    assert where(result) == [(0, "a")]
    assert result.shortfall == ("a: pool p has 0 free nodes, engine main needs 2",)


def test_copies_grown_past_the_pools_free_devices_re_place_the_replica() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)]), declared_cluster("b", [("p", "h100", 1)])]
    mine = settle(llm_deployment(engines=[standalone(gpus=4)]), fleet[:1])
    other = llm_deployment("other", engines=[standalone(gpus=4)])
    theirs = settle(other, fleet[:1], replicas=mine)
    grown = llm_deployment(engines=[standalone(gpus=4, copies=2)])
    result = run(grown, fleet, replicas=mine + theirs)
    # 2 x 4 GPUs beside the other deployment's 4 would be 12 on an 8-GPU node.
    assert where(result) == [(0, "b")]
    assert "pool p cannot hold" in result.removed[0].reason


def test_a_grown_replica_that_still_fits_its_pool_stays() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)]), declared_cluster("b", [("p", "h100", 1)])]
    mine = settle(llm_deployment(engines=[standalone(gpus=2)]), fleet[:1])
    other = llm_deployment("other", engines=[standalone(gpus=4)])
    theirs = settle(other, fleet[:1], replicas=mine)
    result = run(
        llm_deployment(engines=[standalone(gpus=2, copies=2)]), fleet, replicas=mine + theirs
    )
    assert [p.existing for p in result.placements] == [mine[0]["metadata"]["name"]]


def created(replicas: list[dict[str, Any]], at: str) -> list[dict[str, Any]]:
    return [{**r, "metadata": {**r["metadata"], "creationTimestamp": at}} for r in replicas]


def test_of_replicas_placed_concurrently_on_one_pool_the_later_created_moves() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)]), declared_cluster("b", [("p", "h100", 1)])]
    # Two deployments reconciled at once both saw node a/p free and both took it.
    theirs = created(settle(llm_deployment("other"), fleet[:1]), "2026-11-29T10:00:00Z")
    mine = created(settle(llm_deployment(), fleet[:1]), "2026-11-29T10:00:01Z")
    result = run(llm_deployment(), fleet, replicas=mine + theirs)
    assert where(result) == [(0, "b")]
    assert "overcommitted" in result.removed[0].reason


def test_of_replicas_placed_concurrently_on_one_pool_the_earlier_created_stays() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)]), declared_cluster("b", [("p", "h100", 1)])]
    theirs = created(settle(llm_deployment("other"), fleet[:1]), "2026-11-29T10:00:01Z")
    mine = created(settle(llm_deployment(), fleet[:1]), "2026-11-29T10:00:00Z")
    result = run(llm_deployment(), fleet, replicas=mine + theirs)
    assert [p.existing for p in result.placements] == [mine[0]["metadata"]["name"]]


def test_replicas_without_a_valid_index_or_with_a_taken_one_are_removed() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 2)])]
    [first] = settle(llm_deployment(), fleet)
    twin = {**first, "metadata": {**first["metadata"], "name": "zz-twin"}}
    unlabeled = {
        **first,
        "metadata": {**first["metadata"], "name": "odd", "labels": {labels.DEPLOYMENT: "llm"}},
    }
    result = run(llm_deployment(), fleet, replicas=[twin, unlabeled, first])
    assert [p.existing for p in result.placements] == [first["metadata"]["name"]]
    assert sorted(r.name for r in result.removed) == ["odd", "zz-twin"]


def test_a_cluster_of_an_unsupported_source_takes_no_new_replica() -> None:
    nebius = declared_cluster("a", [("p", "h100", 2)])
    nebius["spec"]["cluster"] = {"source": "Nebius"}
    result = run(llm_deployment(), [nebius, declared_cluster("b", [("p", "h100", 2)])])
    # Nothing is composed for Nebius: a replica there would never serve.
    assert where(result) == [(0, "b")]
    [a, _] = result.trace
    assert not a.eligible and "cluster.source Nebius is not supported" in a.reason


def test_a_managed_cluster_still_provisioning_takes_no_new_replica_and_says_so() -> None:
    eks = declared_cluster("a", [("p", "h100", 2)])
    eks["spec"]["cluster"] = {"source": "EKS", "eks": {"region": "us-east-2"}}
    message = "the EKS cluster is still provisioning (waiting for cluster-auth)"
    eks["status"] = {
        "conditions": [
            {
                "type": "StackReady",
                "status": "False",
                "reason": "ClusterProvisioning",
                "message": message,
            }
        ]
    }
    result = run(llm_deployment(), [eks, declared_cluster("b", [("p", "h100", 2)])])
    assert where(result) == [(0, "b")]
    [a, _] = result.trace
    assert not a.eligible and message in a.reason


def test_a_managed_cluster_whose_stack_is_ready_is_placed_on_like_any_other() -> None:
    eks = declared_cluster("a", [("p", "h100", 2)])
    eks["spec"]["cluster"] = {"source": "EKS", "eks": {"region": "us-east-2"}}
    eks["status"] = {
        "conditions": [{"type": "StackReady", "status": "True", "reason": "Installed"}]
    }
    result = run(llm_deployment(), [eks])
    assert where(result) == [(0, "a")]


def test_tolerations_follow_kubernetes_matching() -> None:
    taint = [{"key": "gpu", "value": "reserved", "effect": "NoSchedule"}]
    fleet = [declared_cluster("a", [("p", "h100", 1)], taints=taint)]
    cases = [
        ([{"key": "gpu", "operator": "Equal", "value": "reserved"}], True),
        ([{"key": "gpu", "value": "other"}], False),
        ([{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}], True),
        ([{"key": "gpu", "operator": "Exists", "effect": "NoExecute"}], False),
        ([{"operator": "Exists"}], True),
    ]
    for tolerations, placed in cases:
        assert bool(run(llm_deployment(tolerations=tolerations), fleet).placements) is placed, (
            tolerations
        )


def test_a_bad_selector_leaves_every_cluster_unconsidered_in_the_trace() -> None:
    bad = llm_deployment(engines=[standalone(selectors=["device.driver =="])])
    [t] = run(bad, [declared_cluster("a", [("p", "h100", 1)])]).trace
    assert not t.eligible and "selectors are invalid" in t.reason


def test_a_bad_selector_shows_clusters_hosting_kept_replicas_as_hosting_them() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)]), declared_cluster("b", [("p", "h100", 1)])]
    existing = settle(llm_deployment(), fleet)
    bad = llm_deployment(engines=[standalone(selectors=["device.driver =="])])
    a, b = run(bad, fleet, replicas=existing).trace
    assert (a.indices, a.reason) == (
        (0,),
        "hosts replica 0, kept as stamped: the deployment's selectors are invalid",
    )
    assert [(p.pool, p.taken, p.reason) for p in a.pools] == [
        ("p", True, "hosts replica 0 engine main")
    ]
    assert (b.indices, b.reason) == ((), "not considered: the deployment's selectors are invalid")


def test_no_cluster_at_all_is_a_shortfall() -> None:
    assert run(llm_deployment(), []).shortfall == ("no InferenceCluster exists",)


def test_a_dra_device_without_a_device_class_satisfies_no_request() -> None:
    classless = gpu_class("nodc")
    del classless["spec"]["devices"][0]["deviceClassName"]
    result = run(llm_deployment(), [declared_cluster("a", [("p", "nodc", 1)])], classes=[classless])
    assert result.placements == ()
    assert "no device of class nodc matches request gpu" in result.shortfall[0]


def test_selectors_compile_once_and_evaluate_once_per_device_kind_not_per_pool() -> None:
    compile_selector.cache_clear()
    evaluate.cache_clear()
    fleet = [declared_cluster(f"c{i:02d}", [("p", "h100", 1), ("q", "a100", 1)]) for i in range(40)]
    md = llm_deployment(
        replicas=10, engines=[standalone(selectors=[GPU_SELECTOR, memory_at_least("40Gi")])]
    )
    assert len(run(md, fleet).placements) == 10
    assert compile_selector.cache_info().misses == 2
    # Two selectors x two device kinds (the H100 and A100 contents), whatever the fleet size.
    assert evaluate.cache_info().misses == 4
