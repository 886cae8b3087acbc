"""Which placement wins when several fit: cost, least capable, headroom, stability."""

from __future__ import annotations

from typing import Any

from modelplane.scheduling import placement as pl
from modelplane.scheduling.scheduler import parse_fleet, placeable_on, schedule
from tests.fleet.builders import (
    declared_cluster,
    gpu_class,
    llm_deployment,
    memory_at_least,
    priced,
    stamp,
    standalone,
)


def pools(p: pl.ReplicaPlacement) -> tuple[str, str]:
    [member] = p.engine("main").members
    return p.cluster, member.pool


def growing(name: str, pools_: list[tuple[str, str, int, int]]) -> dict[str, Any]:
    """A cluster whose pools (name, class, nodeCount, maxNodeCount) may grow."""
    c = declared_cluster(name, [(p, k, n) for p, k, n, _ in pools_])
    for spec, (_, _, _, most) in zip(c["spec"]["nodePools"], pools_, strict=True):
        spec["maxNodeCount"] = most
    return c


H100 = gpu_class("h100", product="H100", memory="80Gi")
A100 = gpu_class("a100", product="A100", memory="80Gi")
L40S = gpu_class("l40s", count=4, product="L40S", memory="48Gi")
SMALL = llm_deployment(engines=[standalone(gpus=1, selectors=[memory_at_least("20Gi")])])


# --- without prices: the least capable class that fits ------------------------------------


def test_without_prices_a_small_model_takes_the_least_capable_pool_of_a_cluster() -> None:
    fleet = [declared_cluster("a", [("h100", "h100", 2), ("l40s", "l40s", 1)])]
    [p] = schedule(SMALL, fleet, [H100, L40S], []).placements
    assert pools(p) == ("a", "l40s")


def test_without_prices_small_replicas_fill_the_least_capable_cluster_first() -> None:
    fleet = [
        declared_cluster("a", [("p", "h100", 2)]),
        declared_cluster("b", [("p", "a100", 2)]),
        declared_cluster("c", [("p", "l40s", 2)]),
    ]
    md = llm_deployment(
        replicas=6, engines=[standalone(gpus=1, selectors=[memory_at_least("20Gi")])]
    )
    placed = schedule(md, fleet, [H100, A100, L40S], []).placements
    assert [pools(p)[0] for p in placed] == ["c"] * 6


def test_at_equal_memory_fewer_devices_per_node_rank_less_capable() -> None:
    wide = gpu_class("wide", count=8, product="L40S", memory="48Gi")
    fleet = [declared_cluster("a", [("narrow", "l40s", 1), ("wide", "wide", 1)])]
    [p] = schedule(SMALL, fleet, [wide, L40S], []).placements
    assert pools(p) == ("a", "narrow")


def test_a_model_only_a_capable_class_holds_still_goes_there() -> None:
    fleet = [declared_cluster("a", [("h100", "h100", 1), ("l40s", "l40s", 1)])]
    md = llm_deployment(engines=[standalone(gpus=1, selectors=[memory_at_least("64Gi")])])
    [p] = schedule(md, fleet, [H100, L40S], []).placements
    assert pools(p) == ("a", "h100")


# --- with prices: least cost, node-fraction aware --------------------------------------------


def test_the_cheapest_pool_wins_over_a_less_capable_dearer_one() -> None:
    fleet = [declared_cluster("a", [("h100", "h100", 1), ("l40s", "l40s", 1)])]
    classes = [priced(gpu_class("h100"), 8), priced(gpu_class("l40s", count=4), 6)]
    # One GPU: an eighth of an H100 node (1.0) is cheaper than a quarter of an L40S node (1.5).
    [p] = schedule(SMALL, fleet, classes, []).placements
    assert pools(p) == ("a", "h100")


def test_cost_counts_the_fraction_of_a_node_a_replica_takes() -> None:
    # Per node the 2-GPU class is cheaper (4 < 10); per replica of 2 GPUs the 8-GPU one is
    # (2/8 x 10 = 2.5 < 4).
    fleet = [
        declared_cluster("a", [("big", "big", 1)]),
        declared_cluster("b", [("small", "small", 1)]),
    ]
    classes = [priced(gpu_class("big"), 10), priced(gpu_class("small", count=2), 4)]
    md = llm_deployment(engines=[standalone(gpus=2)])
    [p] = schedule(md, fleet, classes, []).placements
    assert pools(p) == ("a", "big")


def test_replicas_spill_over_to_dearer_capacity_once_the_cheapest_is_full() -> None:
    fleet = [
        declared_cluster("cheap", [("p", "cheap", 1)]),
        declared_cluster("dear", [("p", "dear", 4)]),
    ]
    classes = [priced(gpu_class("cheap"), 1), priced(gpu_class("dear"), 9)]
    md = llm_deployment(replicas=3)
    placed = schedule(md, fleet, classes, []).placements
    assert [p.cluster for p in placed] == ["cheap", "dear", "dear"]


def test_a_class_without_a_price_ranks_after_every_priced_class() -> None:
    fleet = [
        declared_cluster("a", [("unknown", "unknown", 1)]),
        declared_cluster("b", [("p", "dear", 1)]),
    ]
    classes = [gpu_class("unknown", product="L4", memory="24Gi"), priced(gpu_class("dear"), 99)]
    [p] = schedule(SMALL, fleet, classes, []).placements
    assert p.cluster == "b"


def test_equally_cheap_clusters_share_the_replicas() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 4)]), declared_cluster("b", [("p", "h100", 4)])]
    md = llm_deployment(replicas=4)
    placed = schedule(md, fleet, [priced(gpu_class("h100"), 8)], []).placements
    assert [p.cluster for p in placed] == ["a", "b", "a", "b"]


# --- headroom: maxNodeCount above nodeCount ---------------------------------------------------


def test_a_pool_at_zero_nodes_that_may_grow_takes_replicas() -> None:
    fleet = [growing("a", [("p", "h100", 0, 2)])]
    placed = schedule(llm_deployment(replicas=2), fleet, [H100], []).placements
    assert [pools(p) for p in placed] == [("a", "p"), ("a", "p")]


def test_growth_is_bounded_by_max_node_count() -> None:
    fleet = [growing("a", [("p", "h100", 0, 2)])]
    plan = schedule(llm_deployment(replicas=3), fleet, [H100], [])
    assert len(plan.placements) == 2
    assert plan.shortfall == ("a: pool p has 0 free nodes, engine main needs 1",)


def test_existing_nodes_are_used_before_headroom_at_equal_cost() -> None:
    # "a" comes first by name and could grow; "b" has a node now.
    fleet = [growing("a", [("p", "h100", 0, 4)]), declared_cluster("b", [("p", "h100", 1)])]
    placed = schedule(llm_deployment(replicas=2), fleet, [H100], []).placements
    assert [p.cluster for p in placed] == ["b", "a"]


def test_existing_nodes_of_another_pool_are_used_before_a_pool_grows() -> None:
    fleet = [growing("a", [("grows", "h100", 0, 4), ("now", "h100", 1, 1)])]
    [p] = schedule(llm_deployment(), fleet, [H100], []).placements
    assert pools(p) == ("a", "now")


def test_a_cheaper_pool_that_must_grow_wins_over_a_dearer_existing_one() -> None:
    fleet = [growing("a", [("cheap", "cheap", 0, 2), ("dear", "dear", 2, 2)])]
    classes = [priced(gpu_class("cheap"), 1), priced(gpu_class("dear"), 5)]
    [p] = schedule(llm_deployment(), fleet, classes, []).placements
    assert pools(p) == ("a", "cheap")


def test_room_left_on_a_node_already_added_is_used_before_adding_another() -> None:
    # The first 4-GPU replica makes "a" grow to one node; the second fits beside it there,
    # which adds no node, so it goes there rather than spreading to "b" (which would grow).
    fleet = [growing("a", [("p", "h100", 0, 2)]), growing("b", [("p", "h100", 0, 2)])]
    md = llm_deployment(replicas=3, engines=[standalone(gpus=4)])
    placed = schedule(md, fleet, [H100], []).placements
    assert [p.cluster for p in placed] == ["a", "a", "b"]


def test_min_node_count_is_capacity_the_pool_has_now() -> None:
    fleet = [growing("a", [("p", "h100", 0, 4)]), declared_cluster("b", [("p", "h100", 1)])]
    fleet[0]["spec"]["nodePools"][0]["minNodeCount"] = 1
    [p] = schedule(llm_deployment(), fleet, [H100], []).placements
    assert p.cluster == "a"


# --- stability --------------------------------------------------------------------------------


def test_a_cheaper_pool_appearing_later_never_moves_a_running_replica() -> None:
    md = llm_deployment()
    classes = [priced(gpu_class("dear"), 9), priced(gpu_class("cheap"), 1)]
    [first] = schedule(md, [declared_cluster("a", [("dear", "dear", 1)])], classes, []).placements
    running = [stamp(md, first, "running")]
    fleet = [
        declared_cluster("a", [("dear", "dear", 1)]),
        declared_cluster("b", [("cheap", "cheap", 1)]),
    ]
    again = schedule(md, fleet, classes, running)
    assert again.removed == ()
    assert [(p.cluster, p.existing) for p in again.placements] == [("a", "running")]


def test_a_scale_up_after_a_cheaper_pool_appears_puts_only_the_new_replica_there() -> None:
    md = llm_deployment()
    classes = [priced(gpu_class("dear"), 9), priced(gpu_class("cheap"), 1)]
    [first] = schedule(md, [declared_cluster("a", [("dear", "dear", 2)])], classes, []).placements
    running = [stamp(md, first, "running")]
    fleet = [
        declared_cluster("a", [("dear", "dear", 2)]),
        declared_cluster("b", [("cheap", "cheap", 1)]),
    ]
    again = schedule(llm_deployment(replicas=2), fleet, classes, running)
    assert [(p.cluster, p.existing) for p in again.placements] == [
        ("a", "running"),
        ("b", None),
    ]


# --- why the winner won -----------------------------------------------------------------------


def test_the_trace_says_a_pool_grows_and_from_how_many_nodes() -> None:
    fleet = [growing("a", [("p", "h100", 2, 4)])]
    running = [
        stamp(llm_deployment(name=f"other-{i}"), p, f"other-{i}")
        for i in range(2)
        for p in schedule(
            llm_deployment(name=f"other-{i}"),
            [declared_cluster("a", [("p", "h100", 2)])],
            [H100],
            [],
        ).placements
    ]
    plan = schedule(llm_deployment(), fleet, [H100], running)
    [a] = plan.trace
    assert [(p.pool, p.grows) for p in a.pools] == [("p", (2, 3))]


def test_the_winner_says_it_was_cheapest_and_carries_its_score_terms() -> None:
    fleet = [declared_cluster("a", [("p", "dear", 1)]), declared_cluster("b", [("p", "cheap", 1)])]
    classes = [priced(gpu_class("dear"), 9), priced(gpu_class("cheap"), 2)]
    trace = {c.cluster: c for c in schedule(llm_deployment(), fleet, classes, []).trace}
    [score] = trace["b"].scores
    assert score.why == "cheapest: costs 2 per hour, a next (costs 9 per hour)"
    assert score.to_dict() == {
        "replica": 0,
        "why": score.why,
        "spread": [],
        "unpricedPods": 0,
        "cost": 2.0,
        "deviceMemory": 80 * 2**30,
        "devicesPerNode": 8,
        "grows": False,
        "replicasThere": 0,
        "contested": True,
    }


def test_the_winner_says_it_used_nodes_it_has_where_the_other_would_grow() -> None:
    fleet = [growing("a", [("p", "h100", 0, 4)]), declared_cluster("b", [("p", "h100", 1)])]
    trace = {c.cluster: c for c in schedule(llm_deployment(), fleet, [H100], []).trace}
    [score] = trace["b"].scores
    assert score.why == "as cheap as a, on nodes it has where a would grow"


def test_the_winner_says_it_was_the_least_capable_fit() -> None:
    fleet = [declared_cluster("a", [("p", "h100", 1)]), declared_cluster("b", [("p", "l40s", 1)])]
    trace = {c.cluster: c for c in schedule(SMALL, fleet, [H100, L40S], []).trace}
    [score] = trace["b"].scores
    assert score.why == "least capable fit: less device memory or fewer devices per node than a"


# --- where a deployment could run (what a ModelCache is worth staging on) ---------------------


def test_placeable_clusters_are_those_whose_classes_fit_capacity_aside() -> None:
    fleet = [
        declared_cluster("full", [("p", "h100", 0)]),
        declared_cluster("small", [("p", "l40s", 4)]),
        declared_cluster("other", [("p", "h100", 1)], {"tier": "staging"}),
    ]
    md = llm_deployment(engines=[standalone(gpus=1, selectors=[memory_at_least("64Gi")])])
    assert placeable_on(md, parse_fleet(fleet, [H100, L40S])) == ("full", "other")
    md["spec"]["template"]["spec"]["clusterSelector"] = {"matchLabels": {"tier": "staging"}}
    assert placeable_on(md, parse_fleet(fleet, [H100, L40S])) == ("other",)


def test_no_cluster_is_placeable_while_a_selector_is_invalid() -> None:
    md = llm_deployment(engines=[standalone(gpus=1, selectors=["device.driverr == 'x'"])])
    assert placeable_on(md, parse_fleet([declared_cluster("a", [("p", "h100", 1)])], [H100])) == ()
