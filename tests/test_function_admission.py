"""One admission for the function and every command, and the shape of what composers read.

The function admits each composite with the project's own admission (the shipped XRDs, then
the composers' own checks) and reads every required and observed resource against its schema,
so malformed input is a Fatal result naming the object and field as the API server would,
never a Python exception's text. ``validate`` reports, and ``render`` and ``explain`` refuse,
exactly what the function refuses.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.cli import main
from modelplane.compose.admission import Admission
from modelplane.compose.registry import default_registry
from modelplane.function import FunctionRunner
from modelplane.manifests import identity
from modelplane.structs import dict_to_struct
from tests.compose.through import deployment_required
from tests.fleet.builders import (
    H100,
    deployment,
    engine,
    fleet,
    inference_cluster,
    placed_member,
    placed_replica,
)

Obj = dict[str, Any]
SEED = Path(__file__).resolve().parents[1] / "examples" / "replica-seed"


def seed(name: str) -> Obj:
    return yaml.safe_load((SEED / f"{name}.yaml").read_text())


def runner() -> FunctionRunner:
    return FunctionRunner(default_registry(), admission=Admission.default())


def request(
    composite: Any, observed: dict[str, Any] | None = None, **required: list[Any]
) -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag="t"))
    req.observed.composite.resource.CopyFrom(dict_to_struct(composite))
    for key, obj in (observed or {}).items():
        req.observed.resources[key].resource.CopyFrom(dict_to_struct(obj))
    for name, objs in required.items():
        items = req.required_resources[name].items
        for obj in objs:
            items.add().resource.CopyFrom(dict_to_struct(obj))
    return req


def fatal(req: fnv1.RunFunctionRequest) -> list[str]:
    rsp = runner().run(req)
    return [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]


def answered(clusters: list[Obj] | None = None, replicas: list[Obj] | None = None) -> Any:
    """A ModelDeployment's requirements answered: one H100 cluster and another deployment's
    replica, unless given."""
    return deployment_required(
        clusters or fleet("c1", nodes=8), replicas=replicas or [other_replica()]
    )


def other_replica() -> Obj:
    return placed_replica("other", "ml", "c1", 0, [engine("main", placed_member("h100", 2))])


# --- the composite ----------------------------------------------------------------------------


def test_a_composite_the_api_server_would_refuse_is_fatal_in_its_words():
    replica = seed("replica")
    replica["spec"]["engines"][0]["members"][0]["deviceRequests"] = 5
    [message] = fatal(request(replica, cluster=[seed("cluster")]))
    assert message.startswith(
        'ModelReplica.modelplane.ai "qwen3-8b-eks-l4-0" is invalid: '
        '[spec.engines[0].members[0].deviceRequests: Invalid value: "integer": '
        'spec.engines[0].members[0].deviceRequests in body must be of type array: "integer"'
    )


def test_a_composite_with_null_metadata_is_refused_for_its_missing_name():
    replica = seed("replica")
    replica["metadata"] = None
    [message] = fatal(request(replica))
    assert message.startswith(
        'ModelReplica.modelplane.ai "" is invalid: '
        "[metadata.name: Required value: name or generateName is required"
    )


@pytest.mark.parametrize(
    ("value", "json_type"), [(5, "integer"), (True, "boolean"), (["a"], "array"), ({}, "object")]
)
@pytest.mark.parametrize("field", ["name", "namespace"])
def test_a_composite_whose_name_is_not_a_string_is_refused_naming_the_field(
    field: str, value: Any, json_type: str
):
    # Admitted, it was composed: objects named after str(5), and the message quoted it.
    replica = seed("replica")
    replica["metadata"][field] = value
    shown = "" if field == "name" else "qwen3-8b-eks-l4-0"
    [message] = fatal(request(replica, cluster=[seed("cluster")]))
    assert message.startswith(
        f'ModelReplica.modelplane.ai "{shown}" is invalid: [metadata.{field}: Invalid value: '
        f'"{json_type}": metadata.{field} in body must be of type string: "{json_type}"'
    )


def test_validate_refuses_a_name_that_is_not_a_string(tmp_path: Path):
    replica = seed("replica")
    replica["metadata"]["name"] = 5
    path = tmp_path / "replica.yaml"
    path.write_text(yaml.safe_dump(replica))
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 1
    assert 'metadata.name: Invalid value: "integer"' in result.output


def test_a_composite_whose_status_is_a_string_is_refused_naming_status():
    replica = seed("replica")
    replica["status"] = "ready"
    assert fatal(request(replica, cluster=[seed("cluster")])) == [
        'ModelReplica.modelplane.ai "qwen3-8b-eks-l4-0" is invalid: status: Invalid value: '
        '"string": status in body must be of type object: "string"'
    ]


def test_a_composite_only_the_composer_can_refuse_is_refused_before_composing():
    replica = seed("replica")
    replica["spec"]["engines"][0]["members"][0]["template"] = {}
    assert fatal(request(replica, cluster=[seed("cluster")])) == [
        'ModelReplica.modelplane.ai "qwen3-8b-eks-l4-0" is invalid: '
        "spec.engines[0].members[0].template.spec: Required value: the member's containers"
    ]


def test_a_version_the_definitions_do_not_serve_is_refused():
    replica = seed("replica")
    replica["apiVersion"] = "modelplane.ai/v9"
    assert fatal(request(replica)) == [
        'no matches for kind "ModelReplica" in version "modelplane.ai/v9"'
    ]


def test_a_valid_composite_composes_as_without_admission():
    req = request(seed("replica"), cluster=[seed("cluster")])
    admitted = runner().run(req)
    plain = FunctionRunner(default_registry()).run(req)
    assert not fatal(req)
    assert admitted == plain


def test_a_status_update_admits_the_composite_from_memory():
    # What admission reads excludes status and server-owned metadata, so a reconcile after a
    # status write finds the spec admitted already.
    from modelplane.function import admitted_parts

    replica = seed("replica")
    later = copy.deepcopy(replica)
    later["metadata"]["resourceVersion"] = "42"
    later["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
    parts = [admitted_parts(request(r).observed.composite.resource) for r in (replica, later)]
    assert parts[0] == parts[1]


# --- required and observed resources ----------------------------------------------------------


def test_a_required_resource_of_the_wrong_shape_is_fatal_naming_it_and_the_field():
    cluster = seed("cluster")
    cluster["status"] = "ready"
    assert fatal(request(seed("replica"), cluster=[cluster])) == [
        'required resource cluster[0] InferenceCluster.modelplane.ai "eks-l4" is invalid: '
        'status: Invalid value: "string": status in body must be of type object: "string"'
    ]


def test_a_fleet_cluster_whose_pools_are_a_number_is_fatal_naming_the_field():
    [cluster] = fleet("c1", nodes=8)
    cluster["spec"]["nodePools"] = 5
    assert fatal(request(deployment(), **answered(clusters=[cluster]))) == [
        'required resource inference-clusters[0] InferenceCluster.modelplane.ai "c1" is '
        'invalid: spec.nodePools: Invalid value: "integer": spec.nodePools in body must be of '
        'type array: "integer"'
    ]


def test_a_fleet_cluster_without_a_name_is_fatal_naming_metadata_name():
    [cluster] = fleet("c1", nodes=8)
    del cluster["metadata"]["name"]
    assert fatal(request(deployment(), **answered(clusters=[cluster]))) == [
        'required resource inference-clusters[0] InferenceCluster.modelplane.ai "" is '
        "invalid: metadata.name: Required value"
    ]


def test_a_fleet_replica_whose_device_requests_are_a_number_is_fatal_naming_the_field():
    replica = other_replica()
    replica["spec"]["engines"][0]["members"][0]["deviceRequests"] = 3
    assert fatal(request(deployment(), **answered(replicas=[replica]))) == [
        'required resource model-replicas[0] ModelReplica.modelplane.ai "other-c1-0" is '
        'invalid: spec.engines[0].members[0].deviceRequests: Invalid value: "integer": '
        'spec.engines[0].members[0].deviceRequests in body must be of type array: "integer"'
    ]


def test_a_required_resource_converted_whole_is_checked_whole():
    # A cluster composition reads its InferenceClasses as plain data: checked before reading.
    cls = copy.deepcopy(H100)
    cls["spec"]["devices"][0]["count"] = "eight"
    cluster = inference_cluster("c1", {"h100": ("h100", 8)}, classes=[H100])
    del cluster["status"]
    [message] = fatal(request(cluster, **{"inference-classes": [cls]}))
    assert message == (
        'required resource inference-classes[0] InferenceClass.modelplane.ai "h100" is '
        'invalid: spec.devices[0].count: Invalid value: "string": spec.devices[0].count in '
        'body must be of type integer: "string"'
    )


@pytest.mark.parametrize(
    ("observed", "error"),
    [
        pytest.param(
            {"status": "bad"},
            'status: Invalid value: "string": status in body must be of type object: "string"',
            id="status a string",
        ),
        pytest.param(
            {"metadata": None},
            'metadata: Invalid value: "null": metadata in body must be of type object: "null"',
            id="metadata null",
        ),
        pytest.param(
            {"status": {"conditions": [{"type": "ModelServing", "status": 1}]}},
            'status.conditions[0].status: Invalid value: "integer": '
            'status.conditions[0].status in body must be of type string: "integer"',
            id="condition status a number",
        ),
    ],
)
def test_an_observed_resource_of_the_wrong_shape_is_fatal_naming_it_and_the_field(observed, error):
    replica = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": "qwen-c1-0"},
        "spec": {"clusterName": "c1"},
        **observed,
    }
    name = (replica.get("metadata") or {}).get("name", "")
    assert fatal(request(deployment(), {"replica-0-c1": replica}, **answered())) == [
        f"observed resource 'replica-0-c1' ModelReplica.modelplane.ai \"{name}\" is invalid: "
        + error
    ]


def test_an_observed_object_whose_remote_status_is_mistyped_is_fatal():
    replica, cluster = seed("replica"), seed("cluster")
    workload = {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {"name": "w"},
        "status": {"atProvider": {"manifest": {"kind": "Deployment", "status": "up"}}},
    }
    [message] = fatal(request(replica, {"workload-qwen3-8b": workload}, cluster=[cluster]))
    assert message == (
        "observed resource 'workload-qwen3-8b' Object.kubernetes.m.crossplane.io \"w\" is "
        'invalid: status.atProvider.manifest.status: Invalid value: "string": '
        'status.atProvider.manifest.status in body must be of type object: "string"'
    )


def test_without_admission_the_runner_reads_inputs_unchecked():
    # render runs the function after admitting its inputs itself, and tests drive composers
    # with hand-made inputs: neither asks the runner to admit.
    cluster = seed("cluster")
    cluster["status"]["gateway"] = {"address": 7}
    rsp = FunctionRunner(default_registry()).run(request(seed("replica"), cluster=[cluster]))
    assert not [r for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]


# --- one admission for every command -----------------------------------------------------------


@pytest.fixture
def empty_template(tmp_path: Path) -> Path:
    """The seed example whose Standalone member has ``template: {}``: valid to the XRD, but
    nothing to run."""
    replica = seed("replica")
    replica["spec"]["engines"][0]["members"][0]["template"] = {}
    path = tmp_path / "replica.yaml"
    path.write_text(yaml.safe_dump_all([replica, seed("cluster")]))
    return path


EMPTY_TEMPLATE = "spec.engines[0].members[0].template.spec: Required value: the member's containers"


def test_validate_reports_what_the_composer_refuses(empty_template):
    result = CliRunner().invoke(main, ["validate", str(empty_template)])
    assert result.exit_code == 1
    # The line is where the member's template stands (the field at fault is missing).
    [line] = result.stdout.splitlines()
    where, _, rest = line.partition(": ")
    assert where.rsplit(":", 1)[0] == str(empty_template)
    assert rest == f"ModelReplica/ml-team/qwen3-8b-eks-l4-0: {EMPTY_TEMPLATE}"


def test_render_refuses_it_with_the_same_error(empty_template):
    result = CliRunner().invoke(main, ["render", str(empty_template)])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"modelplane render: {empty_template}:")
    assert f"ModelReplica/ml-team/qwen3-8b-eks-l4-0: {EMPTY_TEMPLATE}" in result.stderr


def test_explain_refuses_it_with_the_same_error(empty_template):
    result = CliRunner().invoke(main, ["explain", str(empty_template)])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"modelplane explain: {empty_template}:")
    assert f"ModelReplica/ml-team/qwen3-8b-eks-l4-0: {EMPTY_TEMPLATE}" in result.stderr


def test_a_deployment_is_refused_when_the_replicas_it_stamps_would_be():
    md = deployment()
    md["spec"]["template"]["spec"]["engines"][0]["members"][0]["template"] = {}
    errors = [str(e) for e in Admission.default().admit(md).errors]
    assert errors == [
        "spec.template.spec.engines[0].members[0].template.spec: Required value: "
        "the member's containers"
    ]


@pytest.mark.parametrize("kind", ["ModelDeployment", "InferenceCluster"])
def test_a_name_longer_than_a_label_value_is_refused_as_crossplanes_crd_refuses_it(kind):
    # Crossplane caps every composite's name at 63 characters in the CRD it generates.
    obj = (
        deployment()
        if kind == "ModelDeployment"
        else inference_cluster("c1", {"h100": ("h100", 8)}, classes=[H100])
    )
    obj.pop("status", None)
    obj["metadata"]["name"] = "n" * 64
    errors = [str(e) for e in Admission.default().admit(obj).errors]
    assert errors[0] == "metadata.name: Too long: may not be more than 63 bytes"


def test_every_shipped_example_is_admitted():
    examples = Path(__file__).resolve().parents[1] / "examples"
    docs = [d for p in sorted(examples.rglob("*.yaml")) for d in yaml.safe_load_all(p.read_text())]
    admission = Admission.default()
    refused = {}
    for doc in filter(None, docs):
        errors = [str(e) for e in admission.admit_input(doc).errors]
        if errors:
            refused[identity(doc)] = errors
    assert refused == {}
