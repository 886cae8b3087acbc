"""Which replica leaves when an autoscaled deployment scales in: the dearest capacity first,
never breaking a spread constraint while another replica can go, an idle replica before any
serving one; without autoscaling the balance order stands (``scheduling.scale_in``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.scheduling.scheduler import schedule
from modelplane.scheduling.spread import CLUSTER_KEY
from tests.fleet.builders import (
    declared_cluster,
    gpu_class,
    llm_deployment,
    placed_member,
    placed_replica,
    priced,
    serving,
)
from tests.properties import examples

Obj = dict[str, Any]


# Classes of eight H100s that differ in price only.
CHEAP, MID, DEAR = (priced(gpu_class(n), p) for n, p in (("cheap", 1), ("mid", 4), ("dear", 9)))
UNPRICED = gpu_class("unpriced")


def cluster(name: str, class_name: str, region: str = "") -> Obj:
    return declared_cluster(name, [("p", class_name, 4)], {"region": region} if region else {})


def autoscaled(md: Obj) -> Obj:
    md["spec"]["autoscaling"] = {"minReplicas": 1, "maxReplicas": 8}
    return md


def spread(md: Obj, key: str = "region", max_skew: int = 1) -> Obj:
    constraints = md["spec"]["template"]["spec"].setdefault("topologySpreadConstraints", [])
    constraints.append(
        {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule"}
    )
    return md


def running(on: str, index: int, up: bool = True) -> Obj:
    """Replica ``index`` of team A's ``llm`` on cluster ``on``'s pool, serving unless ``up``
    is False."""
    engines = [{"name": "main", "copies": 1, "members": [placed_member("p", 8)]}]
    replica = placed_replica("llm", "team-a", on, index, engines)
    return serving(replica, "True" if up else "False")


def scaled_away(md: Obj, fleet: list[Obj], replicas: list[Obj]) -> list[str]:
    plan = schedule(md, fleet, [CHEAP, MID, DEAR, UNPRICED], replicas)
    return [r.name for r in plan.removed if r.reason == "scale-down"]


# Two replicas on a cheap cluster, one on a dear one: balance and cost disagree.
FLEET = [cluster("a", "cheap"), cluster("b", "dear")]
RUNNING = [running("a", 0), running("a", 1), running("b", 2)]


def test_an_autoscaled_deployment_drops_its_most_expensive_replica_first() -> None:
    md = autoscaled(llm_deployment(replicas=2))
    assert scaled_away(md, FLEET, RUNNING) == ["llm-b-2"]


def test_without_autoscaling_the_balance_order_stands() -> None:
    assert scaled_away(llm_deployment(replicas=2), FLEET, RUNNING) == ["llm-a-1"]


def test_a_scale_in_never_breaks_a_spread_constraint_when_another_replica_can_go() -> None:
    # The dear replica is us's only one: without it eu would hold two more than us.
    fleet = [cluster("a", "dear", "us"), cluster("b", "cheap", "eu")]
    md = spread(autoscaled(llm_deployment(replicas=2)))
    assert scaled_away(md, fleet, [running("a", 0), running("b", 1), running("b", 2)]) == [
        "llm-b-2"
    ]


def test_an_idle_replica_goes_before_an_expensive_serving_one() -> None:
    fleet = [cluster("a", "cheap"), cluster("b", "dear"), cluster("c", "mid")]
    replicas = [running("a", 0), running("a", 1), running("b", 2), running("c", 3, up=False)]
    assert scaled_away(autoscaled(llm_deployment(replicas=3)), fleet, replicas) == ["llm-c-3"]


def test_a_replica_on_an_unpriced_class_goes_before_a_priced_one() -> None:
    # As the fill ranks it: an unknown price is not a free one.
    fleet = [cluster("a", "unpriced"), cluster("b", "dear")]
    md = autoscaled(llm_deployment(replicas=1))
    assert scaled_away(md, fleet, [running("a", 0), running("b", 1)]) == ["llm-a-0"]


def test_when_every_removal_breaks_a_spread_constraint_the_balance_order_decides() -> None:
    # us holds one more replica than eu, and each us cluster as few as any cluster: a us
    # replica leaving puts its cluster two behind b, b's leaving puts eu two behind us.
    fleet = [
        cluster("a1", "dear", "us"),
        cluster("a2", "dear", "us"),
        cluster("a3", "dear", "us"),
        cluster("b", "cheap", "eu"),
    ]
    md = spread(spread(autoscaled(llm_deployment(replicas=4))), CLUSTER_KEY)
    replicas = [running("a1", 0), running("a2", 1), running("a3", 2)]
    replicas += [running("b", 3), running("b", 4)]
    assert scaled_away(md, fleet, replicas) == ["llm-b-4"]


# --- properties over random fleets ---------------------------------------------------------------
# Each cluster: (its class's price, its region or none, how many replicas of ``llm`` it runs). All
# classes have one shape, so a replica's cost is its cluster's price; every replica serves and
# is composed, so only spread and price order the scale-in.

PRICES = [1, 2, 5, 9]
Shape = tuple[int, str | None, int]

fleet_st = st.lists(
    st.tuples(
        st.sampled_from(PRICES), st.sampled_from([None, "us", "eu", "ap"]), st.integers(0, 3)
    ),
    min_size=1,
    max_size=4,
).filter(lambda shapes: sum(n for _, _, n in shapes) > 0)
constraint_st = st.tuples(
    st.sampled_from(["region", CLUSTER_KEY]),
    st.integers(1, 2),
    st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]),
)


def _world(shapes: list[Shape]) -> tuple[list[Obj], list[Obj], dict[str, tuple[str, int]]]:
    """The clusters, the replicas running on them, and each replica's (cluster, price)."""
    fleet: list[Obj] = []
    replicas: list[Obj] = []
    where: dict[str, tuple[str, int]] = {}
    for c, (price, region, count) in enumerate(shapes):
        fleet.append(cluster(f"c{c}", f"p{price}", region or ""))
        for _ in range(count):
            replica = running(f"c{c}", len(replicas))
            replicas.append(replica)
            where[replica["metadata"]["name"]] = (f"c{c}", price)
    return fleet, replicas, where


def _skew(
    names: Iterable[str],
    where: dict[str, tuple[str, int]],
    domain: dict[str, str | None],
    domains: set[str],
) -> int:
    counts = dict.fromkeys(domains, 0)
    for n in names:
        d = domain[where[n][0]]
        if d is not None:
            counts[d] += 1
    return max(counts.values(), default=0) - min(counts.values(), default=0)


def _scale_in(
    shapes: list[Shape], constraint: tuple[str, int, str], desired: int
) -> tuple[list[str], list[str], dict[str, tuple[str, int]], Callable[[Iterable[str]], int]]:
    """The replicas before, those the scheduler scaled away, where each ran, and the skew of
    a set of replicas over the domains the deployment stood in before."""
    key, max_skew, when = constraint
    fleet, replicas, where = _world(shapes)
    md = autoscaled(llm_deployment(replicas=desired))
    md["spec"]["template"]["spec"]["topologySpreadConstraints"] = [
        {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    ]
    classes = [priced(gpu_class(f"p{p}"), p) for p in PRICES]
    plan = schedule(md, fleet, classes, replicas)
    gone = [r.name for r in plan.removed if r.reason == "scale-down"]
    domain = {
        f"c{c}": (f"c{c}" if key == CLUSTER_KEY else region)
        for c, (_, region, _) in enumerate(shapes)
    }
    before = list(where)
    stood = {d for n in before if (d := domain[where[n][0]]) is not None}

    def skew(names: Iterable[str]) -> int:
        return _skew(names, where, domain, stood)

    return before, gone, where, skew


@settings(max_examples=examples(200), deadline=None)
@given(shapes=fleet_st, constraint=constraint_st, data=st.data())
def test_an_autoscaled_scale_in_keeps_a_spread_that_held(
    shapes: list[Shape], constraint: tuple[str, int, str], data: st.DataObject
) -> None:
    total = sum(n for _, _, n in shapes)
    desired = data.draw(st.integers(0, total - 1), label="desired")
    before, gone, _, skew = _scale_in(shapes, constraint, desired)
    assert len(gone) == total - desired
    if skew(before) <= constraint[1]:
        assert skew(n for n in before if n not in gone) <= constraint[1]


@settings(max_examples=examples(200), deadline=None)
@given(shapes=fleet_st, constraint=constraint_st)
def test_a_one_replica_scale_in_gives_back_the_dearest_replica_that_keeps_the_spread(
    shapes: list[Shape], constraint: tuple[str, int, str]
) -> None:
    total = sum(n for _, _, n in shapes)
    before, gone, where, skew = _scale_in(shapes, constraint, total - 1)
    was = skew(before)
    keeping = [n for n in before if skew(m for m in before if m != n) <= max(constraint[1], was)]
    # One constraint: a replica of a fullest domain (or of an unlabelled cluster) can always go.
    assert keeping
    [leaving] = gone
    assert leaving in keeping
    assert where[leaving][1] == max(where[n][1] for n in keeping)
