"""A required or observed resource no composer can read is a Fatal result naming the
requirement (or composition resource name), the item and what is wrong, never a composer's bare
exception; through the FunctionRunner, with admission as `modelplane serve` runs it and
without."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.compose.admission import Admission
from modelplane.compose.modeldeployment.composer import CLASSES, CLUSTERS, REPLICAS
from modelplane.compose.registry import default_registry
from modelplane.composer import Inputs
from modelplane.function import FunctionRunner, run_composer
from tests.compose.modelcache.test_modelcache import cache
from tests.compose.modelservice.kit import cluster, gateway, replica_endpoint, service
from tests.compose.through import request
from tests.fleet.builders import H100, deployment, inference_cluster

Obj = dict[str, Any]
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


def test_an_item_of_no_kind_without_metadata_is_named_too(runner: FunctionRunner) -> None:
    message = fatal(runner, cache(), {"inference-clusters": [{}]})
    assert message == (
        "required resource inference-clusters[0] is malformed: it has no apiVersion and kind; "
        "the requirement asked for InferenceCluster.modelplane.ai"
    )


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


# --- items read as the kind their requirement asked for ----------------------------------------

SEED = Path(__file__).resolve().parents[1] / "examples" / "replica-seed"


def seed(name: str) -> Obj:
    return yaml.safe_load((SEED / f"{name}.yaml").read_text())


def bad_cluster(name: str, **overrides: Any) -> Obj:
    """A cluster whose status.gateway is a string where an object belongs, without apiVersion
    and kind unless ``overrides`` give them: read against its own claim (none: an empty
    schema), the string reached the composers, which failed with AttributeError."""
    obj = {k: v for k, v in cluster(name).items() if k not in ("apiVersion", "kind")}
    obj["status"] = {**obj["status"], "gateway": "junk"}
    return {**obj, **overrides}


def front_door(bad: Obj) -> dict[str, tuple[Obj, str, dict[str, list[Obj]]]]:
    """The three kinds that read a cluster's gateway: composite, requirement, requirements."""
    replica_cluster = {**seed("cluster"), **{k: v for k, v in bad.items() if k != "metadata"}}
    for key in ("apiVersion", "kind"):
        if key not in bad:
            replica_cluster.pop(key, None)
    return {
        "ModelService": (
            service(),
            "inference-clusters",
            {
                "inference-gateways": [gateway("main", "edge")],
                "inference-clusters": [bad],
                "endpoints-0": [replica_endpoint("qwen-edge", "edge")],
                "replicas-0": [],
            },
        ),
        "InferenceGateway": (
            gateway("main", "edge"),
            "inference-clusters",
            {"inference-clusters": [bad]},
        ),
        "ModelReplica": (seed("replica"), "cluster", {"cluster": [replica_cluster]}),
    }


@pytest.mark.parametrize("kind", ["ModelService", "InferenceGateway", "ModelReplica"])
def test_an_item_without_apiversion_and_kind_is_a_fatal_naming_requirement_and_item(
    runner: FunctionRunner, kind: str
) -> None:
    composite, requirement, required = front_door(bad_cluster("edge"))[kind]
    message = fatal(runner, composite, required)
    name = required[requirement][0]["metadata"]["name"]
    assert message == (
        f'required resource {requirement}[0] ("{name}") is malformed: it has no apiVersion and '
        "kind; the requirement asked for InferenceCluster.modelplane.ai"
    )


@pytest.mark.parametrize("kind", ["ModelService", "InferenceGateway", "ModelReplica"])
def test_an_item_of_another_kind_is_a_fatal_naming_both_kinds(
    runner: FunctionRunner, kind: str
) -> None:
    claim = {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelReplica"}
    composite, requirement, required = front_door(bad_cluster("edge", **claim))[kind]
    message = fatal(runner, composite, required)
    name = required[requirement][0]["metadata"]["name"]
    assert message == (
        f'required resource {requirement}[0] ("{name}") is malformed: it is '
        "ModelReplica.modelplane.ai, but the requirement asked for InferenceCluster.modelplane.ai"
    )


@pytest.mark.parametrize("kind", ["ModelService", "InferenceGateway", "ModelReplica"])
def test_a_string_where_the_gateway_object_belongs_is_refused_in_the_servers_words(
    kind: str,
) -> None:
    admitted = FunctionRunner(default_registry(), admission=Admission.default())
    composite, requirement, required = front_door(bad_cluster("edge", **IC))[kind]
    message = fatal(admitted, composite, required)
    name = required[requirement][0]["metadata"]["name"]
    assert message == (
        f'required resource {requirement}[0] InferenceCluster.modelplane.ai "{name}" is invalid: '
        'status.gateway: Invalid value: "string": status.gateway in body must be of type '
        'object: "string"'
    )


EXAMPLES = sorted(p for p in SEED.parent.iterdir() if p.is_dir())


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_requirement_a_composer_asks_for_is_declared_with_its_kind(
    example: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An undeclared requirement is read as whatever kind its items claim: declared, an item of
    # another kind (or of none) is refused before any composer reads it.
    from modelplane import manifests, render

    asked: list[tuple[str, str, str, tuple[str, str]]] = []

    def recording(composer: Any, inputs: Inputs, kind: str, log: Any = None) -> Any:
        result = run_composer(composer, inputs, kind, log)
        composite = inputs.composite
        for name, r in result.requirements.items():
            asked.append(
                (composite["apiVersion"], composite["kind"], name, (r.api_version, r.kind))
            )
        return result

    monkeypatch.setattr(render, "run_composer", recording)
    registry = default_registry()
    inputs = [m.obj for m in manifests.load([str(example)])]
    render.Renderer(registry, inputs).render_all()
    assert asked
    undeclared = {
        (kind, name, wanted)
        for api_version, kind, name, wanted in asked
        if registry.required_kind(api_version, kind, name) != wanted
    }
    assert not undeclared
