"""Teardown in the order the Usages promise (docs/design/serving-stack.md): a cluster that still
runs replicas refuses its deletion, naming them; once the deployment is gone the cluster goes,
and nothing Modelplane composed is left on either API server, while the External stack it only
observed stays."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from e2e.environment import Environment
from e2e.workload import GATEWAY_NAMESPACE
from tests.e2e.conftest import (
    ROOT,
    add_fleet,
    deleted,
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

CLUSTER = "teardown"
NAMESPACE = "teardown"
WORKLOAD_KINDS = (
    "deployments",
    "pods",
    "resourceclaims",
    "resourceclaimtemplates",
    "services",
    "configmaps",
    "serviceaccounts",
    "roles",
    "rolebindings",
    "poddisruptionbudgets",
    "inferencepools.inference.networking.k8s.io",
    "httproutes.gateway.networking.k8s.io",
)


@pytest.fixture(scope="module")
def fleet(e2e: Environment) -> Iterator[Environment]:
    try:
        docs = documents(ROOT / "docs/getting-started/classes.yaml")
        add_fleet(e2e, [*docs, guide_cluster(CLUSTER)])
        e2e.control.kubectl(
            "wait", f"inferencecluster/{CLUSTER}", "--for=condition=Ready", "--timeout=300s"
        )
        namespace(e2e, NAMESPACE)
        e2e.control.apply([guide_model(NAMESPACE, CLUSTER)])
        deployment_ready(e2e, NAMESPACE, "qwen3-8b")
        yield e2e
    finally:
        # Also when the setup failed: what it added must not stay in later modules' fleet.
        retire(e2e, {NAMESPACE}, {CLUSTER})


def names(env: Environment, cluster: str, kind: str, *args: str) -> list[str]:
    target = env.control if cluster == "control" else env.workloads[cluster]
    return [o["metadata"]["name"] for o in target.get(kind, *args)["items"]]


def test_a_cluster_running_replicas_refuses_deletion_naming_them(fleet: Environment) -> None:
    eventually(lambda: guarded(fleet, CLUSTER), timeout=180, interval=5)
    refused = fleet.control.kubectl(
        "delete", f"inferencecluster/{CLUSTER}", "--wait=false", check=False
    )
    assert refused.returncode != 0
    assert f"ModelReplicas run on InferenceCluster {CLUSTER}" in refused.stderr, refused.stderr
    assert "qwen3-8b-teardown-teardown-0" in refused.stderr
    assert names(fleet, "control", "inferenceclusters").count(CLUSTER) == 1


def test_deleting_the_deployment_removes_its_replicas_and_workloads(fleet: Environment) -> None:
    # The composite goes first; Kubernetes' garbage collector then deletes what it composed
    # (Crossplane deletes composites in the background), and what those composed in turn.
    fleet.control.kubectl("-n", NAMESPACE, "delete", "modeldeployment/qwen3-8b", "--timeout=600s")
    eventually(lambda: workloads_gone(fleet), timeout=600, interval=2)


def workloads_gone(fleet: Environment) -> None:
    assert names(fleet, "control", "modelreplicas", "-n", NAMESPACE) == []
    assert names(fleet, "control", "modelendpoints", "-n", NAMESPACE) == []
    left = {
        kind: [
            n
            for n in names(fleet, CLUSTER, kind, "-n", NAMESPACE)
            if not n.startswith(("default", "kube-root-ca"))
        ]
        for kind in WORKLOAD_KINDS
    }
    assert {k: v for k, v in left.items() if v} == {}


def test_then_the_cluster_goes_and_nothing_composed_is_left(fleet: Environment) -> None:
    # The guard lifts on the cluster's next reconcile after its replicas are gone (it reads
    # them; nothing it composed changed): until then the refusal still names them.
    eventually(lambda: deleted(fleet, CLUSTER), timeout=300, interval=5)
    eventually(lambda: nothing_left(fleet), timeout=600, interval=2)


def nothing_left(fleet: Environment) -> None:
    leftovers: dict[str, Any] = {}
    for kind in (
        "objects.kubernetes.m.crossplane.io",
        "usages.protection.crossplane.io",
        "releases.helm.m.crossplane.io",
    ):
        found = [n for n in names(fleet, "control", kind, "-A") if n.startswith(f"{CLUSTER}-")]
        if found:
            leftovers[kind] = found
    for kind in (
        "clusterusages.protection.crossplane.io",
        "clusterproviderconfigs.kubernetes.m.crossplane.io",
        "clusterproviderconfigs.helm.m.crossplane.io",
    ):
        found = [n for n in names(fleet, "control", kind) if n.startswith(CLUSTER)]
        if found:
            leftovers[kind] = found
    assert leftovers == {}


def test_the_external_stack_it_only_observed_stays(fleet: Environment) -> None:
    cluster = fleet.workloads[CLUSTER]
    assert "inference-gateway" in names(fleet, CLUSTER, "gateways", "-n", GATEWAY_NAMESPACE)
    crds = names(fleet, CLUSTER, "crds")
    assert "inferencepools.inference.networking.k8s.io" in crds
    assert "leaderworkersets.leaderworkerset.x-k8s.io" in crds
    assert cluster.get("deviceclass", "gpu.nvidia.com")["metadata"]["name"] == "gpu.nvidia.com"
