"""Taking a cluster out of the fleet on real timing: while replicas run there its deletion is
refused (the replica guard); a NoExecute taint re-places them on another cluster, the deployment
serves again there, and the cluster can then be deleted (docs/operations.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from e2e.environment import Environment
from tests.e2e.conftest import (
    FLEET_LABEL,
    ROOT,
    add_fleet,
    deleted,
    deployment_ready,
    documents,
    eventually,
    guarded,
    guide_cluster,
    namespace,
    retire,
)

pytestmark = pytest.mark.e2e

CLUSTERS = ("drain-a", "drain-b")
NAMESPACE = "drain"
FLEET = "drain"


@pytest.fixture(scope="module")
def fleet(e2e: Environment) -> Iterator[Environment]:
    docs = documents(ROOT / "docs/getting-started/classes.yaml")
    docs += [guide_cluster(name, fleet=FLEET) for name in CLUSTERS]
    add_fleet(e2e, docs)
    for name in CLUSTERS:
        e2e.control.kubectl(
            "wait", f"inferencecluster/{name}", "--for=condition=Ready", "--timeout=300s"
        )
    (model,) = documents(ROOT / "docs/getting-started/model.yaml")
    model["metadata"]["namespace"] = NAMESPACE
    model["spec"]["replicas"] = 1
    model["spec"]["template"]["spec"]["clusterSelector"] = {"matchLabels": {FLEET_LABEL: FLEET}}
    namespace(e2e, NAMESPACE)
    e2e.control.apply([model])
    deployment_ready(e2e, NAMESPACE, "qwen3-8b")
    yield e2e
    retire(e2e, {NAMESPACE}, set(CLUSTERS) & set(e2e.workloads))


def placed_on(env: Environment) -> set[str]:
    replicas = env.control.get("modelreplicas", "-n", NAMESPACE)["items"]
    return {r["spec"]["clusterName"] for r in replicas}


def test_a_drained_clusters_replica_moves_and_the_cluster_can_then_go(fleet: Environment) -> None:
    (first,) = placed_on(fleet)
    (other,) = set(CLUSTERS) - {first}
    # The guard is composed on the cluster's reconcile after the replica is placed there.
    eventually(lambda: guarded(fleet, first), timeout=180, interval=5)
    refused = fleet.control.kubectl("delete", f"inferencecluster/{first}", check=False)
    assert refused.returncode != 0
    assert f"runs on InferenceCluster {first}" in refused.stderr, refused.stderr

    taint = {"spec": {"taints": [{"key": "modelplane.ai/maintenance", "effect": "NoExecute"}]}}
    fleet.control.kubectl(
        "patch", f"inferencecluster/{first}", "--type=merge", "-p", json.dumps(taint)
    )

    def moved() -> None:
        assert placed_on(fleet) == {other}
        serving = fleet.control.get("modeldeployment", "qwen3-8b", "-n", NAMESPACE)["status"]
        assert {c["type"]: c["status"] for c in serving["conditions"]}["Ready"] == "True"

    eventually(moved, timeout=600, interval=2)
    eventually(lambda: deleted(fleet, first), timeout=300, interval=5)
    engines = [
        p
        for p in fleet.workloads[other].get("pods", "-n", NAMESPACE)["items"]
        if p["spec"].get("resourceClaims")
    ]
    assert len(engines) == 1
    fleet.remove_workload(first)
