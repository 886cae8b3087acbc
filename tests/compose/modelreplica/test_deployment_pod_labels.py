"""A replica a ModelDeployment stamped labels its serving and picker pods with the deployment's
name and namespace, so that one fleet-wide Prometheus query selects a deployment's series; no
selector changes, and the labels reach running replicas through their deployment's strategy."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from modelplane.compose import pods_revision
from modelplane.compose.modelreplica import pods
from modelplane.labels import DEPLOYMENT, DEPLOYMENT_NAMESPACE

from .support import cluster, engine, leader, manifests, pod_labels, replica, run, worker

Obj = dict[str, Any]
STAMPED = {DEPLOYMENT: "qwen", DEPLOYMENT_NAMESPACE: "ml-team"}
SHAPES = {
    "Deployment": ("Standard", engine("main")),
    "LeaderWorkerSet": ("Standard", engine("main", leader(), worker())),
    "PodCliqueSet": ("Dynamo", engine("main", leader(), worker())),
}


def composed(kind: str, labels: dict[str, str] | None = None) -> dict[str, Obj]:
    """The remote manifests of a replica whose engine runs as ``kind``, labelled ``labels``."""
    stack, shape = SHAPES[kind]
    composite = replica(shape)
    if labels is not None:
        composite["metadata"]["labels"] = {**labels, "team": "search"}
    return manifests(run(composite, on=cluster(stack=stack)))


def serving_pods(found: dict[str, Obj]) -> dict[str, str]:
    labels = pod_labels(found["workload-main"])
    return labels.get("standalone") or labels["leader"]


def picker_pods(found: dict[str, Obj]) -> dict[str, str]:
    return dict(found["epp-deployment"]["spec"]["template"]["metadata"]["labels"])


def deployment_labels(labels: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in labels.items() if k in (DEPLOYMENT, DEPLOYMENT_NAMESPACE)}


@pytest.mark.parametrize("kind", SHAPES)
def test_a_stamped_replicas_serving_pods_carry_its_deployments_labels(kind: str) -> None:
    assert deployment_labels(serving_pods(composed(kind, STAMPED))) == STAMPED


def test_a_stamped_replicas_picker_pods_carry_its_deployments_labels() -> None:
    assert deployment_labels(picker_pods(composed("Deployment", STAMPED))) == STAMPED


@pytest.mark.parametrize("kind", SHAPES)
def test_a_standalone_replicas_pods_carry_no_deployment_label(kind: str) -> None:
    found = composed(kind)
    assert deployment_labels(serving_pods(found)) == {}
    assert deployment_labels(picker_pods(found)) == {}


def test_only_the_deployment_labels_are_copied_from_the_replica() -> None:
    found = composed("Deployment", STAMPED)
    assert "team" not in serving_pods(found)
    assert "team" not in picker_pods(found)


def selectors(node: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every selector in a manifest (workload, Service, budget, pool, affinity), by path."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("selector", "labelSelector", "matchLabels"):
                yield f"{path}/{key}", value
            yield from selectors(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from selectors(value, f"{path}[{i}]")


@pytest.mark.parametrize("kind", SHAPES)
def test_no_selector_changes_when_a_deployment_stamps_the_replica(kind: str) -> None:
    standalone, stamped = composed(kind), composed(kind, STAMPED)
    assert {k: list(selectors(m)) for k, m in stamped.items()} == {
        k: list(selectors(m)) for k, m in standalone.items()
    }


@pytest.mark.parametrize("kind", ["LeaderWorkerSet", "PodCliqueSet"])
def test_a_gangs_workers_serve_nothing_and_carry_no_deployment_label(kind: str) -> None:
    # The engine PodMonitor selects serving pods only: no query reads a worker's series.
    worker_pods = pod_labels(composed(kind, STAMPED)["workload-main"])["worker"]
    assert deployment_labels(worker_pods) == {}


def test_the_pods_revision_moves_with_the_deployment_labels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # So they reach running replicas through their deployment's strategy, never all at once.
    before = pods_revision.reference_pods()
    monkeypatch.setattr(pods, "deployment_of", lambda _replica: (None, None))
    assert pods_revision.reference_pods() != before


def test_the_pods_revision_moves_with_any_label_modelplane_adds_to_pods(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = pods_revision.reference_pods()
    plain = pods.pod_labels
    monkeypatch.setattr(pods, "pod_labels", lambda *a: {**plain(*a), "modelplane.ai/new": "x"})
    assert pods_revision.reference_pods() != before
