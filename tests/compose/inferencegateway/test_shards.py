"""An InferenceGateway's hops split into InferenceGatewayShards, through the FunctionRunner: each
cluster in the shard its name hashes to, whatever the rest of the fleet; only shards holding a
cluster composed; each shard composing that cluster's Backend and BackendTLSPolicy from its own
spec, Ready once they exist, and refusing a spec it cannot read, naming the field."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from modelplane.compose.inferencegateway.composer import CLUSTERS
from modelplane.compose.inferencegateway.shard import hop_object_name
from modelplane.compose.inferencegateway.shards import KIND, SHARD, SHARDS, shard_name, shard_of
from modelplane.compose.shared.frontdoor import cluster_backend_name
from modelplane.kube.names import dns_label
from modelplane.simulate import simulate_observed
from tests.compose.inferencegateway.kit import observed_shard
from tests.compose.modelservice.kit import cluster, edge_fleet, gateway
from tests.compose.through import Response, reconcile, run

Obj = dict[str, Any]
IG = gateway("main", "edge")


def members(rsp: Response) -> dict[str, str]:
    """The shard key each cluster is composed in."""
    return {
        t["cluster"]: key
        for key, obj in rsp.resources.items()
        if key.startswith(SHARD)
        for t in obj["spec"]["targets"]
    }


def a_shard(**spec: Any) -> Obj:
    base: Obj = {
        "gatewayName": "main",
        "host": {
            "clusterName": "edge",
            "providerConfigName": "pc-edge",
            "namespace": "modelplane-system",
        },
        "targets": [
            {
                "cluster": "east",
                "address": "east.gw.example.net",
                "fleetHostname": "east.fleet.modelplane.internal",
            }
        ],
    }
    base.update(spec)
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": KIND,
        "metadata": {"name": shard_name("main", 3)},
        "spec": base,
    }


def test_a_cluster_is_composed_in_the_shard_its_name_hashes_to() -> None:
    names = [f"c{i:03d}" for i in range(200)]
    placed = members(reconcile(IG, {}, {CLUSTERS: edge_fleet(*names)}))
    assert placed == {c: f"{SHARD}{shard_of(c)}" for c in ["edge", *names]}
    assert len(set(placed.values())) == SHARDS  # 201 clusters spread over every shard


def test_no_cluster_changes_shard_when_clusters_join_or_leave() -> None:
    before = members(reconcile(IG, {}, {CLUSTERS: edge_fleet(*(f"c{i:03d}" for i in range(40)))}))
    after = members(
        reconcile(IG, {}, {CLUSTERS: edge_fleet(*(f"c{i:03d}" for i in range(20, 80)))})
    )
    stayed = set(before) & set(after)
    assert len(stayed) == 21
    assert {c: after[c] for c in stayed} == {c: before[c] for c in stayed}


def test_only_shards_holding_a_cluster_are_composed() -> None:
    rsp = reconcile(IG, {}, {CLUSTERS: edge_fleet("east")})
    shards = sorted(k for k in rsp.resources if k.startswith(SHARD))
    assert shards == sorted({f"{SHARD}{shard_of('edge')}", f"{SHARD}{shard_of('east')}"})
    shard = rsp.resources[f"{SHARD}{shard_of('east')}"]
    assert (shard["kind"], shard["metadata"]["name"]) == (
        KIND,
        shard_name("main", shard_of("east")),
    )


def test_a_shard_names_its_host_and_every_target_it_dials() -> None:
    rsp = reconcile(IG, {}, {CLUSTERS: edge_fleet("east")})
    spec = rsp.resources[f"{SHARD}{shard_of('east')}"]["spec"]
    assert spec["gatewayName"] == "main"
    assert spec["host"] == {
        "clusterName": "edge",
        "providerConfigName": "pc-edge",
        "namespace": "modelplane-system",
    }
    assert {
        "cluster": "east",
        "address": "east.gw.example.net",
        "fleetHostname": "east.fleet.modelplane.internal",
    } in spec["targets"]


def test_a_shard_emptied_on_evidence_goes() -> None:
    assert shard_of("east") != shard_of("edge")  # east alone in its shard
    east = f"{SHARD}{shard_of('east')}"
    first = reconcile(IG, {}, {CLUSTERS: edge_fleet("east")})
    observed = {k: observed_shard(o, True) for k, o in first.resources.items()}
    unlisted = reconcile(IG, observed, {CLUSTERS: edge_fleet()})
    assert east in unlisted.resources  # not listed: asked for by name, kept until answered
    assert unlisted.by_name["cluster/east"] == ("InferenceCluster", "east", None)
    rsp = run(IG, observed, {CLUSTERS: [cluster("edge")], "cluster/east": []})
    assert rsp.fatal is None, rsp.fatal
    assert east not in rsp.resources


def test_a_shard_composes_each_targets_backend_and_backend_tls_policy_on_the_host() -> None:
    rsp = run(a_shard())
    assert rsp.fatal is None, rsp.fatal
    assert sorted(rsp.resources) == ["backend-tls/east", "backend/east"]
    backend = rsp.resources["backend/east"]
    assert backend["metadata"] == {
        "name": hop_object_name(shard_name("main", 3), "backend/east"),
        "namespace": "crossplane-system",
    }
    assert backend["spec"]["providerConfigRef"] == {
        "kind": "ClusterProviderConfig",
        "name": "pc-edge",
    }
    manifest = backend["spec"]["forProvider"]["manifest"]
    assert (manifest["kind"], manifest["metadata"]["name"], manifest["metadata"]["namespace"]) == (
        "Backend",
        cluster_backend_name("main", "east"),
        "modelplane-system",
    )
    assert manifest["spec"]["endpoints"] == [
        {"fqdn": {"hostname": "east.gw.example.net", "port": 443}}
    ]
    policy = rsp.resources["backend-tls/east"]["spec"]["forProvider"]["manifest"]
    assert policy["spec"]["validation"]["hostname"] == "east.fleet.modelplane.internal"


def test_a_shards_objects_are_not_named_as_the_gateways_own_hop_objects_were() -> None:
    rsp = run(a_shard())
    assert rsp.resources["backend/east"]["metadata"]["name"] != dns_label(
        "gw", "main", "backend/east"
    )


def test_a_shard_is_ready_once_every_hop_exists_and_names_those_that_do_not() -> None:
    first = run(a_shard())
    assert first.composite_ready == "READY_FALSE"
    assert first.condition("HopsReady") == (
        "False",
        "WaitingForHops",
        "InferenceGateway main: 1 of 1 hops not created yet: east",
    )
    assert first.status == {"clusters": 1, "reached": []}
    observed = simulate_observed(copy.deepcopy(first.resources), 1)
    rsp = run(a_shard(), observed)
    assert rsp.composite_ready == "READY_TRUE"
    assert rsp.condition("HopsReady")[:2] == ("True", "HopsCreated")
    assert rsp.status == {"clusters": 1, "reached": ["east"]}


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"gatewayName": ""}, "spec.gatewayName"),
        ({"host": {"namespace": "modelplane-system"}}, "spec.host.providerConfigName"),
        ({"host": "edge"}, "spec.host"),
        ({"targets": {"cluster": "east"}}, "spec.targets"),
        (
            {"targets": [{"cluster": "east", "address": "a.example.net"}]},
            "spec.targets[0].fleetHostname",
        ),
        ({"targets": ["east"]}, "spec.targets[0]"),
    ],
)
def test_a_malformed_shard_spec_fails_naming_the_field(spec: Obj, field: str) -> None:
    rsp = run(a_shard(**spec))
    assert rsp.fatal is not None
    assert f"InferenceGatewayShard {field} " in rsp.fatal
    assert rsp.resources == {}


def test_a_cluster_listed_twice_in_a_shard_fails_naming_it() -> None:
    target = a_shard()["spec"]["targets"][0]
    rsp = run(a_shard(targets=[target, target]))
    assert rsp.fatal == "InferenceGatewayShard spec.targets[1].cluster 'east' is listed twice"


def test_a_cluster_joining_a_shard_leaves_the_shards_other_clusters_reached() -> None:
    # The shard is not Ready while the newcomer's hop is created; east's hop still exists.
    joining = next(n for n in (f"c{i:03d}" for i in range(1000)) if shard_of(n) == shard_of("east"))
    first = reconcile(IG, {}, {CLUSTERS: edge_fleet("east")})
    east = f"{SHARD}{shard_of('east')}"
    observed = {
        k: observed_shard(o, True) if k.startswith(SHARD) else o for k, o in first.resources.items()
    }
    observed[east] = observed_shard(first.resources[east], False, ["east"])
    rsp = reconcile(IG, observed, {CLUSTERS: edge_fleet("east", joining)})
    message = rsp.condition("GatewayReady")[2]
    assert f"waiting for the hops to 1 more: {joining}" in message
    assert "east" in message.partition("; waiting")[0]
