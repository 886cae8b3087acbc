"""Every example replica goes from not serving to serving as simulated copies become ready."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import yaml

from modelplane.compose.modelreplica import labels, simulate
from modelplane.compose.modelreplica.composer import compose
from modelplane.composer import Inputs, Result
from modelplane.kube.admission import Admission

from .support import REPLICA_XRD, example_inputs, example_names, manifests

Obj = dict[str, Any]


def serving(result: Result) -> Any:
    (c,) = [c for c in result.conditions if c.type == "ModelServing"]
    return c


def after(inputs: Inputs, ready_copies: int) -> Result:
    first = compose(inputs)
    observed = simulate.simulate_observed(
        {k: d.resource for k, d in first.resources.items()}, ready_copies
    )
    return compose(dataclasses.replace(inputs, observed=observed))


@pytest.mark.parametrize("name", example_names())
def test_no_ready_copy_is_not_serving(name: str) -> None:
    c = serving(after(example_inputs(name), 0))
    assert (c.status, c.reason) == ("False", "NoReadyCopy")


@pytest.mark.parametrize("name", example_names())
def test_one_ready_copy_of_every_engine_is_serving(name: str) -> None:
    c = serving(after(example_inputs(name), 1))
    assert (c.status, c.reason) == ("True", "Serving")


def test_prefill_decode_example_is_an_admissible_replica() -> None:
    inputs = example_inputs("replica-prefill-decode")
    assert Admission.from_paths([REPLICA_XRD]).admit(inputs.composite).errors == []


def test_prefill_decode_example_runs_the_users_picker_and_config() -> None:
    inputs = example_inputs("replica-prefill-decode")
    objs = manifests(compose(inputs))
    picker = inputs.composite["spec"]["serving"]["endpointPicker"]
    pod = objs["epp-deployment"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == picker["template"]["spec"]["containers"][0]["image"]
    assert pod["imagePullSecrets"] == [{"name": "platform-registry"}]
    assert yaml.safe_load(objs["epp-config"]["data"]["epp-config.yaml"]) == picker["config"]


def test_prefill_decode_example_labels_both_phases() -> None:
    objs = manifests(compose(example_inputs("replica-prefill-decode")))
    for engine, role in (("prefill", "prefill"), ("decode", "decode")):
        pod_labels = objs[f"workload-{engine}"]["spec"]["template"]["metadata"]["labels"]
        assert pod_labels[labels.LLMD_ROLE] == role
