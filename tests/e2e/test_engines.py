"""What engines and pickers get from Modelplane, on a real control plane (#37 items 2, 4, 5):

- an SGLang engine runs with ``--enable-metrics`` (SGLang serves /metrics only then, and the
  picker scores on it), and still serves;
- a gang whose engine never references the leader address and rank Modelplane provides is
  composed with a Warning event ``GangNotWired`` that Crossplane records on the ModelReplica;
- an llm-d picker image older than the config Modelplane writes is refused: the ModelReplica
  says so, naming the field, and nothing of it reaches the workload cluster.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from e2e.environment import Environment
from tests.e2e.conftest import (
    ROOT,
    add_fleet,
    conditions,
    documents,
    eventually,
    guide_cluster,
    namespace,
    retire,
)

pytestmark = pytest.mark.e2e

CLUSTER = "engines"
NAMESPACE = "engines"
OLD_PICKER = "ghcr.io/llm-d/llm-d-inference-scheduler:v0.4.0"


def member(role: str, container: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "role": role,
        "nodePoolName": "l4",
        "deviceRequests": [{"name": "gpu", "count": 1, "deviceClassName": "gpu.nvidia.com"}],
        "template": {"spec": {"containers": [container]}},
        **extra,
    }


def replica(name: str, members: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "clusterName": CLUSTER,
            "engines": [{"name": "main", "members": members}],
            **spec,
        },
    }


def sglang(*args: str) -> dict[str, Any]:
    return {
        "name": "engine",
        "image": "lmsysorg/sglang:v0.5.5",
        "command": ["python3", "-m", "sglang.launch_server"],
        "args": ["--model-path=Qwen/Qwen3-8B", "--port=8000", *args],
        "ports": [{"name": "http", "containerPort": 8000}],
    }


def unwired_gang() -> dict[str, Any]:
    # Two nodes, each told --nnodes but never the leader's address or its rank.
    engine = sglang("--tp=2", "--nnodes=2")
    return replica(
        "unwired",
        [member("Leader", engine), member("Worker", copy.deepcopy(engine), worker={"nodes": 1})],
    )


def old_picker() -> dict[str, Any]:
    (model,) = documents(ROOT / "docs/getting-started/model.yaml")
    vllm = model["spec"]["template"]["spec"]["engines"][0]["members"][0]["template"]["spec"]
    picker = {"template": {"spec": {"containers": [{"name": "epp", "image": OLD_PICKER}]}}}
    return replica(
        "old-picker",
        [member("Standalone", copy.deepcopy(vllm["containers"][0]))],
        serving={"router": "EndpointPicker", "endpointPicker": picker},
    )


@pytest.fixture(scope="module")
def fleet(e2e: Environment) -> Iterator[Environment]:
    try:
        docs = documents(ROOT / "docs/getting-started/classes.yaml")
        add_fleet(e2e, [*docs, guide_cluster(CLUSTER, nodes=4)])
        e2e.control.kubectl(
            "wait", f"inferencecluster/{CLUSTER}", "--for=condition=Ready", "--timeout=300s"
        )
        namespace(e2e, NAMESPACE)
        e2e.control.apply(
            [replica("sglang", [member("Standalone", sglang())]), unwired_gang(), old_picker()]
        )
        yield e2e
    finally:
        # Also when the setup failed: what it added must not stay in later modules' fleet.
        retire(e2e, {NAMESPACE}, {CLUSTER})


def pods(env: Environment, name: str) -> list[dict[str, Any]]:
    found = env.workloads[CLUSTER].get("pods", "-n", NAMESPACE)["items"]
    return [p for p in found if p["metadata"]["name"].startswith(f"{name}-main")]


def test_an_sglang_engine_serves_with_metrics_enabled(fleet: Environment) -> None:
    fleet.control.kubectl(
        "-n",
        NAMESPACE,
        "wait",
        "modelreplica/sglang",
        "--for=condition=ModelServing",
        "--timeout=300s",
    )
    (pod,) = pods(fleet, "sglang")
    engine = next(c for c in pod["spec"]["containers"] if c["name"] == "engine")
    assert "--enable-metrics" in engine["command"] + engine.get("args", [])


def test_an_unwired_gang_is_composed_with_a_gang_not_wired_warning(fleet: Environment) -> None:
    def warned() -> None:
        events = fleet.control.get(
            "events", "-n", NAMESPACE, "--field-selector", "involvedObject.name=unwired"
        )["items"]
        said = [e for e in events if e["type"] == "Warning" and "GangNotWired" in str(e)]
        assert said, [(e["reason"], e["message"]) for e in events]
        assert "leader" in said[0]["message"].lower()

    eventually(warned, timeout=180, interval=3)
    objects = fleet.control.get(
        "objects.kubernetes.m.crossplane.io",
        "-n",
        NAMESPACE,
        "-l",
        "crossplane.io/composite=unwired",
    )["items"]
    assert objects  # warned, not refused


def test_a_picker_too_old_for_its_config_is_refused_naming_the_field(fleet: Environment) -> None:
    def refused() -> None:
        synced = conditions(fleet.control, "modelreplica", "old-picker", "-n", NAMESPACE)
        status, _reason, message = synced["Synced"]
        assert status == "False", synced
        assert "endpointPicker.template.spec.containers[0].image" in message, message
        assert OLD_PICKER in message, message

    eventually(refused, timeout=180, interval=3)
    assert pods(fleet, "old-picker") == []
