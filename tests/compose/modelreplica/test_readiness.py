"""The workload readiness queries, run as CEL on the remote objects' lifecycle."""

from __future__ import annotations

import pytest

from modelplane.compose.modelreplica.workloads import (
    DEPLOYMENT_READY,
    GANGS_READY,
    LEADERWORKERSET_READY,
    PODCLIQUESET_READY,
)
from modelplane.kube.cel.runtime import DYN, Environment

ENV = Environment({"object": DYN})


def ready(query: dict, obj: dict) -> bool:
    return bool(ENV.compile(query["celQuery"]).evaluate({"object": obj}))


def workload(replicas: int, **status) -> dict:
    return {"metadata": {"generation": 1}, "spec": {"replicas": replicas}, "status": status}


def fresh(replicas: int) -> dict:
    return {"metadata": {"generation": 1}, "spec": {"replicas": replicas}}


@pytest.mark.parametrize("query", [DEPLOYMENT_READY, LEADERWORKERSET_READY, PODCLIQUESET_READY])
def test_a_workload_without_status_is_not_ready(query):
    assert ready(query, fresh(2)) is False


@pytest.mark.parametrize("query", [DEPLOYMENT_READY, LEADERWORKERSET_READY])
def test_a_workload_with_an_empty_status_is_not_ready(query):
    assert ready(query, workload(2, observedGeneration=1)) is False


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ({"observedGeneration": 1, "updatedReplicas": 3, "availableReplicas": 3}, True),
        ({"observedGeneration": 1, "updatedReplicas": 3, "availableReplicas": 2}, False),
        ({"observedGeneration": 1, "updatedReplicas": 2, "availableReplicas": 3}, False),
        ({"observedGeneration": 0, "updatedReplicas": 3, "availableReplicas": 3}, False),
    ],
    ids=["all-copies", "one-copy-short", "rollout-unfinished", "stale-status"],
)
def test_a_deployment_is_ready_when_every_copy_is(status, expected):
    assert ready(DEPLOYMENT_READY, workload(3, **status)) is expected


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ({"observedGeneration": 1, "updatedReplicas": 2, "readyReplicas": 2}, True),
        ({"observedGeneration": 1, "updatedReplicas": 2, "readyReplicas": 1}, False),
    ],
    ids=["all-groups", "one-group-short"],
)
def test_a_leaderworkerset_is_ready_when_every_group_is(status, expected):
    assert ready(LEADERWORKERSET_READY, workload(2, **status)) is expected


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ({"observedGeneration": 1, "availableReplicas": 1}, True),
        ({"observedGeneration": 1, "availableReplicas": 0}, False),
        ({"observedGeneration": 1}, False),
    ],
)
def test_a_podcliqueset_is_available_once_its_set_replica_is(status, expected):
    assert ready(PODCLIQUESET_READY, workload(1, **status)) is expected


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        ({"spec": {"replicas": 3}, "status": {"availableReplicas": 3}}, True),
        ({"spec": {"replicas": 3}, "status": {"availableReplicas": 1}}, False),
        ({"spec": {"replicas": 3}, "status": {}}, False),
        ({"spec": {"replicas": 3}}, False),
        ({"metadata": {"name": "not-yet-created"}, "spec": {}}, False),
    ],
    ids=["every-gang", "one-gang", "empty-status", "no-status", "not-observed-yet"],
)
def test_grove_gangs_are_ready_when_every_copy_is_available(obj, expected):
    assert ready(GANGS_READY, obj) is expected


def test_a_leaderworkerset_without_observed_generation_is_ready_when_every_group_is():
    # LeaderWorkerSet published no status.observedGeneration before lws#698 (v0.8 and earlier
    # never do); updatedReplicas already says the controller saw the current template.
    assert ready(LEADERWORKERSET_READY, workload(2, updatedReplicas=2, readyReplicas=2)) is True


def test_a_leaderworkerset_with_a_stale_observed_generation_is_not_ready():
    status = {"observedGeneration": 0, "updatedReplicas": 2, "readyReplicas": 2}
    assert ready(LEADERWORKERSET_READY, workload(2, **status)) is False
