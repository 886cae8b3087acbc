"""Every composed routing object is one the API server would admit.

InferencePool and HTTPRoute are checked against the upstream CRDs in tests/upstream/crds/
with the project's offline admission; the picker's built-in kinds against the Kubernetes
schemas (kubernetes-validate, strict: unknown fields are errors); every wrapper against the
provider-kubernetes Object CRD.
"""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from modelplane.compose.modelreplica import picker, routing
from tests.upstream_crds import upstream

from .support import cluster, engine, leader, replica, run, worker

Obj = dict[str, Any]
KUBERNETES = "1.34"  # the oldest Kubernetes with resource.k8s.io/v1 DRA, which clusters need

PICKER = {
    "router": "EndpointPicker",
    "endpointPicker": {
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "epp",
                        "image": "registry.example.com/epp:v1",
                        "command": ["/epp"],
                        "args": ["--v=4", "--pool-name", "custom"],
                        "env": [
                            {
                                "name": "HF_TOKEN",
                                "valueFrom": {"secretKeyRef": {"name": "hf", "key": "t"}},
                            }
                        ],
                        "resources": {
                            "requests": {"cpu": "500m", "memory": "1Gi"},
                            "limits": {"memory": 2147483648},
                        },
                    }
                ],
                "imagePullSecrets": [{"name": "regcred"}],
            }
        },
        "config": {
            "apiVersion": "llm-d.ai/v1alpha1",
            "kind": "EndpointPickerConfig",
            "plugins": [{"type": "queue-scorer"}],
        },
    },
}


def gang(name: str, phase: str | None = None) -> Obj:
    return engine(name, leader(), worker(nodes=2), copies=2, phase=phase)


CASES = {
    "unified-default-picker": (replica(engine("main", copies=2)), "Standard"),
    "unified-user-picker": (replica(engine("main"), serving={**PICKER, "port": 9100}), "Standard"),
    "pd-deployments": (
        replica(
            engine("p", phase="Prefill"),
            engine("d", phase="Decode"),
            serving={"mode": "PrefillDecode", **PICKER},
        ),
        "Standard",
    ),
    "pd-gangs-standard": (
        replica(
            gang("p", "Prefill"), gang("d", "Decode"), serving={"mode": "PrefillDecode", **PICKER}
        ),
        "Standard",
    ),
    "pd-gangs-dynamo": (
        replica(
            gang("p", "Prefill"), gang("d", "Decode"), serving={"mode": "PrefillDecode", **PICKER}
        ),
        "Dynamo",
    ),
    "long-name": (replica(engine("main"), name="x" * 50 + "-0123456789ab"), "Standard"),
}


def routing_objects(case: str) -> dict[str, Obj]:
    composite, stack = CASES[case]
    result = run(composite, on=cluster(stack=stack, provider="pc-c1"))
    assert result.fatal is None, result.fatal
    return {k: d.resource for k, d in result.resources.items() if k in routing.KEYS}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("key", [routing.POOL_KEY, routing.ROUTE_KEY])
def test_pool_and_route_pass_the_upstream_crds(case: str, key: str) -> None:
    manifest = routing_objects(case)[key]["spec"]["forProvider"]["manifest"]
    assert [str(e) for e in upstream().admit(manifest).errors] == []


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("key", picker.KEYS)
def test_picker_objects_pass_the_kubernetes_schemas(case: str, key: str) -> None:
    manifest = routing_objects(case)[key]["spec"]["forProvider"]["manifest"]
    kubernetes_validate.validate(manifest, KUBERNETES, strict=True)


@pytest.mark.parametrize("case", CASES)
def test_every_routing_wrapper_passes_the_provider_kubernetes_object_crd(case: str) -> None:
    for key, obj in routing_objects(case).items():
        assert [str(e) for e in upstream().admit(obj).errors] == [], key
