"""Negative controls: the tier fails when what Modelplane composes cannot run. Each runs beside a
twin that differs only in the fault and does serve, so the fault, not the tier, is what fails.

- A device selector no device of the pool satisfies: the real scheduler's DRA plugin finds no
  allocation, the pod stays Pending, the replica does not serve.
- A composed manifest the real API server refuses (an environment variable name with ``=``,
  which even 1.35's relaxed validation forbids): provider-kubernetes reports the Object
  ``Synced=False`` with the API server's message, and the replica does not serve.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from e2e.environment import Environment
from tests.e2e.conftest import ROOT, add_fleet, conditions, documents, eventually, namespace, retire

pytestmark = pytest.mark.e2e

CLUSTER = "controls"
NAMESPACE = "controls"


def replica(name: str, *, memory: str = "20Gi", env: list[dict[str, str]] | None = None) -> Any:
    container: dict[str, Any] = {
        "name": "engine",
        "image": "vllm/vllm-openai:v0.11.0",
        "args": ["--model", "Qwen/Qwen3-8B"],
        "ports": [{"name": "http", "containerPort": 8000}],
    }
    if env:
        container["env"] = env
    selector = f'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("{memory}")) >= 0'
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "clusterName": CLUSTER,
            "engines": [
                {
                    "name": "main",
                    "members": [
                        {
                            "role": "Standalone",
                            "nodePoolName": "l4",
                            "deviceRequests": [
                                {
                                    "name": "gpu",
                                    "count": 1,
                                    "deviceClassName": "gpu.nvidia.com",
                                    "selectors": [{"cel": selector}],
                                }
                            ],
                            "template": {"spec": {"containers": [container]}},
                        }
                    ],
                }
            ],
        },
    }


@pytest.fixture(scope="module")
def fleet(e2e: Environment) -> Iterator[Environment]:
    try:
        docs = documents(ROOT / "docs/getting-started/classes.yaml")
        (cluster,) = documents(ROOT / "docs/getting-started/cluster.yaml")
        cluster["metadata"]["name"] = CLUSTER
        cluster["spec"]["cluster"]["existing"]["secretRef"]["name"] = f"{CLUSTER}-kubeconfig"
        cluster["spec"]["nodePools"] = [{"name": "l4", "className": "nvidia-l4", "nodeCount": 3}]
        add_fleet(e2e, [*docs, cluster])
        e2e.control.kubectl(
            "wait", f"inferencecluster/{CLUSTER}", "--for=condition=Ready", "--timeout=300s"
        )
        namespace(e2e, NAMESPACE)
        e2e.control.apply(
            [
                replica("twin"),
                replica("no-device", memory="80Gi"),
                replica("refused", env=[{"name": "A=B", "value": "x"}]),
            ]
        )
        serving(e2e, "twin")
        yield e2e
    finally:
        # Also when the setup failed: what it added must not stay in later modules' fleet.
        retire(e2e, {NAMESPACE}, {CLUSTER})


def serving(env: Environment, name: str, timeout: str = "300s") -> None:
    env.control.kubectl(
        "-n",
        NAMESPACE,
        "wait",
        f"modelreplica/{name}",
        "--for=condition=ModelServing",
        f"--timeout={timeout}",
    )


def not_serving(env: Environment, name: str) -> tuple[str, str, str]:
    state = conditions(env.control, "modelreplica", name, "-n", NAMESPACE)["ModelServing"]
    assert state[0] != "True", state
    return state


def engine_pods(env: Environment, name: str) -> list[dict[str, Any]]:
    pods = env.workloads[CLUSTER].get("pods", "-n", NAMESPACE)["items"]
    return [p for p in pods if p["metadata"]["name"].startswith(f"{name}-main")]


def test_the_twin_serves_on_a_gpu_its_selector_matches(fleet: Environment) -> None:
    (pod,) = engine_pods(fleet, "twin")
    assert pod["status"]["phase"] == "Running"


def test_a_selector_no_device_matches_leaves_the_pod_pending_and_the_replica_not_serving(
    fleet: Environment,
) -> None:
    def pending() -> None:
        (pod,) = engine_pods(fleet, "no-device")
        assert pod["status"]["phase"] == "Pending"
        conditions = {c["type"]: c for c in pod["status"].get("conditions") or []}
        scheduled = conditions["PodScheduled"]
        assert (scheduled["status"], scheduled["reason"]) == ("False", "Unschedulable")
        assert "cannot allocate all claims" in scheduled["message"]

    eventually(pending)
    not_serving(fleet, "no-device")


def test_a_manifest_the_api_server_refuses_leaves_its_object_unsynced(fleet: Environment) -> None:
    eventually(lambda: refused_object(fleet))
    assert not engine_pods(fleet, "refused")
    not_serving(fleet, "refused")


def refused_object(fleet: Environment) -> None:
    objects = fleet.control.get(
        "objects.kubernetes.m.crossplane.io",
        "-n",
        NAMESPACE,
        "-l",
        "crossplane.io/composite=refused",
    )["items"]
    workloads = [o for o in objects if o["spec"]["forProvider"]["manifest"]["kind"] == "Deployment"]
    engine = next(o for o in workloads if "-main-" in o["metadata"]["name"])
    synced = {c["type"]: c for c in engine["status"]["conditions"]}["Synced"]
    assert synced["status"] == "False"
    assert "A=B" in synced["message"]
