"""Device-granular pool capacity: pods on one node each, gangs on distinct nodes."""

from __future__ import annotations

import pytest

from modelplane.scheduling.capacity import (
    Ledger,
    Pool,
    PoolState,
    Vector,
    charge,
    fit,
    nodes_needed,
    observed_vector,
)
from modelplane.scheduling.devices import DeviceKind, device_kinds
from tests.fleet.builders import gpu_class

EIGHT = (8,)


def free_devices(state: PoolState) -> Vector:
    """Every kind's devices free across the pool's nodes."""
    return tuple(sum(v[i] * n for v, n in state.nodes) for i in range(len(state.per_node)))


def pods(*sizes: int) -> tuple[tuple[int, ...], ...]:
    """Independent single pods."""
    return tuple(((s,),) for s in sizes)


def test_four_two_gpu_pods_fit_on_one_eight_gpu_node() -> None:
    after = fit(PoolState.empty(EIGHT, 1), pods(2, 2, 2, 2))
    assert after is not None
    assert free_devices(after) == (0,)


def test_a_pod_needs_all_its_devices_on_one_node() -> None:
    # 8 GPUs free in total, but 4 on each node: a 6-GPU pod fits nowhere.
    split = PoolState((8,), (((4,), 2),))
    assert fit(split, pods(6)) is None


def test_packing_keeps_whole_nodes_free() -> None:
    after = fit(PoolState.empty(EIGHT, 2), pods(4, 4))
    assert after is not None
    assert after.free_nodes == 1


def test_gang_pods_need_distinct_nodes() -> None:
    gang = (((1,), (1,), (1,)),)
    assert fit(PoolState.empty(EIGHT, 2), gang) is None
    assert fit(PoolState.empty(EIGHT, 3), gang) is not None


def test_different_gang_copies_may_share_nodes() -> None:
    two_copies = (((4,), (4,)), ((4,), (4,)))
    after = fit(PoolState.empty(EIGHT, 2), two_copies)
    assert after is not None
    assert free_devices(after) == (0,)


def test_the_search_is_exact_where_best_fit_would_strand_devices() -> None:
    # Nodes with 5 and 3 free; pods 3 and 5. Tightest-first puts 3 on the 3-node; but the
    # search must find it either way.
    state = PoolState((8,), (((3,), 1), ((5,), 1)))
    assert fit(state, pods(5, 3)) is not None
    assert fit(state, pods(4, 4)) is None


def test_multi_kind_demands_fit_per_kind() -> None:
    state = PoolState.empty((8, 2), 1)
    assert fit(state, pods_of((4, 1), (4, 1))) is not None
    assert fit(state, pods_of((4, 1), (4, 1), (0, 1))) is None


def pods_of(*vectors: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], ...], ...]:
    return tuple((v,) for v in vectors)


def test_charging_what_does_not_fit_overcommits_the_pool() -> None:
    state, fitted = charge(PoolState.empty(EIGHT, 1), pods(8, 8))
    assert not fitted
    assert state.overcommitted
    assert fit(state, pods(1)) is None


def test_an_empty_pool_takes_nothing() -> None:
    assert fit(PoolState.empty(EIGHT, 0), pods(1)) is None


@pytest.mark.parametrize(
    ("units", "needed"),
    [(pods(8, 8), 2), (pods(2, 2, 2, 2), 1), ((((1,), (1,), (1,)),), 3), (pods(9), None)],
)
def test_nodes_needed_counts_whole_nodes(units: tuple, needed: int | None) -> None:
    assert nodes_needed(EIGHT, units, 8) == needed


def h100_pool(nodes: int, more: list[DeviceKind] | None = None) -> Pool:
    [gpu] = device_kinds(gpu_class("h100"))
    return Pool("a", "p", "h100", (gpu, *(more or [])), nodes)


def by_key(*pools: Pool) -> dict[tuple[str, str], Pool]:
    return {(p.cluster, p.name): p for p in pools}


def replica_on(pool: str, requests: list[dict], copies: int = 1, workers: int = 0) -> dict:
    members = [
        {
            "role": "Leader" if workers else "Standalone",
            "nodePoolName": pool,
            "deviceRequests": requests,
        }
    ]
    if workers:
        members.append(
            {
                "role": "Worker",
                "nodePoolName": pool,
                "deviceRequests": requests,
                "worker": {"nodes": workers},
            }
        )
    return {
        "spec": {
            "clusterName": "a",
            "engines": [{"name": "e", "copies": copies, "members": members}],
        }
    }


GPU_REQUEST = {
    "name": "gpu",
    "deviceClassName": "gpu.nvidia.com",
    "count": 4,
    "selectors": [{"cel": 'device.driver == "gpu.nvidia.com"'}],
}


def test_the_ledger_charges_observed_replicas_from_their_own_spec() -> None:
    ledger = Ledger(by_key(h100_pool(2)))
    ledger.charge_observed(replica_on("p", [GPU_REQUEST], copies=3))
    load = ledger.load(("a", "p"))
    assert free_devices(load.state()) == (4,)
    assert not load.fits(pods(8))
    assert load.fits(pods(4))


def test_observed_gangs_need_distinct_nodes() -> None:
    ledger = Ledger(by_key(h100_pool(3)))
    ledger.charge_observed(replica_on("p", [GPU_REQUEST], workers=2))
    assert ledger.load(("a", "p")).state().free_nodes == 0


def test_a_member_on_a_vanished_pool_charges_nothing() -> None:
    ledger = Ledger(by_key(h100_pool(1)))
    ledger.charge_observed(replica_on("gone", [GPU_REQUEST]))
    assert ledger.load(("a", "p")).fits(pods(8))


def test_an_overcommitted_pool_takes_nothing_new() -> None:
    ledger = Ledger(by_key(h100_pool(1)))
    for _ in range(3):
        ledger.charge_observed(replica_on("p", [GPU_REQUEST]))
    load = ledger.load(("a", "p"))
    assert load.overcommitted
    assert not load.fits(pods(1))


def test_a_shared_device_class_is_resolved_by_the_selectors() -> None:
    [big] = device_kinds(gpu_class("x", product="H200", count=2))
    small, big = h100_pool(1).kinds[0], big
    pool = Pool("a", "p", "x", (small, big), 1)
    h200 = {
        **GPU_REQUEST,
        "count": 2,
        "selectors": [{"cel": 'device.attributes["gpu.nvidia.com"].productName == "H200"'}],
    }
    assert observed_vector(pool, [h200]) == (0, 2)
    assert observed_vector(pool, [{**GPU_REQUEST, "count": 2}]) == (2, 0)
