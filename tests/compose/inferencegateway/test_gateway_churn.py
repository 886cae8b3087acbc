"""An InferenceGateway's hops to the fleet under churn, through the FunctionRunner: a cluster
listed without its gateway status, with only Crossplane's conditions, or missing from the list
keeps its Backend and BackendTLSPolicy; its gateway saying it has no address, or its absence
when asked for by name, takes them away."""

from __future__ import annotations

import copy
from typing import Any

from modelplane.simulate import simulate_observed
from tests.compose.modelservice.kit import cluster, gateway
from tests.compose.through import run
from tests.fleet.builders import with_condition

Obj = dict[str, Any]
IG = gateway("main", "edge")
HOPS = ["backend-tls/west", "backend/west"]


def fleet() -> list[Obj]:
    return [cluster("edge", pools=False), cluster("east"), cluster("west")]


def settled() -> dict[str, Obj]:
    rsp = run(IG, {}, {"inference-clusters": fleet()})
    assert rsp.fatal is None, rsp.fatal
    return simulate_observed(copy.deepcopy(rsp.resources), 1)


def hops(clusters: list[Obj], **more: list[Obj]) -> list[str]:
    rsp = run(IG, settled(), {"inference-clusters": clusters, **more})
    assert rsp.fatal is None, rsp.fatal
    return sorted(k for k in rsp.resources if k.endswith("/west"))


def west(status: Obj | None) -> list[Obj]:
    out = fleet()
    if status is None:
        del out[2]["status"]
    else:
        out[2]["status"] = status
    return out


def test_a_cluster_listed_without_status_keeps_its_hop() -> None:
    assert hops(west(None)) == HOPS


def test_a_cluster_with_only_crossplanes_conditions_keeps_its_hop() -> None:
    synced = {"conditions": [{"type": "Synced", "status": "True", "reason": "ReconcileSuccess"}]}
    assert hops(west(synced)) == HOPS


def test_a_cluster_missing_from_the_list_keeps_its_hop_until_read_by_name() -> None:
    assert hops(fleet()[:2]) == HOPS
    assert hops(fleet()[:2], **{"cluster/west": [fleet()[2]]}) == HOPS


def test_a_cluster_whose_gateway_is_not_programmed_loses_its_hop() -> None:
    clusters = fleet()
    del clusters[2]["status"]["gateway"]["address"]
    clusters[2] = with_condition(clusters[2], "GatewayReady", "False", "GatewayNotProgrammed")
    assert hops(clusters) == []


def test_a_cluster_gone_by_name_loses_its_hop() -> None:
    assert hops(fleet()[:2], **{"cluster/west": []}) == []
