"""ModelDeployment behaviours the public implementation's function tests assert, checked on
ours through the real FunctionRunner (docs/design/parity.md lists them)."""

from __future__ import annotations

from typing import Any

from tests.compose.through import Response, reconcile_deployment
from tests.fleet.builders import H100, deployment, inference_cluster, serving

Obj = dict[str, Any]
FLEET = [inference_cluster("a", {"p": ("h100", 2)}, classes=[H100])]


def of_kind(rsp: Response, kind: str) -> list[Obj]:
    return [r for r in rsp.resources.values() if r.get("kind") == kind]


def labelled(labels: dict[str, str]) -> Obj:
    md = deployment()
    md["spec"]["template"]["metadata"] = {"labels": labels}
    return md


def test_template_labels_reach_the_replicas_and_their_endpoints() -> None:
    md = labelled({"tier": "prod", "team": "search"})
    first = reconcile_deployment(md, FLEET)
    observed = {k: serving(r) for k, r in first.resources.items()}
    rsp = reconcile_deployment(md, FLEET, observed)
    [replica] = of_kind(rsp, "ModelReplica")
    [endpoint] = of_kind(rsp, "ModelEndpoint")
    for obj in (replica, endpoint):
        labels = obj["metadata"]["labels"]
        assert (labels["tier"], labels["team"]) == ("prod", "search")
        assert labels["modelplane.ai/cluster"] == "a"
        assert labels["modelplane.ai/replica-index"] == "0"


def test_modelplanes_labels_win_over_a_template_label_of_the_same_key() -> None:
    # The XRD refuses modelplane.ai/ template labels; the composition holds regardless.
    rsp = reconcile_deployment(labelled({"modelplane.ai/cluster": "wrong", "tier": "prod"}), FLEET)
    [replica] = of_kind(rsp, "ModelReplica")
    assert replica["metadata"]["labels"]["modelplane.ai/cluster"] == "a"
    assert replica["metadata"]["labels"]["tier"] == "prod"


def test_two_replicas_on_one_cluster_are_distinct_resources() -> None:
    md = deployment(replicas=2)
    replicas = of_kind(reconcile_deployment(md, FLEET), "ModelReplica")
    assert len({r["metadata"]["name"] for r in replicas}) == 2
    assert {r["spec"]["clusterName"] for r in replicas} == {"a"}
