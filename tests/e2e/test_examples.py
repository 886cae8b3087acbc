"""The shipped examples on a real control plane: each gets a workload cluster per InferenceCluster
(its pools' nodes and devices as its classes declare), is applied as a user would apply the
directory, reconciles until every ModelDeployment is Ready and every ModelReplica serves, and is
then deleted, leaving no ModelReplica behind.

Examples that need what does not run here yet are listed with the reason, not skipped silently:
a gang scheduler (KAI), Grove, a storage provisioner, cert-manager on the control plane, or a
history of earlier reconciles the example writes out by hand.
"""

from __future__ import annotations

from typing import Any

import pytest

from e2e.environment import Environment
from tests.e2e.conftest import ROOT, add_fleet, documents, namespace, retire

pytestmark = pytest.mark.e2e

EXAMPLES = ROOT / "examples"
RUNS = (
    "replica-seed",
    "replica-sidecar",
    "replica-prefill-decode",
    "fleet-two-classes",
    "fleet-prefill-decode",
)
NOT_YET = {
    "replica-gang-standard": "its gang is scheduled by KAI (schedulerName kai-scheduler)",
    "replica-gang-dynamo": "Grove's operator does not run here",
    "fleet-gang": "its gang is scheduled by KAI (schedulerName kai-scheduler)",
    "replica-cache": "its ReadWriteMany claim needs a storage provisioner",
    "fleet-drained": "it writes out a replica an earlier reconcile composed (a history)",
    "service-canary": "the front door's certificates need cert-manager on the control plane",
    "service-overflow": "the front door's certificates need cert-manager on the control plane",
    "service-regional": "the front door's certificates need cert-manager on the control plane",
}


def test_every_example_is_run_or_says_why_not() -> None:
    shipped = {p.name for p in EXAMPLES.iterdir() if p.is_dir()}
    assert shipped == set(RUNS) | set(NOT_YET)


def namespaces(docs: list[dict[str, Any]]) -> set[str]:
    return {d["metadata"]["namespace"] for d in docs if d["metadata"].get("namespace")}


@pytest.mark.parametrize("example", RUNS)
def test_the_example_reconciles_to_ready_and_deletes_clean(e2e: Environment, example: str) -> None:
    docs = documents(EXAMPLES / example)
    clusters = [d["metadata"]["name"] for d in docs if d["kind"] == "InferenceCluster"]
    add_fleet(e2e, docs)
    try:
        for name in clusters:
            e2e.control.kubectl(
                "wait", f"inferencecluster/{name}", "--for=condition=Ready", "--timeout=300s"
            )
        for space in namespaces(docs):
            namespace(e2e, space)
        workloads = [d for d in docs if d["kind"] in ("ModelDeployment", "ModelReplica")]
        e2e.control.apply(workloads)
        for d in workloads:
            condition = "Ready" if d["kind"] == "ModelDeployment" else "ModelServing"
            e2e.control.kubectl(
                "-n",
                d["metadata"]["namespace"],
                "wait",
                f"{d['kind'].lower()}/{d['metadata']['name']}",
                f"--for=condition={condition}",
                "--timeout=600s",
            )
    finally:
        retire(e2e, namespaces(docs), set(clusters))


def test_the_examples_clusters_were_removed(e2e: Environment) -> None:
    left = {
        d["metadata"]["name"]
        for example in RUNS
        for d in documents(EXAMPLES / example)
        if d["kind"] == "InferenceCluster"
    } & {c["metadata"]["name"] for c in e2e.control.get("inferenceclusters")["items"]}
    assert left == set()
