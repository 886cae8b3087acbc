"""ModelDeployment behaviours the public implementation's function tests assert, checked on
ours through the real FunctionRunner (docs/design/parity.md lists them)."""

from __future__ import annotations

from typing import Any

from modelplane.compose.modeldeployment.composer import CLASSES, CLUSTERS, REPLICAS
from tests.compose.through import Response, run
from tests.fleet.builders import (
    H100,
    deployment,
    inference_cluster,
    with_condition,
)

Obj = dict[str, Any]
FLEET = [inference_cluster("a", {"p": ("h100", 2)}, classes=[H100])]


def reconcile(md: Obj, observed: dict[str, Obj] | None = None) -> Response:
    observed = observed or {}
    required = {CLUSTERS: FLEET, CLASSES: [H100], REPLICAS: list(observed.values())}
    rsp = run(md, observed, required)
    assert rsp.fatal is None, rsp.fatal
    return rsp


def of_kind(rsp: Response, kind: str) -> list[Obj]:
    return [r for r in rsp.resources.values() if r.get("kind") == kind]


def labelled(labels: dict[str, str]) -> Obj:
    md = deployment()
    md["spec"]["template"]["metadata"] = {"labels": labels}
    return md


def test_template_labels_reach_the_replicas_and_their_endpoints() -> None:
    md = labelled({"tier": "prod", "team": "search"})
    first = reconcile(md)
    observed = {
        k: with_condition(with_condition(r, "ModelServing", "True", "Serving"), "Ready", "True")
        for k, r in first.resources.items()
    }
    rsp = reconcile(md, observed)
    [replica] = of_kind(rsp, "ModelReplica")
    [endpoint] = of_kind(rsp, "ModelEndpoint")
    for obj in (replica, endpoint):
        labels = obj["metadata"]["labels"]
        assert (labels["tier"], labels["team"]) == ("prod", "search")
        assert labels["modelplane.ai/cluster"] == "a"
        assert labels["modelplane.ai/replica-index"] == "0"


def test_modelplanes_labels_win_over_a_template_label_of_the_same_key() -> None:
    # The XRD refuses modelplane.ai/ template labels; the composition holds regardless.
    rsp = reconcile(labelled({"modelplane.ai/cluster": "wrong", "tier": "prod"}))
    [replica] = of_kind(rsp, "ModelReplica")
    assert replica["metadata"]["labels"]["modelplane.ai/cluster"] == "a"
    assert replica["metadata"]["labels"]["tier"] == "prod"


def test_two_replicas_on_one_cluster_are_distinct_resources() -> None:
    md = deployment(replicas=2)
    replicas = of_kind(reconcile(md), "ModelReplica")
    assert len({r["metadata"]["name"] for r in replicas}) == 2
    assert {r["spec"]["clusterName"] for r in replicas} == {"a"}
