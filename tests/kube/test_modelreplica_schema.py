"""Schema-level admission of ModelReplicas: pruning, defaults, types and list shapes."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from modelplane.kube.admission import Admission
from tests.kube.modelreplicas import container, engine, errors_of, member, replica

# The API reference's example, verbatim.
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "replica-seed" / "replica.yaml"
C0 = "spec.engines[0].members[0].template.spec.containers[0]"
BLOCKED = (
    '<nil>: Invalid value: "null": some validation rules were not checked because the object '
    "was invalid; correct the existing errors to complete validation"
)


def test_the_spec_example_validates() -> None:
    example = yaml.safe_load(EXAMPLE.read_text())
    assert errors_of(example) == []


def test_defaults_fill_absent_fields_only() -> None:
    obj = replica(
        [
            engine("a", members=[member(None)]),
            engine(
                "b", members=[member("Leader"), member("Worker", worker={"nodes": 1})], copies=3
            ),
        ],
        {
            "router": "EndpointPicker",
            "endpointPicker": {
                "template": {"spec": {"containers": [{"name": "epp", "image": "x"}]}}
            },
        },
    )
    admitted = Admission.default().admit(obj)
    assert admitted.errors == []
    spec = admitted.object["spec"]
    assert spec["serving"]["mode"] == "Unified"
    assert spec["engines"][0]["copies"] == 1
    assert spec["engines"][1]["copies"] == 3
    assert spec["engines"][0]["members"][0]["role"] == "Standalone"
    assert spec["engines"][1]["members"][0]["role"] == "Leader"
    assert [r["count"] for r in spec["engines"][0]["members"][0]["deviceRequests"]] == [1]


def test_defaults_do_not_create_absent_parents() -> None:
    admitted = Admission.default().admit(replica())
    assert "serving" not in admitted.object["spec"]


def test_admission_does_not_modify_its_input() -> None:
    obj = replica()
    before = copy.deepcopy(obj)
    Admission.default().admit(obj)
    assert obj == before


def test_a_null_takes_the_default() -> None:
    obj = replica([engine(copies=None)])
    admitted = Admission.default().admit(obj)
    assert admitted.errors == []
    assert admitted.object["spec"]["engines"][0]["copies"] == 1


def test_struct_floats_become_integers() -> None:
    obj = replica([engine(copies=2.0)], {"port": 8000.0})
    admitted = Admission.default().admit(obj)
    assert admitted.errors == []
    assert type(admitted.object["spec"]["engines"][0]["copies"]) is int
    assert type(admitted.object["spec"]["serving"]["port"]) is int


def _with(path: list[Any], value: Any, obj: dict[str, Any] | None = None) -> dict[str, Any]:
    obj = obj or replica()
    node: Any = obj
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return obj


CONTAINER = ["spec", "engines", 0, "members", 0, "template", "spec", "containers", 0]

SCHEMA_REJECTIONS: dict[str, tuple[dict[str, Any], list[str]]] = {
    "a duplicate engine name": (
        replica([engine("a"), engine("a")]),
        ['spec.engines[1]: Duplicate value: map[string]interface {}{"name":"a"}'],
    ),
    "9 engines": (
        replica([engine(f"e{i}") for i in range(9)]),
        ["spec.engines: Too many: 9: must have at most 8 items", BLOCKED],
    ),
    "a port of 70000": (
        replica(serving={"port": 70000}),
        [
            "spec.serving.port: Invalid value: 70000: spec.serving.port in body should be less "
            "than or equal to 65535"
        ],
    ),
    "a containerPort of 0": (
        _with([*CONTAINER, "ports"], [{"containerPort": 0}]),
        [
            f"{C0}.ports[0].containerPort: Invalid value: 0: {C0}.ports[0].containerPort in body "
            "should be greater than or equal to 1"
        ],
    ),
    "an unknown field": (
        _with(["spec", "replicas"], 3),
        ['unknown field "spec.replicas"'],
    ),
    "an unknown field inside a list item": (
        _with([*CONTAINER, "securityContext"], {}),
        [f'unknown field "{C0}.securityContext"'],
    ),
    "a wrong type": (
        _with(["spec", "engines", 0, "copies"], "two"),
        [
            'spec.engines[0].copies: Invalid value: "string": spec.engines[0].copies in body '
            'must be of type integer: "string"',
            BLOCKED,
        ],
    ),
    "an empty selector object": (
        _with(
            ["spec", "engines", 0, "members", 0, "deviceRequests", 0, "selectors"],
            [{}],
        ),
        [
            "spec.engines[0].members[0].deviceRequests[0].selectors[0]: Invalid value: 0: "
            "spec.engines[0].members[0].deviceRequests[0].selectors[0] in body should have at "
            "least 1 properties"
        ],
    ),
    "an invalid container name": (
        replica([engine(members=[member(containers=[container(), container("Side_Car")])])]),
        [
            "spec.engines[0].members[0].template.spec.containers[1].name: Invalid value: "
            '"Side_Car": spec.engines[0].members[0].template.spec.containers[1].name in body '
            "should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'"
        ],
    ),
    "a missing clusterName": (
        {**replica(), "spec": {"engines": [engine()]}},
        ["spec.clusterName: Required value", BLOCKED],
    ),
    "an unsupported role": (
        replica([engine(members=[member("Boss")])]),
        [
            'spec.engines[0].members[0].role: Unsupported value: "Boss": supported values: '
            '"Standalone", "Leader", "Worker"',
            BLOCKED,
        ],
    ),
    "a label value of 64 characters": (
        _with(
            ["spec", "engines", 0, "members", 0, "template", "metadata"],
            {"labels": {"tier": "v" * 64}},
        ),
        [
            "spec.engines[0].members[0].template.metadata.labels.tier: Too long: may not be more "
            "than 63 bytes",
            BLOCKED,
        ],
    ),
    "an empty clusterName": (
        _with(["spec", "clusterName"], ""),
        [
            'spec.clusterName: Invalid value: "": spec.clusterName in body should be at least 1 '
            "chars long"
        ],
    ),
    "a float in an int-or-string port": (
        _with([*CONTAINER, "readinessProbe"], {"httpGet": {"port": 80.5}}),
        [
            f'{C0}.readinessProbe.httpGet.port: Invalid value: "number": '
            f'{C0}.readinessProbe.httpGet.port in body must be of type integer,string: "number"',
            BLOCKED,
        ],
    ),
    "a path without a leading slash": (
        _with([*CONTAINER, "readinessProbe"], {"httpGet": {"port": 80, "path": "health"}}),
        [
            f'{C0}.readinessProbe.httpGet.path: Invalid value: "health": '
            f"{C0}.readinessProbe.httpGet.path in body should match '^/'"
        ],
    ),
    "a missing metadata.name": (
        {**replica(), "metadata": {"namespace": "ml-team"}},
        ["metadata.name: Required value: name or generateName is required", BLOCKED],
    ),
}


@pytest.mark.parametrize(
    ("obj", "expected"), SCHEMA_REJECTIONS.values(), ids=SCHEMA_REJECTIONS.keys()
)
def test_schema_rejections(obj: dict[str, Any], expected: list[str]) -> None:
    assert errors_of(obj) == expected


def test_unknown_fields_are_pruned_from_the_admitted_object() -> None:
    admitted = Admission.default().admit(_with(["spec", "replicas"], 3))
    assert "replicas" not in admitted.object["spec"]


def test_every_error_is_reported_not_only_the_first() -> None:
    obj = replica([engine("a", members=[member(devices=False)]), engine("b", phase="Prefill")])
    assert len(errors_of(obj)) == 2


def test_crossplane_fields_of_a_real_xr_are_known() -> None:
    obj = replica()
    obj["spec"]["crossplane"] = {
        "compositionRef": {"name": "modelreplicas"},
        "compositionUpdatePolicy": "Manual",
        "resourceRefs": [{"apiVersion": "v1", "kind": "Namespace", "name": "ml-team"}],
    }
    obj["status"] = {
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "Available",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ]
    }
    admitted = Admission.default().admit(obj)
    assert admitted.errors == []
    assert admitted.object["status"]["conditions"][0]["type"] == "Ready"


def test_admitted_objects_never_alias_the_input_or_each_other() -> None:
    obj = replica()
    obj["metadata"]["labels"] = {"team": "ml"}
    first = Admission.default().admit(obj)
    first.object["metadata"]["labels"]["team"] = "changed"
    first.object["spec"]["engines"][0]["copies"] = 9
    assert obj["metadata"]["labels"] == {"team": "ml"}
    again = Admission.default().admit(obj)
    assert again.object["metadata"]["labels"] == {"team": "ml"}
    assert again.object["spec"]["engines"][0]["copies"] == 1
    again.object["spec"]["clusterName"] = "other"
    assert Admission.default().admit(obj).object["spec"]["clusterName"] == "eks-l4"


def test_a_repeated_invalid_object_reports_the_same_errors() -> None:
    obj = replica([engine(phase="Prefill")])
    assert errors_of(obj) == errors_of(obj) != []
