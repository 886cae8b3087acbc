"""A scale-in during a rollout removes a replica the rollout has yet to update first: removing
it both scales in and advances the rollout, where removing an updated one would leave the
outdated one to update too. In the balance order it never goes ahead of the most-loaded
cluster, in the cost order never ahead of a spread constraint another replica's removal keeps
(``scheduling.scale_in``)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.scheduling.scheduler import schedule
from modelplane.scheduling.spread import CLUSTER_KEY
from tests.fleet.builders import gpu_class, llm_deployment, priced
from tests.properties import examples
from tests.scheduling.test_scale_in_cost import (
    CHEAP,
    DEAR,
    MID,
    PRICES,
    UNPRICED,
    Shape,
    autoscaled,
    cluster,
    constraint_st,
    fleet_st,
    running,
    spread,
)
from tests.scheduling.test_scale_in_cost import _world as world

Obj = dict[str, Any]


def scaled_away(
    md: Obj, fleet: list[Obj], replicas: list[Obj], outdated: Collection[str]
) -> list[str]:
    """The replicas a scale-in removes, ``outdated`` (by name) not updated by the rollout."""
    classes = [CHEAP, MID, DEAR, UNPRICED, *(priced(gpu_class(f"p{p}"), p) for p in PRICES)]
    plan = schedule(md, fleet, classes, replicas, outdated=lambda p: p.existing in outdated)
    return [r.name for r in plan.removed if r.reason == "scale-down"]


def test_among_equally_loaded_clusters_an_outdated_replica_leaves_first() -> None:
    # Without the rollout the later cluster's replica would go.
    fleet = [cluster("a", "cheap"), cluster("b", "cheap")]
    replicas = [running("a", 0), running("b", 1)]
    md = llm_deployment(replicas=1)
    assert scaled_away(md, fleet, replicas, {"llm-a-0"}) == ["llm-a-0"]


def test_an_outdated_replica_never_unbalances_a_manual_deployment() -> None:
    # a holds two updated replicas, b one outdated: the balance order still takes one of a's.
    fleet = [cluster("a", "cheap"), cluster("b", "cheap")]
    replicas = [running("a", 0), running("a", 1), running("b", 2)]
    md = llm_deployment(replicas=2)
    assert scaled_away(md, fleet, replicas, {"llm-b-2"}) == ["llm-a-1"]


def test_an_autoscaled_scale_in_drops_an_outdated_replica_before_dearer_updated_ones() -> None:
    fleet = [cluster("a", "cheap"), cluster("b", "dear")]
    replicas = [running("a", 0), running("a", 1), running("b", 2)]
    md = autoscaled(llm_deployment(replicas=2))
    assert scaled_away(md, fleet, replicas, {"llm-a-0"}) == ["llm-a-0"]


def test_an_outdated_replica_never_breaks_a_spread_another_removal_keeps() -> None:
    # a0 is us's only replica: without it eu would hold two more than us.
    fleet = [cluster("a", "cheap", "us"), cluster("b", "cheap", "eu")]
    replicas = [running("a", 0), running("b", 1), running("b", 2)]
    md = spread(autoscaled(llm_deployment(replicas=2)))
    assert scaled_away(md, fleet, replicas, {"llm-a-0"}) == ["llm-b-2"]


def test_an_outdated_serving_replica_leaves_before_an_updated_idle_one() -> None:
    fleet = [cluster("a", "cheap"), cluster("b", "cheap")]
    replicas = [running("a", 0), running("b", 1, up=False)]
    md = autoscaled(llm_deployment(replicas=1))
    assert scaled_away(md, fleet, replicas, {"llm-a-0"}) == ["llm-a-0"]


def test_with_every_replica_outdated_the_dearest_still_leaves_first() -> None:
    fleet = [cluster("a", "cheap"), cluster("b", "dear")]
    replicas = [running("a", 0), running("a", 1), running("b", 2)]
    md = autoscaled(llm_deployment(replicas=2))
    everyone = {"llm-a-0", "llm-a-1", "llm-b-2"}
    assert scaled_away(md, fleet, replicas, everyone) == ["llm-b-2"]


# --- properties over random fleets (those of test_scale_in_cost), some replicas outdated ----------


def _scale_in(
    shapes: list[Shape], constraint: tuple[str, int, str], desired: int, data: st.DataObject
) -> tuple[list[str], set[str], list[str]]:
    """The replicas before, those outdated (drawn from ``data``), and those scaled away."""
    key, max_skew, when = constraint
    fleet, replicas, where = world(shapes)
    names = list(where)
    outdated = set(data.draw(st.lists(st.sampled_from(names), unique=True), label="outdated"))
    md = autoscaled(llm_deployment(replicas=desired))
    md["spec"]["template"]["spec"]["topologySpreadConstraints"] = [
        {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    ]
    return names, outdated, scaled_away(md, fleet, replicas, outdated)


@settings(max_examples=examples(200), deadline=None)
@given(shapes=fleet_st, constraint=constraint_st, data=st.data())
def test_a_scale_in_during_a_rollout_keeps_a_spread_that_held(
    shapes: list[Shape], constraint: tuple[str, int, str], data: st.DataObject
) -> None:
    total = sum(n for _, _, n in shapes)
    desired = data.draw(st.integers(0, total - 1), label="desired")
    before, _, gone = _scale_in(shapes, constraint, desired, data)
    assert len(gone) == total - desired
    if _skews(shapes, constraint, before) <= constraint[1]:
        assert _skews(shapes, constraint, [n for n in before if n not in gone]) <= constraint[1]


@settings(max_examples=examples(200), deadline=None)
@given(shapes=fleet_st, constraint=constraint_st, data=st.data())
def test_a_one_replica_scale_in_takes_an_outdated_replica_when_one_keeps_the_spread(
    shapes: list[Shape], constraint: tuple[str, int, str], data: st.DataObject
) -> None:
    total = sum(n for _, _, n in shapes)
    before, outdated, gone = _scale_in(shapes, constraint, total - 1, data)
    was = _skews(shapes, constraint, before)
    keeping = {
        n
        for n in before
        if _skews(shapes, constraint, [m for m in before if m != n]) <= max(constraint[1], was)
    }
    [leaving] = gone
    if keeping & outdated:
        assert leaving in outdated


def _skews(shapes: list[Shape], constraint: tuple[str, int, str], names: list[str]) -> int:
    """The skew of ``names`` (replicas named as ``world`` names them) over the domains the
    deployment stood in before the scale-in."""
    key = constraint[0]
    _, _, where = world(shapes)
    domain = {
        f"c{c}": (f"c{c}" if key == CLUSTER_KEY else region)
        for c, (_, region, _) in enumerate(shapes)
    }
    stood = {d for n in where if (d := domain[where[n][0]]) is not None}
    counts = dict.fromkeys(stood, 0)
    for n in names:
        if (d := domain[where[n][0]]) is not None:
            counts[d] += 1
    return max(counts.values(), default=0) - min(counts.values(), default=0)


def test_in_the_balance_order_an_outdated_replica_never_breaks_a_spread_another_keeps() -> None:
    # a0 is us's only replica: without it eu would hold two more than us.
    fleet = [cluster("a", "cheap", "us"), cluster("b", "cheap", "eu"), cluster("c", "cheap", "eu")]
    replicas = [running("a", 0), running("b", 1), running("c", 2)]
    md = spread(llm_deployment(replicas=2))
    assert scaled_away(md, fleet, replicas, {"llm-a-0"}) == ["llm-c-2"]
