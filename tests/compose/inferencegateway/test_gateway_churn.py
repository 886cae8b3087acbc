"""An InferenceGateway's hops to the fleet under churn, through the FunctionRunner: a cluster
listed without its gateway status, with only Crossplane's conditions, or missing from the list
keeps its place in its shard (so its Backend and BackendTLSPolicy), as it was composed; its
gateway saying it has no address, or its absence when asked for by name, takes it away."""

from __future__ import annotations

from typing import Any

from modelplane.compose.inferencegateway.composer import CLUSTERS
from modelplane.compose.inferencegateway.shards import SHARD
from tests.compose.modelservice.kit import edge_fleet, gateway
from tests.compose.through import reconcile, settled
from tests.fleet.builders import with_condition

Obj = dict[str, Any]
IG = gateway("main", "edge")
WEST = {
    "cluster": "west",
    "address": "west.gw.example.net",
    "fleetHostname": "west.fleet.modelplane.internal",
}


def hops(clusters: list[Obj], **more: list[Obj]) -> list[Obj]:
    """West's entries in the shards composed."""
    observed = settled(IG, {CLUSTERS: edge_fleet("east", "west")})
    rsp = reconcile(IG, observed, {CLUSTERS: clusters, **more})
    return [
        t
        for k, shard in rsp.resources.items()
        if k.startswith(SHARD)
        for t in shard["spec"]["targets"]
        if t["cluster"] == "west"
    ]


def west(status: Obj | None) -> list[Obj]:
    out = edge_fleet("east", "west")
    if status is None:
        del out[2]["status"]
    else:
        out[2]["status"] = status
    return out


def test_a_cluster_listed_without_status_keeps_its_hop() -> None:
    assert hops(west(None)) == [WEST]


def test_a_cluster_with_only_crossplanes_conditions_keeps_its_hop() -> None:
    synced = {"conditions": [{"type": "Synced", "status": "True", "reason": "ReconcileSuccess"}]}
    assert hops(west(synced)) == [WEST]


def test_a_cluster_missing_from_the_list_keeps_its_hop_until_read_by_name() -> None:
    assert hops(edge_fleet("east")) == [WEST]
    assert hops(edge_fleet("east"), **{"cluster/west": edge_fleet("west")[1:]}) == [WEST]


def test_a_cluster_whose_gateway_is_not_programmed_loses_its_hop() -> None:
    clusters = edge_fleet("east", "west")
    del clusters[2]["status"]["gateway"]["address"]
    clusters[2] = with_condition(clusters[2], "GatewayReady", "False", "GatewayNotProgrammed")
    assert hops(clusters) == []


def test_a_cluster_gone_by_name_loses_its_hop() -> None:
    assert hops(edge_fleet("east"), **{"cluster/west": []}) == []
