"""A GPU pool that cannot come up (no quota, a stockout) holds nothing but its own replicas:
the serving stack installs once the kubeconfig and the system pool are Ready, and
NodePoolsReady names the pool with what its provider says."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane.compose.inferencecluster.components import ENVOY_GATEWAY

from .managed import managed, observed_as_ready, run

POOL_KEY = {"EKS": "nodegroup-gpua", "GKE": "nodepool-gpua", "AKS": "nodepool-gpua"}
QUOTA = "create failed: GPUS_ALL_REGIONS quota exceeded: limit 0.0 in region"


def stuck(observed: dict[str, Any], key: str) -> dict[str, Any]:
    """``observed`` with ``key`` failing to sync as upjet reports a refused create: Synced False
    with the cloud's error, Ready False (crossplane-runtime v2 pkg/reconciler/managed
    reconciler.go: ReconcileError on Synced; Creating on Ready)."""
    pool = dict(observed[key])
    pool["status"] = {
        "conditions": [
            {"type": "Synced", "status": "False", "reason": "ReconcileError", "message": QUOTA},
            {"type": "Ready", "status": "False", "reason": "Creating"},
        ]
    }
    return {**observed, key: pool}


def with_a_stuck_gpu_pool(source: str) -> Any:
    ic = managed(source)
    response = run(ic)
    for _ in range(4):
        response = run(ic, stuck(observed_as_ready(response), POOL_KEY[source]))
    return response


@pytest.mark.parametrize("source", sorted(POOL_KEY))
def test_the_stack_installs_while_a_gpu_pool_cannot_come_up(source: str) -> None:
    response = with_a_stuck_gpu_pool(source)
    assert ENVOY_GATEWAY in response.resources
    assert response.condition("StackReady")[1] != "ClusterProvisioning"


@pytest.mark.parametrize("source", sorted(POOL_KEY))
def test_node_pools_ready_names_the_stuck_pool_and_the_clouds_error(source: str) -> None:
    status, reason, message = with_a_stuck_gpu_pool(source).condition("NodePoolsReady")
    assert (status, reason) == ("False", "PoolsNotReady")
    assert f"gpua (Synced False: {QUOTA})" in message


@pytest.mark.parametrize("source", sorted(POOL_KEY))
def test_node_pools_ready_is_true_once_every_pool_is(source: str) -> None:
    ic = managed(source)
    response = run(ic)
    for _ in range(4):
        response = run(ic, observed_as_ready(response))
    assert response.condition("NodePoolsReady")[:2] == ("True", "Provisioned")


@pytest.mark.parametrize("source", ["EKS", "GKE"])
def test_the_stack_still_waits_for_the_system_pool(source: str) -> None:
    system = {"EKS": "nodegroup-system", "GKE": "nodepool-system"}[source]
    ic = managed(source)
    response = run(ic)
    for _ in range(3):
        response = run(ic, stuck(observed_as_ready(response), system))
    assert ENVOY_GATEWAY not in response.resources
    status, reason, message = response.condition("StackReady")
    assert (status, reason) == ("False", "ClusterProvisioning")
    assert system in message
