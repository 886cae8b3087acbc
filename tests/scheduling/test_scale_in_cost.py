"""Which replica leaves when an autoscaled deployment scales in: the dearest capacity first,
never breaking a spread constraint while another replica can go, an idle replica before any
serving one; without autoscaling the balance order stands (``scheduling.scale_in``)."""

from __future__ import annotations

from typing import Any

from modelplane.scheduling.scheduler import schedule
from modelplane.scheduling.spread import CLUSTER_KEY
from tests.fleet.builders import (
    declared_cluster,
    gpu_class,
    llm_deployment,
    placed_member,
    placed_replica,
    serving,
)

Obj = dict[str, Any]


def priced(name: str, per_node_hour: int) -> Obj:
    """A class of eight H100s at ``per_node_hour``: classes differ in price only."""
    c = gpu_class(name)
    c["spec"]["cost"] = {"perNodeHour": per_node_hour}
    return c


CHEAP, MID, DEAR = priced("cheap", 1), priced("mid", 4), priced("dear", 9)


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
    plan = schedule(md, fleet, [CHEAP, MID, DEAR], replicas)
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
