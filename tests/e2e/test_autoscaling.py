"""Autoscaling on the real control plane, up to KEDA (docs/design/autoscaling.md).

The API server admits the ScaledObject Modelplane composes (KEDA v2.20.2's CRD, as vendored in
tests/upstream/crds), and the deployment's scale subresource, the one KEDA's HPA writes, places
and clamps replicas through Crossplane. Here what KEDA's HPA would write is written with
``kubectl scale``, the same subresource call, so each step is judged alone;
test_autoscaling_loop.py runs KEDA itself, with Prometheus and a load simulator.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from e2e.environment import Environment
from tests.e2e.conftest import (
    ROOT,
    add_fleet,
    conditions,
    deployment_ready,
    documents,
    eventually,
    guide_cluster,
    guide_model,
    namespace,
    retire,
)

pytestmark = pytest.mark.e2e

CLUSTER = "autoscaling"
NAMESPACE = "autoscaling"
NAME = "scaled"
MAX = 2
KEDA_CRD = ROOT / "tests/upstream/crds/keda.sh_scaledobjects.yaml"
METRICS_CONFIG = {
    "apiVersion": "apiextensions.crossplane.io/v1beta1",
    "kind": "EnvironmentConfig",
    "metadata": {"name": "modelplane-autoscaling"},
    "data": {"prometheus": {"serverAddress": "http://thanos-query.monitoring:9090"}},
}


def deployment() -> dict[str, Any]:
    model = guide_model(NAMESPACE, CLUSTER, NAME, replicas=1)
    model["spec"]["autoscaling"] = {
        "minReplicas": 1,
        "maxReplicas": MAX,
        "targets": {"waitingRequestsPerReplica": 4},
    }
    return model


@pytest.fixture(scope="module")
def fleet(e2e: Environment) -> Iterator[Environment]:
    try:
        crd = yaml.safe_load(KEDA_CRD.read_text())
        e2e.control.apply_crds([crd])
        e2e.control.apply([METRICS_CONFIG])
        add_fleet(
            e2e,
            [
                *documents(ROOT / "docs/getting-started/classes.yaml"),
                guide_cluster(CLUSTER, nodes=MAX),
            ],
        )
        e2e.control.kubectl(
            "wait", f"inferencecluster/{CLUSTER}", "--for=condition=Ready", "--timeout=300s"
        )
        namespace(e2e, NAMESPACE)
        e2e.control.apply([deployment()])
        deployment_ready(e2e, NAMESPACE, NAME)
        yield e2e
    finally:
        # Also when the setup failed: what it added must not stay in later modules' fleet.
        retire(e2e, {NAMESPACE}, {CLUSTER})


def replicas(env: Environment) -> list[dict[str, Any]]:
    return env.control.get("modelreplicas", "-n", NAMESPACE)["items"]


def scale(env: Environment, count: int) -> None:
    env.control.kubectl("-n", NAMESPACE, "scale", f"modeldeployment/{NAME}", f"--replicas={count}")


def test_the_scaled_object_is_composed_and_admitted(fleet: Environment) -> None:
    def composed() -> dict[str, Any]:
        so = fleet.control.get("scaledobject", NAME, "-n", NAMESPACE)
        assert so["spec"]["scaleTargetRef"]["kind"] == "ModelDeployment"
        return so

    eventually(composed, timeout=120, interval=2)
    so = composed()
    assert so["spec"]["maxReplicaCount"] == MAX
    [trigger] = so["spec"]["triggers"]
    assert trigger["metadata"]["serverAddress"] == "http://thanos-query.monitoring:9090"


def test_the_deployment_serves_while_no_autoscaler_judges_it(fleet: Environment) -> None:
    def waiting() -> None:
        state = conditions(fleet.control, "modeldeployment", NAME, "-n", NAMESPACE)
        assert state["Autoscaling"][:2] == ("Unknown", "WaitingForAutoscaler"), state
        assert state["Ready"][0] == "True", state

    eventually(waiting, timeout=120, interval=2)


def test_the_scale_subresource_gives_the_hpa_a_selector(fleet: Environment) -> None:
    # kube-controller-manager's HPA refuses a target whose scale reports none (InvalidSelector).
    path = f"/apis/modelplane.ai/v1alpha1/namespaces/{NAMESPACE}/modeldeployments/{NAME}/scale"

    def reported() -> None:
        scale = json.loads(fleet.control.kubectl("get", "--raw", path).stdout)
        assert scale["status"]["selector"] == f"modelplane.ai/deployment={NAME}", scale

    eventually(reported, timeout=120, interval=2)


def test_the_scale_subresource_places_a_replica(fleet: Environment) -> None:
    scale(fleet, MAX)
    eventually(lambda: _placed(fleet, MAX), timeout=300, interval=2)
    deployment_ready(fleet, NAMESPACE, NAME)


def test_serving_pods_carry_their_deployments_labels(fleet: Environment) -> None:
    pods = fleet.workloads[CLUSTER].get("pods", "-n", NAMESPACE)["items"]
    engines = [p for p in pods if p["spec"].get("resourceClaims")]
    assert engines
    for pod in engines:
        labels = pod["metadata"]["labels"]
        assert labels.get("modelplane.ai/deployment") == NAME, labels
        assert labels.get("modelplane.ai/deployment-namespace") == NAMESPACE, labels


def test_replicas_past_the_maximum_are_clamped_and_said(fleet: Environment) -> None:
    scale(fleet, MAX + 3)

    def said() -> None:
        state = conditions(fleet.control, "modeldeployment", NAME, "-n", NAMESPACE)
        message = state["Autoscaling"][2]
        assert f"spec.replicas {MAX + 3} is outside [1, {MAX}]: {MAX} placed" in message, state

    eventually(said, timeout=180, interval=2)
    assert len(replicas(fleet)) == MAX


def _placed(env: Environment, count: int) -> None:
    assert len(replicas(env)) == count
