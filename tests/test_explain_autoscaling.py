"""`modelplane explain` of an autoscaled ModelDeployment (issue #42 point 6): its bounds and the
count placed, the clamp when spec.replicas is outside them, KEDA's last decision, where the
scheduler would put one replica more, and which replica scale_in's order removes first
(docs/design/autoscaling.md, "Status and explain")."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.registry import default_registry
from modelplane.explain import explain, explain_all
from modelplane.labels import CLUSTER, DEPLOYMENT
from modelplane.render import api_server_admission, render_documents
from modelplane.simulate import simulate_stack
from tests.explain_fleets import deployment, documents, eks, existing, h100_class, rendered
from tests.fleet.builders import priced

Obj = dict[str, Any]


def autoscaled(replicas: int, low: int = 1, high: int = 4) -> Obj:
    md = deployment("a", replicas)
    md["spec"]["autoscaling"] = {
        "minReplicas": low,
        "maxReplicas": high,
        "targets": {"waitingRequestsPerReplica": 4},
    }
    return md


def onprem_and_eks(md: Obj) -> list[Obj]:
    """Room for two replicas on onprem's nodes; eks-0 grows for more."""
    return documents(existing("onprem", 2), eks("eks-0", 0, 4), md)


def priced_cluster(name: str, per_node_hour: float, nodes: int) -> list[Obj]:
    """An Existing cluster ``name`` whose H100 class costs ``per_node_hour``."""
    cls = priced(h100_class(f"h100-{name}"), per_node_hour)
    cluster = existing(name, nodes)
    cluster["spec"]["nodePools"][0]["className"] = cls["metadata"]["name"]
    return [cls, cluster]


def explained(docs: list[Obj]) -> Any:
    (e,) = explain_all(copy.deepcopy(docs))
    assert e.autoscaling is not None
    return e.autoscaling


def render(docs: list[Obj]) -> list[Obj]:
    return render_documents(
        default_registry(), copy.deepcopy(docs), (), api_server_admission(), simulate_stack
    )


def replicas_of(docs: list[Obj]) -> dict[str, Obj]:
    return {
        d["metadata"]["name"]: d
        for d in docs
        if d["kind"] == "ModelReplica" and DEPLOYMENT in d["metadata"].get("labels", {})
    }


def test_an_autoscaled_deployment_is_explained_with_its_bounds_and_count_placed() -> None:
    text = explain(onprem_and_eks(autoscaled(2)))
    assert "  autoscaling: 1 to 4 replicas, 2 placed\n" in text


def test_a_manual_deployment_has_no_autoscaling_block() -> None:
    docs = onprem_and_eks(deployment("a", 2))
    (e,) = explain_all(docs)
    assert "autoscaling" not in explain(copy.deepcopy(docs))
    assert "autoscaling" not in e.to_dict()


def test_replicas_outside_the_bounds_are_named_as_clamped() -> None:
    text = explain(onprem_and_eks(autoscaled(6, high=3)))
    assert "spec.replicas 6 is outside [1, 3]: clamped to 3" in text
    assert "autoscaling: 1 to 3 replicas, 3 placed" in text


def test_the_last_decision_is_the_input_status_kubectl_shows() -> None:
    md = autoscaled(3)
    md["status"] = {
        "autoscaling": {"minReplicas": 1, "maxReplicas": 4, "desiredReplicas": 3},
        "conditions": [
            {
                "type": "Autoscaling",
                "status": "True",
                "reason": "Scaling",
                "message": "the autoscaler asks for 3 replicas",
            }
        ],
    }
    line = next(s for s in explained(onprem_and_eks(md)).text() if "last decision" in s)
    assert line == (
        "    last decision (observed): Scaling: the autoscaler asks for 3 replicas "
        "(desiredReplicas 3)"
    )


def test_without_an_observed_status_the_last_decision_is_the_rendered_condition() -> None:
    scaling = explained(onprem_and_eks(autoscaled(2)))
    assert scaling.source == "rendered"
    assert scaling.condition["reason"] == "NoMetricsEndpoint"


def test_the_next_replica_goes_where_render_places_one_replica_more() -> None:
    scaling = explained(onprem_and_eks(autoscaled(2)))
    placed = rendered(onprem_and_eks(autoscaled(3)))["ml/a"]
    _, cluster, pools = next(p for p in placed if p[0] == 2)
    assert (scaling.next.index, scaling.next.cluster, scaling.next.pools) == (2, cluster, pools)
    assert cluster == "eks-0"


def test_the_next_replica_says_why_its_cluster_ranked_first() -> None:
    text = explain(onprem_and_eks(autoscaled(2)))
    assert "next replica would go to: replica 2 on eks-0, pool h100: " in text


def test_with_no_room_for_one_more_the_next_replica_says_why() -> None:
    text = explain(documents(existing("onprem", 2), autoscaled(2)))
    assert "    next replica: no cluster has room for it: onprem: pool h100 has 0 free" in text


def test_at_max_replicas_no_next_replica_is_placed() -> None:
    scaling = explained(onprem_and_eks(autoscaled(3, high=3)))
    assert scaling.next is None
    assert "    next replica: none, at maxReplicas (3)" in scaling.text()


def test_at_min_replicas_no_replica_would_leave() -> None:
    scaling = explained(onprem_and_eks(autoscaled(1, low=1)))
    assert scaling.leaving is None
    assert "    a scale-in: none, at minReplicas (1)" in scaling.text()


def test_the_first_to_leave_is_the_replica_a_scale_in_removes() -> None:
    """The dearer cluster's replica leaves (east: the balance order alone would take west's, the
    later name), as the scheduler removes it when the autoscaler writes one replica fewer over
    the replicas render made."""
    docs = [
        *documents(autoscaled(2)),
        *priced_cluster("west", 10.0, 1),
        *priced_cluster("east", 40.0, 1),
    ]
    scaling = explained(docs)
    made = replicas_of(render(docs))
    fewer = [
        *(autoscaled(1) if d.get("kind") == "ModelDeployment" else d for d in docs),
        *made.values(),
    ]
    gone = set(made) - set(replicas_of(render(fewer)))
    assert gone == {scaling.leaving.name}
    assert scaling.leaving.cluster == "east"


def test_the_first_to_leave_says_it_is_the_dearest_capacity() -> None:
    docs = [
        *documents(autoscaled(2)),
        *priced_cluster("west", 10.0, 1),
        *priced_cluster("east", 40.0, 1),
    ]
    line = next(s for s in explained(docs).text() if "scale-in would remove first" in s)
    assert "on east: it is not serving; the dearest capacity: 40 per hour against 10" in line


def test_the_first_to_leave_keeps_the_spread_before_giving_back_the_dearest() -> None:
    md = autoscaled(3)
    spread = {"maxSkew": 1, "topologyKey": CLUSTER, "whenUnsatisfiable": "DoNotSchedule"}
    md["spec"]["template"]["spec"]["topologySpreadConstraints"] = [spread]
    docs = [*documents(md), *priced_cluster("west", 10.0, 2), *priced_cluster("east", 40.0, 1)]
    leaving = explained(docs).leaving
    assert leaving.cluster == "west"
    assert leaving.why[0] == (
        "its removal keeps every spread constraint, a dearer replica's would break one"
    )


def test_json_carries_the_autoscaling_block() -> None:
    (e,) = explain_all(onprem_and_eks(autoscaled(6, high=3)))
    out = e.to_dict()["autoscaling"]
    assert (out["specReplicas"], out["placed"], out["clamped"]) == (6, 3, True)
    assert out["next"] is None
    assert out["scaleIn"]["cluster"] in {"onprem", "eks-0"}
