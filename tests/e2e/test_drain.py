"""Deleting a cluster that serves, on real timing: the delete is refused (the replica guard) and
recorded on the cluster by Crossplane's Usage webhook; the scheduler reads the record and
re-places the replica on another cluster, the deployment serves again there, the guard lifts,
and Crossplane replays the delete, with nobody deleting twice (docs/operations.md). A NoExecute
taint moves replicas the same way: examples/fleet-drained runs it (test_examples.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from e2e.environment import Environment
from tests.e2e.conftest import (
    ROOT,
    add_fleet,
    deployment_ready,
    documents,
    eventually,
    guarded,
    guide_cluster,
    guide_model,
    namespace,
    retire,
)

pytestmark = pytest.mark.e2e

CLUSTERS = ("drain-a", "drain-b")
NAMESPACE = "drain"
FLEET = "drain"


@pytest.fixture(scope="module")
def fleet(e2e: Environment) -> Iterator[Environment]:
    try:
        docs = documents(ROOT / "docs/getting-started/classes.yaml")
        docs += [guide_cluster(name, fleet=FLEET) for name in CLUSTERS]
        add_fleet(e2e, docs)
        for name in CLUSTERS:
            e2e.control.kubectl(
                "wait", f"inferencecluster/{name}", "--for=condition=Ready", "--timeout=300s"
            )
        namespace(e2e, NAMESPACE)
        e2e.control.apply([guide_model(NAMESPACE, FLEET, replicas=1)])
        deployment_ready(e2e, NAMESPACE, "qwen3-8b")
        yield e2e
    finally:
        # Also when the setup failed: what it added must not stay in later modules' fleet.
        retire(e2e, {NAMESPACE}, set(CLUSTERS) & set(e2e.workloads))


def placed_on(env: Environment) -> set[str]:
    replicas = env.control.get("modelreplicas", "-n", NAMESPACE)["items"]
    return {r["spec"]["clusterName"] for r in replicas}


def test_a_deleted_clusters_replica_moves_and_the_delete_is_replayed(fleet: Environment) -> None:
    (first,) = placed_on(fleet)
    (other,) = set(CLUSTERS) - {first}
    # The guard is composed on the cluster's reconcile after the replica is placed there.
    eventually(lambda: guarded(fleet, first), timeout=180, interval=5)
    refused = fleet.control.kubectl("delete", f"inferencecluster/{first}", check=False)
    assert refused.returncode != 0
    assert f"runs on InferenceCluster {first}" in refused.stderr, refused.stderr

    def moved() -> None:
        assert placed_on(fleet) == {other}
        serving = fleet.control.get("modeldeployment", "qwen3-8b", "-n", NAMESPACE)["status"]
        assert {c["type"]: c["status"] for c in serving["conditions"]}["Ready"] == "True"

    eventually(moved, timeout=600, interval=2)

    def gone() -> None:
        found = fleet.control.kubectl("get", f"inferencecluster/{first}", check=False)
        assert found.returncode != 0 and "NotFound" in found.stderr, found.stdout

    # Nobody deletes it again: the guard's replayDeletion does, once the guard is gone.
    eventually(gone, timeout=600, interval=5)
    engines = [
        p
        for p in fleet.workloads[other].get("pods", "-n", NAMESPACE)["items"]
        if p["spec"].get("resourceClaims")
    ]
    assert len(engines) == 1
    fleet.remove_workload(first)
