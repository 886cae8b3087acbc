"""A required or observed resource no composer can read is a Fatal result naming the
requirement (or composition resource name), the item and what is wrong, never a composer's bare
exception; through the FunctionRunner, with admission as `modelplane serve` runs it and
without."""

from __future__ import annotations

from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.compose.admission import Admission
from modelplane.compose.modeldeployment.composer import CLASSES, CLUSTERS, REPLICAS
from modelplane.compose.registry import default_registry
from modelplane.composer import Inputs
from modelplane.function import FunctionRunner, run_composer
from tests.compose.modelcache.test_modelcache import cache
from tests.compose.through import request
from tests.fleet.builders import deployment, inference_class, inference_cluster

Obj = dict[str, Any]
H100 = inference_class("h100")
GOOD = inference_cluster("a", {"p": ("h100", 1)}, classes=[H100])
IC = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "InferenceCluster"}


def fatal(runner: FunctionRunner, composite: Obj, required: dict, observed: dict | None = None):
    rsp = runner.run(request(composite, observed or {}, required))
    messages = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    return messages[0] if messages else None


@pytest.fixture(params=["admitted", "bare"])
def runner(request: pytest.FixtureRequest) -> FunctionRunner:
    admission = Admission.default() if request.param == "admitted" else None
    return FunctionRunner(default_registry(), admission=admission)


def fleet_with(bad: Obj) -> dict[str, list[Obj]]:
    return {CLUSTERS: [GOOD, bad], CLASSES: [H100], REPLICAS: []}


def test_a_listed_item_without_metadata_names_the_requirement_and_index(
    runner: FunctionRunner,
) -> None:
    message = fatal(runner, deployment("qwen"), fleet_with(dict(IC)))
    assert message == "required resource inference-clusters[1] is malformed: it has no metadata"


def test_an_item_of_no_known_kind_without_metadata_is_named_too(runner: FunctionRunner) -> None:
    message = fatal(runner, cache(), {"inference-clusters": [{}]})
    assert message == "required resource inference-clusters[0] is malformed: it has no metadata"


def test_an_item_whose_name_is_missing_says_so() -> None:
    bare = FunctionRunner(default_registry())
    message = fatal(bare, cache(), {"inference-clusters": [{**IC, "metadata": {"labels": {}}}]})
    assert (
        message == "required resource inference-clusters[0] is malformed: metadata.name is missing"
    )


def test_an_item_that_is_a_string_is_named_in_process() -> None:
    # render hands composers plain data through the same entry point as the function.
    inputs = Inputs(composite=cache(), required={"inference-clusters": [GOOD, "junk"]})
    result = run_composer(
        default_registry().lookup("modelplane.ai/v1alpha1", "ModelCache"), inputs, "ModelCache"
    )
    assert result.fatal == (
        "required resource inference-clusters[1] is malformed: it is a string, not an object"
    )


def test_an_observed_resource_without_metadata_names_its_key() -> None:
    bare = FunctionRunner(default_registry())
    observed = {"replica-0-a": {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelReplica"}}
    message = fatal(bare, deployment("qwen"), fleet_with(GOOD), observed)
    assert message == "observed resource 'replica-0-a' is malformed: it has no metadata"
