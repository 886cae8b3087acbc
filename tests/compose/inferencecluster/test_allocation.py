"""The InferenceCluster publishes the allocation of its pools to the replicas placed on it.

It admits them (those its last allocation admitted first, then by creation time) while they
fit, refuses the rest, and never withdraws an admission on a list that lags: a replica it
admitted that the list no longer holds is asked for by name.
"""

from __future__ import annotations

from typing import Any

from modelplane.compose.inferencecluster.allocation import ADMITTED_REPLICA
from modelplane.compose.inferencecluster.composer import CLASSES, REPLICAS, compose_cluster
from modelplane.composer import Inputs, Result
from tests.compose.inferencecluster.support import H100, cluster, run, upstream
from tests.fleet.builders import engine, placed_member, placed_replica

Obj = dict[str, Any]


def replica(name: str, gpus: int, created: str, namespace: str = "ml", on: str = "east") -> Obj:
    r = placed_replica(name, namespace, on, 0, [engine("main", placed_member("h100", gpus))])
    r["metadata"]["creationTimestamp"] = created
    return r


def allocation(result: Result) -> Obj:
    return dict(result.status["allocation"])


def with_status(ic: Obj, result: Result) -> Obj:
    """The cluster as its next reconcile observes it: with the status this one published."""
    return {**ic, "status": result.status}


def test_the_cluster_publishes_what_each_deployment_holds_on_its_pools() -> None:
    ic = cluster(nodePools=[{"name": "h100", "className": "h100", "nodeCount": 1}])
    result = run(ic, replicas=[replica("a", 4, "T0"), replica("b", 2, "T1", namespace="team")])
    assert allocation(result) == {
        "pools": [{"name": "h100", "allocated": {"gpu": 6}}],
        "admitted": [
            {
                "deployment": "ml/a",
                "replicas": ["a-east-0"],
                "pools": [{"name": "h100", "units": ["gpu=4"]}],
            },
            {
                "deployment": "team/b",
                "replicas": ["b-east-0"],
                "pools": [{"name": "h100", "units": ["gpu=2"]}],
            },
        ],
    }


def test_the_published_allocation_is_what_the_xrd_admits_as_status() -> None:
    ic = cluster(nodePools=[{"name": "h100", "className": "h100", "nodeCount": 1}])
    result = run(ic, replicas=[replica("a", 8, "T0"), replica("b", 8, "T1")])
    admitted = upstream().admit({**ic, "status": {"allocation": allocation(result)}})
    assert [str(e) for e in admitted.errors] == []
    assert admitted.object["status"]["allocation"] == allocation(result)


def test_a_replica_that_does_not_fit_beside_those_created_before_it_is_refused() -> None:
    ic = cluster(nodePools=[{"name": "h100", "className": "h100", "nodeCount": 1}])
    result = run(ic, replicas=[replica("late", 8, "T1"), replica("early", 8, "T0")])
    assert [a["replicas"] for a in allocation(result)["admitted"]] == [["early-east-0"]]
    assert allocation(result)["refused"] == [
        {
            "replica": "ml/late-east-0",
            "reason": "pool h100 cannot hold it beside the replicas admitted before it",
        }
    ]


def test_a_replica_admitted_before_keeps_its_devices_from_an_older_one_listed_late() -> None:
    ic = cluster(nodePools=[{"name": "h100", "className": "h100", "nodeCount": 1}])
    late = replica("late", 8, "T1")
    first = run(ic, replicas=[late])
    again = run(with_status(ic, first), replicas=[late, replica("early", 8, "T0")])
    assert [a["replicas"] for a in allocation(again)["admitted"]] == [["late-east-0"]]
    assert [r["replica"] for r in allocation(again)["refused"]] == ["ml/early-east-0"]


def test_until_the_replicas_are_read_the_allocation_stands_as_published() -> None:
    ic = cluster()
    first = run(ic, replicas=[replica("a", 4, "T0")])
    again = run(with_status(ic, first))  # no list of replicas yet
    assert allocation(again) == allocation(first)


def test_an_admitted_replica_no_longer_listed_is_asked_for_by_name_and_stands_meanwhile() -> None:
    ic = with_status(cluster(), run(cluster(), replicas=[replica("a", 4, "T0")]))
    result = run(ic, replicas=[])
    key = f"{ADMITTED_REPLICA}/ml/a-east-0"
    asked = result.requirements[key]
    assert (asked.kind, asked.match_name, asked.namespace) == ("ModelReplica", "a-east-0", "ml")
    assert allocation(result) == ic["status"]["allocation"]


def test_an_admitted_replica_asked_for_by_name_and_found_stays_admitted() -> None:
    a = replica("a", 4, "T0")
    ic = with_status(cluster(), run(cluster(), replicas=[a]))
    result = compose(ic, {REPLICAS: [], f"{ADMITTED_REPLICA}/ml/a-east-0": [a]})
    assert allocation(result) == ic["status"]["allocation"]


def test_an_admitted_replica_asked_for_by_name_and_not_there_leaves_the_allocation() -> None:
    ic = with_status(cluster(), run(cluster(), replicas=[replica("a", 4, "T0")]))
    result = compose(ic, {REPLICAS: [], f"{ADMITTED_REPLICA}/ml/a-east-0": []})
    assert allocation(result) == {"pools": [], "admitted": []}


def test_an_admitted_replica_now_on_another_cluster_leaves_the_allocation() -> None:
    ic = with_status(cluster(), run(cluster(), replicas=[replica("a", 4, "T0")]))
    moved = replica("a", 4, "T0", on="west")
    result = compose(ic, {REPLICAS: [], f"{ADMITTED_REPLICA}/ml/a-east-0": [moved]})
    assert allocation(result)["admitted"] == []


def compose(ic: Obj, required: dict[str, list[Obj]]) -> Result:
    result = compose_cluster(Inputs(composite=ic, required={CLASSES: [H100], **required}))
    assert result.fatal is None, result.fatal
    return result
