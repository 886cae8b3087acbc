"""Day two on real timing: Crossplane's own requeues and provider-kubernetes' poll, sampled every
second on both API servers.

- An image change rolls out with the number of Ready engine pods never below what
  ``spec.rollout`` allows (``replicas - maxUnavailable``).
- A scale-in withdraws the leaving replica's ModelEndpoint before its pods go.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from e2e.environment import Environment
from tests.e2e.conftest import (
    ROOT,
    add_fleet,
    deployment_ready,
    documents,
    eventually,
    guide_cluster,
    guide_model,
    namespace,
    retire,
    sampled,
)

pytestmark = pytest.mark.e2e

CLUSTER = "day-two"
NAMESPACE = "day-two"
REPLICAS = 3
MAX_UNAVAILABLE = 1


def deployment(image: str, replicas: int = REPLICAS) -> dict[str, Any]:
    model = guide_model(NAMESPACE, CLUSTER, "rolling", replicas)
    model["spec"]["rollout"] = {"maxUnavailable": MAX_UNAVAILABLE}
    engine = model["spec"]["template"]["spec"]["engines"][0]
    engine["members"][0]["template"]["spec"]["containers"][0]["image"] = image
    return model


@pytest.fixture(scope="module")
def fleet(e2e: Environment) -> Iterator[Environment]:
    docs = documents(ROOT / "docs/getting-started/classes.yaml")
    # One spare GPU: a replica's new pod can start beside its old one.
    cluster = guide_cluster(CLUSTER, nodes=REPLICAS + 1)
    try:
        add_fleet(e2e, [*docs, cluster])
        e2e.control.kubectl(
            "wait", f"inferencecluster/{CLUSTER}", "--for=condition=Ready", "--timeout=300s"
        )
        namespace(e2e, NAMESPACE)
        e2e.control.apply([deployment("vllm/vllm-openai:v0.11.0")])
        deployment_ready(e2e, NAMESPACE, "rolling")
        yield e2e
    finally:
        # Also when the setup failed: what it added must not stay in later modules' fleet.
        retire(e2e, {NAMESPACE}, {CLUSTER})


def engine_pods(env: Environment) -> list[dict[str, Any]]:
    pods = env.workloads[CLUSTER].get("pods", "-n", NAMESPACE)["items"]
    return [p for p in pods if p["spec"].get("resourceClaims")]


def serving_pods(env: Environment) -> int:
    """Engine pods Ready and not terminating: what serves."""
    count = 0
    for pod in engine_pods(env):
        conditions = {c["type"]: c["status"] for c in pod["status"].get("conditions") or []}
        if conditions.get("Ready") == "True" and not pod["metadata"].get("deletionTimestamp"):
            count += 1
    return count


def rolled_out(env: Environment, image: str) -> None:
    pods = engine_pods(env)
    images = {p["spec"]["containers"][0]["image"] for p in pods}
    assert images == {image}, images
    assert serving_pods(env) == REPLICAS
    status = env.control.get("modeldeployment", "rolling", "-n", NAMESPACE)["status"]
    rolled = {c["type"]: c for c in status["conditions"]}["RolledOut"]
    assert (rolled["status"], rolled["reason"]) == ("True", "Complete"), rolled


def test_an_image_change_rolls_out_within_max_unavailable(fleet: Environment) -> None:
    new = "vllm/vllm-openai:v0.11.1"
    with sampled(lambda: serving_pods(fleet)) as samples:
        time.sleep(2)
        fleet.control.apply([deployment(new)])
        eventually(lambda: rolled_out(fleet, new), timeout=600, interval=2)
    counts = [s for s in samples if isinstance(s, int)]
    assert len(counts) >= 10
    assert min(counts) >= REPLICAS - MAX_UNAVAILABLE, counts


def test_a_scale_in_withdraws_the_endpoint_before_the_pods_go(fleet: Environment) -> None:
    def snapshot() -> tuple[float, set[str], set[str]]:
        endpoints = fleet.control.get("modelendpoints", "-n", NAMESPACE)["items"]
        with_endpoint = {e["spec"].get("replicaName") or e["metadata"]["name"] for e in endpoints}
        going = {
            p["metadata"]["labels"].get("modelplane.ai/replica", "")
            for p in engine_pods(fleet)
            if p["metadata"].get("deletionTimestamp")
        }
        return time.monotonic(), with_endpoint, going

    replicas = {
        r["metadata"]["name"] for r in fleet.control.get("modelreplicas", "-n", NAMESPACE)["items"]
    }
    with sampled(snapshot) as samples:
        fleet.control.apply([deployment("vllm/vllm-openai:v0.11.1", replicas=REPLICAS - 1)])
        eventually(lambda: _scaled_in(fleet), timeout=600, interval=2)
    left = replicas - {
        r["metadata"]["name"] for r in fleet.control.get("modelreplicas", "-n", NAMESPACE)["items"]
    }
    assert len(left) == 1
    for when, endpoints, going in (s for s in samples if isinstance(s, tuple)):
        assert not (going & endpoints & left), (when, going, endpoints)


def _scaled_in(env: Environment) -> None:
    assert len(engine_pods(env)) == REPLICAS - 1
    assert len(env.control.get("modelreplicas", "-n", NAMESPACE)["items"]) == REPLICAS - 1
