"""One request cannot stall the others: the API bounds what a fleet needs, and a reconcile's
work is bounded by the fleet, whatever a request asks for."""

from __future__ import annotations

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.compose.admission import Admission
from modelplane.compose.modeldeployment.composer import CLASSES, CLUSTERS, REPLICAS
from modelplane.compose.registry import default_registry
from modelplane.function import FunctionRunner
from modelplane.structs import dict_to_struct
from tests.fleet.builders import H100, deployment, engine, inference_cluster, member

MAX_REPLICAS = 1000


def request(md: dict, clusters: int) -> fnv1.RunFunctionRequest:
    """``md`` on ``clusters`` clusters of one 2-node pool of 8 H100s, nothing running yet."""
    fleet = [
        inference_cluster(f"c{i}", {"h100": ("h100", 2)}, classes=[H100]) for i in range(clusters)
    ]
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag="t"))
    req.observed.composite.resource.CopyFrom(dict_to_struct(md))
    for name, objs in ((CLUSTERS, fleet), (CLASSES, [H100])):
        for obj in objs:
            req.required_resources[name].items.add().resource.CopyFrom(dict_to_struct(obj))
    req.required_resources[REPLICAS].SetInParent()
    return req


def test_a_deployment_asking_for_a_billion_replicas_places_what_the_fleet_holds():
    # Past admission (a hand-made request to a runner without it): the fill stops at the first
    # replica that fits nowhere, so the work is the fleet's size, not the request's.
    md = deployment("qwen", engine("main", member(gpus=8)), replicas=10**9)
    rsp = FunctionRunner(default_registry()).run(request(md, clusters=3))
    placed = [k for k in rsp.desired.resources if k.startswith("replica-")]
    assert len(placed) == 6  # 3 clusters x 2 nodes x one 8-GPU replica each
    [scheduled] = [c for c in rsp.conditions if c.type == "ReplicasScheduled"]
    assert scheduled.reason == "InsufficientCapacity"
    assert scheduled.message.startswith("6 of 1000000000 replicas placed")


def test_the_api_admits_the_documented_maximum_of_replicas():
    md = deployment(replicas=MAX_REPLICAS)
    assert Admission.default().admit(md).errors == []


def test_the_api_refuses_more_replicas_than_the_documented_maximum():
    md = deployment(replicas=MAX_REPLICAS + 1)
    assert [str(e) for e in Admission.default().admit(md).errors] == [
        "spec.replicas: Invalid value: 1001: spec.replicas in body should be less than or "
        "equal to 1000"
    ]


def test_the_function_refuses_them_before_scheduling():
    md = deployment("qwen", engine("main", member(gpus=8)), replicas=10**9)
    runner = FunctionRunner(default_registry(), admission=Admission.default())
    rsp = runner.run(request(md, clusters=1))
    [fatal] = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    assert fatal.startswith(
        'ModelDeployment.modelplane.ai "qwen" is invalid: spec.replicas: Invalid value: '
        "1000000000: spec.replicas in body should be less than or equal to 1000"
    )


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        (
            "tolerations",
            [{"key": f"k{i}", "operator": "Exists"} for i in range(33)],
            "spec.template.spec.tolerations: Too many: 33: must have at most 32 items",
        ),
        (
            "clusterSelector",
            {"matchLabels": {f"k{i}": "v" for i in range(33)}},
            "spec.template.spec.clusterSelector.matchLabels: Too many: 33: must have at most "
            "32 items",
        ),
    ],
)
def test_the_api_bounds_what_the_scheduler_matches_against_every_cluster(field, value, error):
    md = deployment()
    md["spec"]["template"]["spec"][field] = value
    assert str(Admission.default().admit(md).errors[0]) == error
