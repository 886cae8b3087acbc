"""RunFunction, table-driven: what Crossplane sends in, what the function answers."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.composer import Composer, Inputs, Registry, Result
from modelplane.function import FunctionRunner
from modelplane.structs import dict_to_struct
from tests import standin
from tests.compose.through import response_to_dict


def request(composite: dict | None, **required: list[dict]) -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag="t1"))
    if composite is not None:
        req.observed.composite.resource.CopyFrom(dict_to_struct(composite))
    for name, objs in required.items():
        req.required_resources[name].items.extend(
            fnv1.Resource(resource=dict_to_struct(o)) for o in objs
        )
    return req


def answered(replica: dict) -> fnv1.RunFunctionRequest:
    """A request for ``replica`` with its cluster and class requirements answered."""
    return request(replica, cluster=[standin.cluster()], **{"class": [standin.inference_class()]})


def replica_registry(compose: Composer, lazy: Iterable[str] = ()) -> Registry:
    """A registry composing ModelReplicas with ``compose`` alone."""
    registry = Registry()
    registry.register("modelplane.ai/v1alpha1", "ModelReplica", compose, lazy=lazy)
    return registry


def run(req: fnv1.RunFunctionRequest, registry: Registry | None = None) -> fnv1.RunFunctionResponse:
    runner = FunctionRunner(registry or standin.registry())
    return asyncio.run(runner.RunFunction(req, None))


def fatal_messages(rsp: fnv1.RunFunctionResponse) -> list[str]:
    return [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]


def raising(inputs: Inputs) -> Result:
    raise KeyError("spec")


FAULTS = [
    pytest.param(
        request({"apiVersion": "example.org/v1", "kind": "Bucket", "metadata": {"name": "b"}}),
        "no composer for Bucket in API group 'example.org'; "
        "this function composes ModelReplica.modelplane.ai",
        id="unknown kind",
    ),
    pytest.param(
        request(None), "request carries no observed composite resource", id="no composite"
    ),
    pytest.param(
        request({"spec": {"clusterName": "c1"}}),
        "observed composite is not a Kubernetes object: apiVersion and kind are required",
        id="non-object composite",
    ),
    pytest.param(
        request({"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelReplica", "spec": {}}),
        "composing ModelReplica.modelplane.ai/v1alpha1 failed: KeyError: 'clusterName'",
        id="composer raises",
    ),
]


@pytest.mark.parametrize(("req", "message"), FAULTS)
def test_a_fault_becomes_one_fatal_result_naming_the_problem(req, message):
    assert fatal_messages(run(req)) == [message]


@pytest.mark.parametrize(("req", "message"), FAULTS)
def test_a_fault_carries_the_desired_state_forward_unchanged(req, message):
    req.desired.resources["serving"].resource.update({"kind": "Deployment"})
    rsp = run(req)
    assert dict(rsp.desired.resources) == dict(req.desired.resources)


def test_a_composer_exception_never_reaches_the_caller_as_a_traceback():
    registry = replica_registry(raising)
    rsp = run(request(standin.replica()), registry)
    assert fatal_messages(rsp) == [
        "composing ModelReplica.modelplane.ai/v1alpha1 failed: KeyError: 'spec'"
    ]
    assert "Traceback" not in fatal_messages(rsp)[0]


def test_a_first_call_asks_for_the_required_cluster_by_name():
    rsp = run(request(standin.replica(cluster="c9")))
    selector = rsp.requirements.resources["cluster"]
    assert (selector.api_version, selector.kind, selector.match_name) == (
        "modelplane.ai/v1alpha1",
        "InferenceCluster",
        "c9",
    )
    assert not rsp.desired.resources


def test_required_resources_reach_the_composer_as_plain_dicts():
    rsp = run(answered(standin.replica(engines=2)))
    out = response_to_dict(rsp)
    assert sorted(out["desired"]["resources"]) == ["engine-e0", "engine-e1"]
    assert out["desired"]["resources"]["engine-e0"]["resource"]["data"]["class"] == "l4"


def test_integers_survive_the_struct_round_trip_as_integers():
    seen: list[Inputs] = []

    def record(inputs: Inputs) -> Result:
        seen.append(inputs)
        return Result()

    registry = replica_registry(record)
    run(request(standin.replica(engines=2, ratio=0.5)), registry)
    engines = seen[0].composite["spec"]["engines"]
    assert [type(e["copies"]) for e in engines] == [int, int]
    assert seen[0].composite["spec"]["ratio"] == 0.5


def test_readiness_conditions_events_and_status_are_returned():
    req = answered(standin.replica())
    req.observed.resources["engine-e0"].resource.update(
        {"kind": "ConfigMap", "metadata": {"name": "e0"}, "status": {"ready": True}}
    )
    rsp = run(req)
    assert rsp.desired.resources["engine-e0"].ready == fnv1.READY_TRUE
    assert [(c.type, c.status, c.reason, c.message) for c in rsp.conditions] == [
        ("Placed", fnv1.STATUS_CONDITION_TRUE, "Placed", "on c1")
    ]
    assert [(r.severity, r.message) for r in rsp.results] == [
        (fnv1.SEVERITY_NORMAL, "composed 1 engines")
    ]
    assert rsp.desired.composite.resource["status"]["engines"] == 1


def test_an_unready_resource_is_reported_not_ready():
    req = answered(standin.replica())
    assert run(req).desired.resources["engine-e0"].ready == fnv1.READY_FALSE


def test_the_response_carries_the_request_tag_and_a_ttl():
    rsp = run(request(standin.replica()))
    assert rsp.meta.tag == "t1"
    assert rsp.meta.ttl.seconds == 60


def test_an_identical_request_is_answered_from_the_cache_with_its_own_tag():
    calls: list[int] = []

    def counting(inputs: Inputs) -> Result:
        calls.append(1)
        return standin.compose(inputs)

    registry = replica_registry(counting)
    runner = FunctionRunner(registry)
    first = runner.run(request(standin.replica()))
    again = request(standin.replica())
    again.meta.tag = "t2"
    second = runner.run(again)
    third = runner.run(request(standin.replica()))
    assert len(calls) == 2  # t2 is a new tag, so it composed; t1 again came from the cache
    assert second.meta.tag == "t2"
    assert third == first


def test_each_iteration_of_required_resources_under_one_tag_gets_its_own_answer():
    # Crossplane tags a pipeline step once, then sends each iteration of its requirements,
    # answered, under that tag (crossplane v2.3.4 composition_functions.go Tag,
    # xfn/required_resources.go): a cache keyed by tag answered them all alike.
    runner = FunctionRunner(standin.registry())
    first = runner.run(request(standin.replica()))
    second = runner.run(answered(standin.replica()))
    assert first.meta.tag == second.meta.tag == "t1"
    assert "cluster" in first.requirements.resources
    assert second.desired.resources != first.desired.resources


def test_a_fatal_response_is_not_cached():
    registry = replica_registry(raising)
    runner = FunctionRunner(registry)
    runner.run(request(standin.replica()))
    registry.register("modelplane.ai/v1alpha1", "ModelReplica", standin.compose)
    assert not fatal_messages(runner.run(request(standin.replica())))


def test_a_request_without_a_tag_is_cached_by_its_content():
    runner = FunctionRunner(standin.registry())
    a, b = request(standin.replica()), request(standin.replica(cluster="other"))
    a.meta.tag = b.meta.tag = ""
    ra, rb = runner.run(a), runner.run(b)
    assert ra.requirements.resources["cluster"].match_name == "c1"
    assert rb.requirements.resources["cluster"].match_name == "other"


def test_requirements_registered_lazy_arrive_as_views_and_others_as_dicts():
    from modelplane.structs import StructView

    seen: list[Inputs] = []

    def record(inputs: Inputs) -> Result:
        seen.append(inputs)
        return Result()

    registry = replica_registry(record, lazy=["class"])
    run(answered(standin.replica()), registry)
    assert type(seen[0].required["cluster"][0]) is dict
    assert isinstance(seen[0].required["class"][0], StructView)
    assert seen[0].required["class"][0]["metadata"]["name"] == "l4"


def test_observed_composed_resources_arrive_as_views_and_carry_forward_unchanged():
    from modelplane.composer import Desired
    from modelplane.structs import StructView

    seen: list[Inputs] = []

    def carry(inputs: Inputs) -> Result:
        seen.append(inputs)
        return Result(resources={k: Desired(dict(v)) for k, v in inputs.observed.items()})

    observed = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "config"},
        "data": {"replicas": 2, "a": "b"},
    }
    req = request(standin.replica())
    req.observed.resources["config"].resource.CopyFrom(dict_to_struct(observed))
    rsp = run(req, replica_registry(carry))
    assert isinstance(seen[0].observed["config"], StructView)
    assert seen[0].observed["config"]["data"]["replicas"] == 2
    assert response_to_dict(rsp)["desired"]["resources"]["config"]["resource"] == observed


def test_composite_paths_registered_lazy_arrive_as_views_and_the_rest_as_plain_data():
    from modelplane.structs import ListView, StructView

    seen: list[Inputs] = []

    def record(inputs: Inputs) -> Result:
        seen.append(inputs)
        return Result()

    registry = Registry()
    registry.register(
        "modelplane.ai/v1alpha1",
        "ModelReplica",
        record,
        lazy_composite=["spec.engines[].members", "metadata.labels"],
    )
    replica = standin.replica(engines=2)
    replica["metadata"]["labels"] = {"team": "ml"}
    run(request(replica), registry)
    composite = seen[0].composite
    assert type(composite["spec"]) is dict and type(composite["spec"]["engines"][1]) is dict
    assert isinstance(composite["spec"]["engines"][1]["members"], ListView)
    assert isinstance(composite["metadata"]["labels"], StructView)
    assert composite["metadata"]["labels"] == {"team": "ml"}


@pytest.mark.parametrize("labels", [None, {}], ids=["no selector", "empty labels"])
def test_a_requirement_for_every_object_of_a_kind_is_an_empty_label_selector(labels):
    from modelplane.composer import Requirement

    def require_all(inputs: Inputs) -> Result:
        return Result(requirements={"all": Requirement("v1", "Secret", match_labels=labels)})

    registry = replica_registry(require_all)
    selector = run(request(standin.replica()), registry).requirements.resources["all"]
    assert selector.WhichOneof("match") == "match_labels"
    assert dict(selector.match_labels.labels) == {}


def test_a_new_tag_with_the_same_content_composes_again_with_identical_desired_state():
    runner = FunctionRunner(standin.registry())
    req = answered(standin.replica(engines=2))
    first = runner.run(req)
    req.meta.tag = "t-status-changed"
    second = runner.run(req)
    assert second.desired == first.desired
    assert second.meta.tag == "t-status-changed"


def test_a_resource_an_earlier_step_desired_is_replaced_whole():
    req = answered(standin.replica())
    first = run(req)
    (name,) = list(first.desired.resources)[:1]
    req.desired.resources[name].resource.CopyFrom(dict_to_struct({"stale": "field"}))
    assert run(req).desired.resources[name] == first.desired.resources[name]


# --- on the wire: the tag, limits, the cache's bytes ------------------------------------------


def test_the_tag_is_read_off_the_wire_wherever_meta_lies():
    from modelplane.function import peek_tag

    req = request(standin.replica())
    req.meta.tag = "wire"
    assert peek_tag(req.SerializeToString()) == "wire"
    # Serialized messages concatenate into their merge: here meta comes after observed.
    observed = fnv1.RunFunctionRequest(observed=req.observed).SerializeToString()
    meta = fnv1.RunFunctionRequest(meta=req.meta).SerializeToString()
    assert peek_tag(observed + meta) == "wire"


def test_a_request_that_is_not_protobuf_has_no_tag():
    from modelplane.function import peek_tag

    assert peek_tag(b"") == ""
    assert peek_tag(b"\xff\xff") == ""


def test_a_request_nested_past_the_decoder_limit_is_fatal_naming_the_limit_and_keeps_its_tag():
    from modelplane.function import UNDECODABLE_DEPTH

    value: dict = {"leaf": 1}
    for _ in range(40):
        value = {"deeper": value}
    req = request(standin.replica(extra=value))
    req.meta.tag = "deep"
    raw, outcome = FunctionRunner(standin.registry()).handle_bytes(req.SerializeToString(), 1 << 20)
    rsp = fnv1.RunFunctionResponse.FromString(raw)
    assert rsp.meta.tag == "deep"
    assert fatal_messages(rsp) == [UNDECODABLE_DEPTH]
    assert (outcome.result, outcome.message) == ("fatal", UNDECODABLE_DEPTH)


def test_a_response_larger_than_the_send_limit_is_a_fatal_naming_it():
    req = answered(standin.replica(engines=40))
    runner = FunctionRunner(standin.registry())
    whole, _ = runner.handle_bytes(req.SerializeToString(), 1 << 20)
    raw, outcome = runner.handle_bytes(req.SerializeToString(), len(whole) - 1)
    [message] = fatal_messages(fnv1.RunFunctionResponse.FromString(raw))
    assert message.startswith("the response is 0.0 MiB, more than the ")
    assert "Crossplane receives at most 4 MiB" in message
    assert message.endswith("a ModelReplica's response grows with what it composes")
    assert outcome.result == "fatal"


def test_a_refused_response_says_what_sizes_a_gateways_response() -> None:
    from modelplane.function import _what_sizes

    assert "InferenceGatewayShard" in _what_sizes("InferenceGateway")
    assert "two objects for every cluster hashed to it" in _what_sizes("InferenceGatewayShard")
    assert "spec.replicas" in _what_sizes("ModelDeployment")


def test_the_cache_is_bounded_by_bytes_however_many_entries():
    from modelplane.kube.lru import Lru

    cache: Lru[str] = Lru(1000)
    for i in range(100):
        cache.put(str(i), "x", 300)
    assert cache.size <= 1000 and len(cache) == 3
    assert cache.get("99") == "x" and cache.get("0") is None


def test_an_entry_larger_than_the_whole_budget_is_not_kept():
    from modelplane.kube.lru import Lru

    cache: Lru[str] = Lru(1000)
    cache.put("small", "x", 10)
    cache.put("huge", "x", 5000)
    assert cache.get("huge") is None and cache.get("small") == "x"


def test_many_large_requests_keep_the_response_cache_within_its_bytes():
    # A megabyte container argument is carried into each response: 30 distinct requests,
    # a budget of five of them.
    from modelplane.compose.registry import default_registry
    from tests.compose.modelreplica.support import cluster, engine, replica, standalone

    budget = 5 * 1024 * 1024 + 512 * 1024
    runner = FunctionRunner(default_registry(), cache_size=budget)
    for i in range(30):
        member = standalone()
        member["template"]["spec"]["containers"][0]["args"] = [f"{i}" + "x" * (1 << 20)]
        req = request(replica(engine("main", member)), cluster=[cluster()])
        req.meta.tag = f"big-{i}"
        assert not fatal_messages(runner.run(req))
    assert runner.responses.size <= budget
    assert 1 <= len(runner.responses) <= 5


def test_a_response_reads_back_as_the_result_it_was_written_from():
    from modelplane.composer import Condition, Desired, Event, Requirement
    from modelplane.function import read_response, write_response

    result = Result(
        resources={
            "a": Desired({"apiVersion": "v1", "kind": "ConfigMap", "data": {"n": 2.0}}, "True"),
            "b": Desired({"apiVersion": "v1", "kind": "Secret"}, "False"),
            "c": Desired({"apiVersion": "v1", "kind": "Service"}),
        },
        status={"engines": 2, "ratio": 0.5},
        conditions=[Condition("Placed", "True", "Placed", "on c1"), Condition("X", "Unknown", "Y")],
        events=[Event("Warning", "slow", "Slow"), Event("Normal", "done")],
        requirements={
            "by-name": Requirement("v1", "Secret", match_name="s", namespace="ml"),
            "every": Requirement("v1", "Secret"),
            "by-labels": Requirement("v1", "Secret", match_labels={"team": "ml"}),
        },
    )
    back = read_response(write_response(fnv1.RunFunctionRequest(), result))
    assert back.resources["a"] == Desired(
        {"apiVersion": "v1", "kind": "ConfigMap", "data": {"n": 2}}, "True"
    )
    assert [back.resources[k].ready for k in "abc"] == ["True", "False", "Unspecified"]
    assert back.status == result.status
    assert back.conditions == result.conditions
    assert back.events == result.events
    assert back.requirements == {k: r.canonical() for k, r in result.requirements.items()}
    assert back.requirements["every"].match_labels == {}
    assert back.fatal is None


def test_a_fatal_response_reads_back_as_one_fatal_message():
    from modelplane.function import fatal_response, read_response

    rsp = fatal_response(fnv1.RunFunctionRequest(), "first")
    rsp.results.append(fnv1.Result(severity=fnv1.SEVERITY_FATAL, message="second"))
    assert read_response(rsp).fatal == "first; second"
