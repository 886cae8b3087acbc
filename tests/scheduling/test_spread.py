"""topologySpreadConstraints over InferenceCluster labels: hard, soft, and the unplaced report."""

from __future__ import annotations

from typing import Any

from modelplane.scheduling.scheduler import schedule
from tests.fleet.builders import declared_cluster, gpu_class, llm_deployment, priced, stamp, where

H100 = gpu_class("h100")
CHEAP = priced(gpu_class("cheap"), 1)
DEAR = priced(gpu_class("dear"), 9)


def spread(md: dict[str, Any], key: str, when: str, max_skew: int = 1) -> dict[str, Any]:
    md["spec"]["template"]["spec"]["topologySpreadConstraints"] = [
        {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    ]
    return md


def regional(name: str, region: str, class_name: str, nodes: int) -> dict[str, Any]:
    return declared_cluster(name, [("p", class_name, nodes)], {"region": region})


def test_a_soft_spread_outranks_cost() -> None:
    fleet = [regional("a", "us", "cheap", 4), regional("b", "eu", "dear", 4)]
    md = spread(llm_deployment(replicas=2), "region", "ScheduleAnyway")
    assert where(schedule(md, fleet, [CHEAP, DEAR], [])) == [(0, "a"), (1, "b")]


def test_without_a_constraint_cost_wins_over_spread() -> None:
    fleet = [regional("a", "us", "cheap", 4), regional("b", "eu", "dear", 4)]
    assert where(schedule(llm_deployment(replicas=2), fleet, [CHEAP, DEAR], [])) == [
        (0, "a"),
        (1, "a"),
    ]


def test_a_soft_spread_yields_to_capacity() -> None:
    fleet = [regional("a", "us", "h100", 3), regional("b", "eu", "h100", 1)]
    md = spread(llm_deployment(replicas=4), "region", "ScheduleAnyway")
    placed = schedule(md, fleet, [H100], [])
    assert sorted(p.cluster for p in placed.placements) == ["a", "a", "a", "b"]
    assert placed.shortfall == ()


def test_a_soft_spread_over_the_cluster_key_puts_one_replica_on_each_cluster() -> None:
    fleet = [regional("a", "us", "cheap", 4), regional("b", "us", "dear", 4)]
    md = spread(llm_deployment(replicas=2), "modelplane.ai/cluster", "ScheduleAnyway")
    assert where(schedule(md, fleet, [CHEAP, DEAR], [])) == [(0, "a"), (1, "b")]


def test_a_hard_spread_leaves_replicas_that_would_exceed_max_skew_unplaced() -> None:
    fleet = [regional("a", "us", "h100", 4), regional("b", "eu", "h100", 1)]
    md = spread(llm_deployment(replicas=4), "region", "DoNotSchedule")
    plan = schedule(md, fleet, [H100], [])
    assert sorted(p.cluster for p in plan.placements) == ["a", "a", "b"]
    assert plan.shortfall[0] == (
        "topologySpreadConstraints maxSkew 1 over region (DoNotSchedule): "
        "region=eu: 1, region=us: 2"
    )


def test_a_hard_spread_says_which_cluster_with_room_it_holds_back() -> None:
    fleet = [regional("a", "us", "h100", 4), regional("b", "eu", "h100", 1)]
    md = spread(llm_deployment(replicas=4), "region", "DoNotSchedule")
    plan = schedule(md, fleet, [H100], [])
    assert plan.shortfall[1:] == (
        "a: one more replica in region=us would exceed maxSkew 1 over region (DoNotSchedule)",
        "b: pool p has 0 free nodes, engine main needs 1",
    )


def test_a_larger_max_skew_lets_a_domain_run_ahead() -> None:
    fleet = [regional("a", "us", "h100", 4), regional("b", "eu", "h100", 1)]
    md = spread(llm_deployment(replicas=4), "region", "DoNotSchedule", max_skew=2)
    plan = schedule(md, fleet, [H100], [])
    assert sorted(p.cluster for p in plan.placements) == ["a", "a", "a", "b"]


def test_under_a_hard_spread_a_cluster_without_the_label_takes_nothing() -> None:
    # One domain has no skew: both replicas go to it, none to the unlabelled cluster.
    fleet = [declared_cluster("a", [("p", "h100", 4)]), regional("b", "eu", "h100", 4)]
    md = spread(llm_deployment(replicas=2), "region", "DoNotSchedule")
    assert [p.cluster for p in schedule(md, fleet, [H100], []).placements] == ["b", "b"]


def test_a_domain_whose_classes_fit_nothing_does_not_hold_the_others_back() -> None:
    small = gpu_class("small", count=1)
    fleet = [regional("a", "us", "h100", 4), regional("b", "eu", "small", 4)]
    md = spread(llm_deployment(replicas=3), "region", "DoNotSchedule")  # 8 GPUs: not on "small"
    assert len(schedule(md, fleet, [H100, small], []).placements) == 3


def test_running_replicas_count_toward_their_domain() -> None:
    fleet = [regional("a", "us", "h100", 4), regional("b", "eu", "h100", 4)]
    md = spread(llm_deployment(replicas=1), "region", "DoNotSchedule")
    running = [stamp(md, p, "r0") for p in schedule(md, fleet, [H100], []).placements]
    again = schedule(
        spread(llm_deployment(replicas=2), "region", "DoNotSchedule"), fleet, [H100], running
    )
    assert sorted(p.cluster for p in again.placements) == ["a", "b"]
