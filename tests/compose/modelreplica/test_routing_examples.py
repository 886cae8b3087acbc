"""Every example replica goes from not serving to serving as simulated copies become ready."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
import yaml

from modelplane import labels, simulate
from modelplane.compose.modelreplica.composer import compose_replica
from modelplane.composer import Inputs, Result
from modelplane.kube.admission import Admission

from .support import REPLICA_XRD, example_inputs, example_names, manifests, serving_condition

Obj = dict[str, Any]


def after(inputs: Inputs, ready_copies: int) -> Result:
    first = compose_replica(inputs)
    observed = simulate.simulate_observed(
        {k: d.resource for k, d in first.resources.items()}, ready_copies
    )
    return compose_replica(dataclasses.replace(inputs, observed=observed))


@pytest.mark.parametrize("name", example_names())
def test_no_ready_copy_is_not_serving(name: str) -> None:
    c = serving_condition(after(example_inputs(name), 0))
    assert (c.status, c.reason) == ("False", "NoReadyCopy")


@pytest.mark.parametrize("name", example_names())
def test_one_ready_copy_of_every_engine_is_serving(name: str) -> None:
    c = serving_condition(after(example_inputs(name), 1))
    assert (c.status, c.reason) == ("True", "Serving")


def test_prefill_decode_example_is_an_admissible_replica() -> None:
    inputs = example_inputs("replica-prefill-decode")
    assert Admission.from_paths([REPLICA_XRD]).admit(inputs.composite).errors == []


def test_prefill_decode_example_runs_the_users_picker_and_config() -> None:
    inputs = example_inputs("replica-prefill-decode")
    objs = manifests(compose_replica(inputs))
    picker = inputs.composite["spec"]["serving"]["endpointPicker"]
    pod = objs["epp-deployment"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == picker["template"]["spec"]["containers"][0]["image"]
    assert pod["imagePullSecrets"] == [{"name": "platform-registry"}]
    assert yaml.safe_load(objs["epp-config"]["data"]["epp-config.yaml"]) == picker["config"]


def test_prefill_decode_example_labels_both_phases() -> None:
    objs = manifests(compose_replica(example_inputs("replica-prefill-decode")))
    for engine, role in (("prefill", "prefill"), ("decode", "decode")):
        pod_labels = objs[f"workload-{engine}"]["spec"]["template"]["metadata"]["labels"]
        assert pod_labels[labels.LLMD_ROLE] == role


def _through_the_function(inputs: Inputs) -> dict[str, Obj]:
    from crossplane.function.proto.v1 import run_function_pb2 as fnv1

    from modelplane.compose.registry import default_registry
    from modelplane.function import FunctionRunner
    from modelplane.structs import dict_to_struct
    from tests.compose.through import response_to_dict

    req = fnv1.RunFunctionRequest(
        observed=fnv1.State(composite=fnv1.Resource(resource=dict_to_struct(inputs.composite)))
    )
    for item in inputs.required["cluster"]:
        req.required_resources["cluster"].items.add().resource.CopyFrom(dict_to_struct(item))
    rsp = response_to_dict(FunctionRunner(default_registry()).run(req))
    return {k: r["resource"] for k, r in rsp["desired"]["resources"].items()}


def test_the_picker_config_survives_the_protobuf_edge_unchanged() -> None:
    inputs = example_inputs("replica-prefill-decode")
    direct = manifests(compose_replica(inputs))
    edge = _through_the_function(inputs)
    for key in ("epp-config", "epp-deployment"):
        assert edge[key]["spec"]["forProvider"]["manifest"] == direct[key], key


def test_the_picker_checksum_does_not_depend_on_config_key_order() -> None:
    inputs = example_inputs("replica-prefill-decode")
    reordered = copy.deepcopy(inputs.composite)
    picker = reordered["spec"]["serving"]["endpointPicker"]
    picker["config"] = dict(reversed(list(picker["config"].items())))
    a = _through_the_function(inputs)["epp-deployment"]
    b = _through_the_function(dataclasses.replace(inputs, composite=reordered))["epp-deployment"]
    assert a == b
