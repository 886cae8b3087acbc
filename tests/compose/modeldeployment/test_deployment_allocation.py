"""A deployment reads what clusters publish, not the fleet's replicas, and clusters its
clusterSelector does not match are not listed for it.

Races for a cluster's last devices are closed by the cluster: it admits the replicas placed on
it in order and refuses the rest; a placement counts as confirmed once the cluster's allocation
includes it, and a refused one is placed again elsewhere. Composed through the FunctionRunner
and over render's passes, as Crossplane would run them.
"""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.inferencecluster.composer import GATEWAYS
from modelplane.compose.inferencecluster.composer import REPLICAS as CLUSTER_REPLICAS
from modelplane.compose.modeldeployment.composer import CLASSES, CLUSTERS, REPLICAS
from modelplane.compose.modeldeployment.drain import HOLDS, ROUTES
from modelplane.compose.registry import default_registry
from modelplane.composer import Result
from modelplane.render import api_server_admission, render_passes
from modelplane.simulate import simulate_stack
from tests.compose import through
from tests.compose.through import composed_deployment
from tests.fleet.builders import H100, deployment, engine, inference_cluster, member, serving

Obj = dict[str, Any]
WHOLE_NODE = engine("main", member(gpus=8))


def cluster(name: str, nodes: int = 1, region: str = "us") -> Obj:
    return inference_cluster(
        name, {"h100": ("h100", nodes)}, labels={"region": region}, classes=[H100]
    )


def replicas_of(result: Result) -> dict[str, Obj]:
    return {
        k: d.resource for k, d in result.resources.items() if d.resource["kind"] == "ModelReplica"
    }


def specs(replicas: dict[str, Obj]) -> dict[str, Obj]:
    return {k: r["spec"] for k, r in replicas.items()}


def scheduled(result: Result) -> Any:
    return next(c for c in result.conditions if c.type == "ReplicasScheduled")


# --- narrowed by the clusterSelector ---------------------------------------------------------


def test_a_cluster_selectors_match_labels_narrow_the_clusters_required() -> None:
    md = deployment(selector={"region": "eu"})
    asked = composed_deployment(md, [], unrouted=True).requirements[CLUSTERS]
    assert (asked.kind, asked.match_labels) == ("InferenceCluster", {"region": "eu"})


def test_a_cluster_selector_no_cluster_matches_says_so_and_places_nothing() -> None:
    result = composed_deployment(deployment(selector={"region": "eu"}), [], unrouted=True)
    cond = scheduled(result)
    assert (cond.status, cond.reason) == ("False", "NoEligibleCluster")
    assert (
        cond.message
        == "0 of 1 replicas placed; no InferenceCluster matches clusterSelector region=eu"
    )
    assert result.events == []


def serving_in_us() -> dict[str, Obj]:
    """A deployment selecting region us, its replica placed on east and serving, as observed."""
    md = deployment(selector={"region": "us"})
    placed = replicas_of(composed_deployment(md, [cluster("east")], unrouted=True))
    return {k: serving(r) for k, r in placed.items()}


def test_a_replica_on_a_cluster_no_longer_listed_is_kept_while_its_cluster_is_asked_for() -> None:
    observed = serving_in_us()
    # The selector now names eu: the list holds west only, not the cluster the replica runs on.
    moved = deployment(selector={"region": "eu"})
    result = composed_deployment(moved, [cluster("west", region="eu")], observed, unrouted=True)
    assert specs(replicas_of(result)) == specs(observed)
    asked = result.requirements["cluster/east"]
    assert (asked.kind, asked.match_name) == ("InferenceCluster", "east")


def test_a_replica_on_a_cluster_no_longer_selected_serves_until_its_replacement_does() -> None:
    observed = serving_in_us()
    moved = deployment(selector={"region": "eu"})
    east = {"cluster/east": [cluster("east")]}
    result = composed_deployment(
        moved, [cluster("west", region="eu")], observed, unrouted=True, **east
    )
    assert sorted(replicas_of(result)) == ["replica-0-east", "replica-0-west"]
    assert "kept serving until its replacement serves" in scheduled(result).message


def test_with_no_cluster_matching_a_replica_stands_on_its_cluster_is_asked_for_by_name() -> None:
    observed = serving_in_us()
    result = composed_deployment(
        deployment(selector={"region": "eu"}), [], observed, replicas=[], unrouted=True
    )
    assert specs(replicas_of(result)) == specs(observed)
    assert "cluster/east" in result.requirements


# --- the race for a cluster's last devices -----------------------------------------------------


def publish(ic: Obj, replicas: list[Obj]) -> Obj:
    """The cluster after one reconcile through the FunctionRunner with ``replicas`` listed."""
    rsp = through.run(
        ic, {}, {"inference-classes": [H100], CLUSTER_REPLICAS: replicas, GATEWAYS: []}
    )
    assert rsp.fatal is None, rsp.fatal
    return {**ic, "status": {**ic["status"], "allocation": rsp.status["allocation"]}}


def created(replica: Obj, at: str) -> Obj:
    out = copy.deepcopy(replica)
    out["metadata"]["creationTimestamp"] = at
    return out


def fleet_required(clusters: list[Obj], own: list[Obj]) -> dict[str, list[Obj]]:
    return {CLUSTERS: clusters, CLASSES: [H100], REPLICAS: own, ROUTES: [], HOLDS: []}


def test_two_deployments_placing_on_one_clusters_last_node_in_one_reconcile_each_end_apart() -> (
    None
):
    east, west = publish(cluster("east"), []), publish(cluster("west"), [])
    alpha, beta = deployment("alpha", WHOLE_NODE), deployment("beta", WHOLE_NODE)
    # One reconcile each, against the same allocation: both take east's only node.
    a1 = through.run(alpha, {}, fleet_required([east, west], []))
    b1 = through.run(beta, {}, fleet_required([east, west], []))
    assert [k for k in a1.resources if k.startswith("replica-")] == ["replica-0-east"]
    assert [k for k in b1.resources if k.startswith("replica-")] == ["replica-0-east"]
    assert a1.condition("ReplicasScheduled")[2].endswith(
        "awaiting admission by their cluster: east (0)"
    )
    ra = created(a1.resources["replica-0-east"], "2026-12-01T10:00:00Z")
    rb = created(b1.resources["replica-0-east"], "2026-12-01T10:00:01Z")
    # East sees both: it admits the one created first and refuses the other.
    east = publish(east, [ra, rb])
    a2 = through.run(alpha, {"replica-0-east": ra}, fleet_required([east, west], [ra]))
    b2 = through.run(beta, {"replica-0-east": rb}, fleet_required([east, west], [rb]))
    assert [k for k in a2.resources if k.startswith("replica-")] == ["replica-0-east"]
    assert "awaiting" not in a2.condition("ReplicasScheduled")[2]
    assert [k for k in b2.resources if k.startswith("replica-")] == ["replica-0-west"]
    assert (
        f"removing {rb['metadata']['name']} from east: cluster east refused it: pool h100 cannot "
        "hold it beside the replicas admitted before it"
    ) in b2.condition("ReplicasScheduled")[2]


def test_a_refused_replica_that_serves_keeps_serving_until_its_replacement_does() -> None:
    east, west = publish(cluster("east"), []), publish(cluster("west"), [])
    alpha, beta = deployment("alpha", WHOLE_NODE), deployment("beta", WHOLE_NODE)
    ra = created(
        through.run(alpha, {}, fleet_required([east, west], [])).resources["replica-0-east"], "T0"
    )
    rb = serving(
        created(
            through.run(beta, {}, fleet_required([east, west], [])).resources["replica-0-east"],
            "T1",
        )
    )
    east = publish(east, [ra, rb])
    b2 = through.run(beta, {"replica-0-east": rb}, fleet_required([east, west], [rb]))
    assert sorted(k for k in b2.resources if k.startswith("replica-")) == [
        "replica-0-east",
        "replica-0-west",
    ]


def test_two_deployments_racing_for_one_clusters_last_node_settle_apart_over_renders_passes() -> (
    None
):
    docs = [
        H100,
        cluster("us-east"),
        cluster("us-west"),
        deployment("alpha", WHOLE_NODE),
        deployment("beta", WHOLE_NODE),
    ]
    for c in docs[1:3]:
        del c["status"]
    rendered, passes = render_passes(
        default_registry(), docs, admit=api_server_admission(), simulate=simulate_stack
    )
    on = {
        d["metadata"]["labels"]["modelplane.ai/deployment"]: d["spec"]["clusterName"]
        for d in rendered
        if d.get("kind") == "ModelReplica" and "status" in d
    }
    assert on == {"alpha": "us-east", "beta": "us-west"}
    allocations = {
        d["metadata"]["name"]: d["status"]["allocation"]
        for d in rendered
        if d.get("kind") == "InferenceCluster"
    }
    assert [a["deployment"] for a in allocations["us-east"]["admitted"]] == ["ml/alpha"]
    assert [a["deployment"] for a in allocations["us-west"]["admitted"]] == ["ml/beta"]
    assert "refused" not in allocations["us-east"]
    # Beta took us-east in the first pass too, was refused in the next, and moved.
    assert passes > 3
