"""Every example composes to its golden output, and every composed manifest is valid Kubernetes.

Regenerate the golden files after an intended change with
``MODELPLANE_UPDATE_GOLDEN=1 uv run pytest tests/compose/modelreplica/test_examples.py``
and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from modelplane.compose.modelreplica.composer import compose_replica
from modelplane.compose.modelreplica.names import NAMESPACE_KEY
from modelplane.kube.admission import Admission
from modelplane.structs import plain
from tests.upstream_crds import UPSTREAM_CRDS

from .support import REPLICA_XRD, example_inputs, example_names

GOLDEN = Path(__file__).parent / "golden"
BUILT_IN = {
    "v1",
    "apps/v1",
    "resource.k8s.io/v1",
    "rbac.authorization.k8s.io/v1",
    "networking.k8s.io/v1",
}
KUBERNETES_VERSION = "1.34"


class _NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data: object) -> bool:
        return True


@pytest.fixture(scope="module")
def admission() -> Admission:
    return Admission.from_paths([UPSTREAM_CRDS, REPLICA_XRD])


def composed(name: str) -> dict:
    result = compose_replica(example_inputs(name))
    assert result.fatal is None, result.fatal
    return {
        key: {"ready": desired.ready, "resource": desired.resource}
        for key, desired in result.resources.items()
    }


WORKLOAD_EXAMPLES = [
    "replica-seed",
    "replica-gang-standard",
    "replica-gang-dynamo",
    "replica-sidecar",
    "replica-cache",
]


def test_there_is_an_example_of_each_shape():
    assert set(WORKLOAD_EXAMPLES) <= set(example_names())


def is_workload_key(key: str) -> bool:
    """Whether a composition resource key is one of the workload half's (not routing's)."""
    return key == NAMESPACE_KEY or key.startswith(("workload-", "gang-", "claims-"))


@pytest.mark.parametrize("name", WORKLOAD_EXAMPLES)
def test_example_composes_its_workloads_to_the_golden_output(name):
    path = GOLDEN / f"{name}.yaml"
    got = composed(name)
    if os.environ.get("MODELPLANE_UPDATE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(yaml.dump(plain(got), Dumper=_NoAliases, sort_keys=False, width=100))
    # The workload half only: routing's objects, if the file holds them, have their own tests.
    want = {k: v for k, v in yaml.safe_load(path.read_text()).items() if is_workload_key(k)}
    assert {k: v for k, v in got.items() if is_workload_key(k)} == want


@pytest.mark.parametrize("name", example_names())
def test_built_in_manifests_validate_against_the_kubernetes_schemas(name):
    checked = 0
    for entry in composed(name).values():
        manifest = entry["resource"]["spec"]["forProvider"]["manifest"]
        if manifest["apiVersion"] in BUILT_IN:
            kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)
            checked += 1
    assert checked >= 2, "every example composes at least a Namespace and a claim template"


@pytest.mark.parametrize("name", example_names())
def test_example_replica_is_admitted_by_its_xrd(name, admission):
    assert [str(e) for e in admission.admit(example_inputs(name).composite).errors] == []


@pytest.mark.parametrize("name", example_names())
def test_composed_objects_and_custom_manifests_validate_against_upstream_crds(name, admission):
    for key, entry in composed(name).items():
        obj = entry["resource"]
        assert [str(e) for e in admission.admit(obj).errors] == [], key
        manifest = obj["spec"]["forProvider"]["manifest"]
        if manifest["kind"] in ("LeaderWorkerSet", "PodCliqueSet", "InferencePool", "HTTPRoute"):
            assert [str(e) for e in admission.admit(manifest).errors] == [], key


def test_the_examples_cover_each_upstream_workload_kind():
    kinds = {
        entry["resource"]["spec"]["forProvider"]["manifest"]["kind"]
        for name in example_names()
        for entry in composed(name).values()
    }
    assert {"Deployment", "LeaderWorkerSet", "PodCliqueSet", "ResourceClaimTemplate"} <= kinds
