"""The InferenceClass composition: data only, accepted with a summary of its devices."""

from __future__ import annotations

from modelplane.compose.inferenceclass.composer import compose_class
from modelplane.composer import Inputs
from tests.fleet.builders import inference_class


def test_a_class_composes_nothing_and_is_accepted_with_its_devices() -> None:
    cls = inference_class("h100", gpus=8)
    cls["spec"]["devices"].append(
        {"name": "ib", "driver": "fabric.example.com", "claim": "Synthetic"}
    )
    result = compose_class(Inputs(composite=cls))
    assert result.resources == {}
    (cond,) = result.conditions
    assert (cond.type, cond.status, cond.reason) == ("Accepted", "True", "DevicesDescribed")
    assert cond.message == "gpu x8 per node (DRA), ib x1 per node (Synthetic)"
