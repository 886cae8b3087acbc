"""The ModelReplica composer behind the gRPC edge: dispatch, integers, requirements, faults."""

from __future__ import annotations

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.compose.registry import default_registry
from modelplane.function import FunctionRunner
from modelplane.structs import dict_to_struct
from tests.compose.through import response_to_dict

from .support import cluster, engine, leader, replica, standalone, worker


def request(composite: dict, *required_clusters: dict) -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag="t"))
    req.observed.composite.resource.CopyFrom(dict_to_struct(composite))
    for c in required_clusters:
        req.required_resources["cluster"].items.add().resource.CopyFrom(dict_to_struct(c))
    return req


def test_the_default_registry_composes_model_replicas():
    assert default_registry().handles("modelplane.ai/v1alpha1", "ModelReplica")


def test_counts_survive_the_struct_round_trip_as_integers():
    composite = replica(engine("main", leader(), worker(nodes=3), copies=2))
    rsp = FunctionRunner(default_registry()).run(request(composite, cluster()))
    lws = response_to_dict(rsp)["desired"]["resources"]["workload-main"]["resource"]
    spec = lws["spec"]["forProvider"]["manifest"]["spec"]
    assert spec["replicas"] == 2 and isinstance(spec["replicas"], int)
    assert spec["leaderWorkerTemplate"]["size"] == 4


def test_the_response_asks_for_the_pinned_cluster():
    rsp = FunctionRunner(default_registry()).run(request(replica(cluster_name="eks")))
    selector = rsp.requirements.resources["cluster"]
    assert (selector.api_version, selector.kind, selector.match_name) == (
        "modelplane.ai/v1alpha1",
        "InferenceCluster",
        "eks",
    )


def test_desired_resources_are_not_ready_until_observed():
    rsp = FunctionRunner(default_registry()).run(request(replica(), cluster()))
    assert {r.ready for r in rsp.desired.resources.values()} == {fnv1.READY_FALSE}


def test_bad_input_is_a_fatal_result_naming_the_field():
    composite = replica(engine("main", standalone()))
    del composite["spec"]["engines"][0]["members"][0]["nodePoolName"]
    rsp = FunctionRunner(default_registry()).run(request(composite, cluster()))
    (result,) = rsp.results
    assert result.severity == fnv1.SEVERITY_FATAL
    assert "spec.engines[0].members[0].nodePoolName: Required value" in result.message
    assert not rsp.desired.resources
