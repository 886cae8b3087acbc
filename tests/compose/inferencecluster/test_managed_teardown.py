"""Deleting a managed cluster, as Crossplane does it: every composed resource is deleted at
once, and a Usage holds its ``of`` back until its ``by`` is gone (a Usage being deleted waits
for its ``by`` too: crossplane v2.3.4 internal/controller/protection/usage/reconciler.go).
Composed through the FunctionRunner with the cluster provisioned and its stack installed."""

from __future__ import annotations

import pytest

from modelplane.compose.inferencecluster.managed import CLOUDS
from tests.compose.inferencecluster.managed import (
    identity,
    managed,
    provisioned,
    resolved,
    run,
    wave_of,
    waves,
)

SOURCES = sorted(CLOUDS)
CLOUD_GROUP = "upbound.io"


def _is_cloud(obj: dict) -> bool:
    return obj["apiVersion"].split("/")[0].endswith(CLOUD_GROUP)


def _managed_usages(composed: dict) -> list[dict]:
    cloud = {identity(o) for o in composed.values() if _is_cloud(o)}
    return [
        u
        for u in composed.values()
        if u["kind"] == "Usage" and resolved(u, u["spec"]["of"]) in cloud
    ]


@pytest.fixture(scope="module", params=SOURCES)
def composed(request: pytest.FixtureRequest) -> dict:
    return provisioned(managed(request.param)).resources


def test_every_usage_resolves_to_resources_composed_in_its_own_namespace(composed: dict) -> None:
    usages = _managed_usages(composed)
    assert usages
    present = {identity(o) for o in composed.values()}
    for usage in usages:
        for side in ("of", "by"):
            ref = usage["spec"][side]
            assert "namespace" not in ref["resourceRef"]
            assert resolved(usage, ref) in present, (usage["metadata"]["name"], side)


def test_the_stack_and_add_ons_uninstall_before_the_system_pool_and_the_cluster_go(
    composed: dict,
) -> None:
    wave = wave_of(waves(composed))
    on_cluster = [k for k, o in composed.items() if o["kind"] in ("Release", "Object")]
    api_server = [
        k
        for k, o in composed.items()
        if o["kind"] in ("Cluster", "KubernetesCluster", "ClusterAuth")
        or k in ("nodegroup-system", "nodepool-system")
    ]
    assert on_cluster and api_server
    assert max(wave[k] for k in on_cluster) < min(wave[k] for k in api_server)


def test_the_gateway_and_its_load_balancer_go_while_the_nodes_that_delete_it_run(
    composed: dict,
) -> None:
    wave = wave_of(waves(composed))
    [gateway] = [
        k
        for k, o in composed.items()
        if o["kind"] == "Object" and o["spec"]["forProvider"]["manifest"]["kind"] == "Gateway"
    ]
    system = next(k for k in ("nodegroup-system", "nodepool-system", "cluster") if k in composed)
    assert wave[gateway] < wave[system]


def test_node_pools_go_before_the_cluster_and_the_cluster_before_its_network(
    composed: dict,
) -> None:
    wave = wave_of(waves(composed))
    pools = [
        k
        for k, o in composed.items()
        if o["kind"] in ("NodeGroup", "NodePool", "KubernetesClusterNodePool")
    ]
    network = [
        k
        for k, o in composed.items()
        if o["kind"]
        in ("VPC", "Subnet", "Network", "Subnetwork", "VirtualNetwork", "ResourceGroup")
    ]
    assert pools and network
    assert max(wave[k] for k in pools) < wave["cluster"] < min(wave[k] for k in network)


def test_every_cloud_resource_outlives_what_refers_to_it(composed: dict) -> None:
    wave = wave_of(waves(composed))
    by_name = {o["metadata"]["name"]: k for k, o in composed.items() if _is_cloud(o)}
    for key, obj in composed.items():
        if not _is_cloud(obj):
            continue
        for name in _refs(obj["spec"]["forProvider"]):
            assert wave[by_name[name]] > wave[key], (key, by_name[name])


def _refs(node: object) -> list[str]:
    if isinstance(node, dict):
        out = []
        for field, value in node.items():
            if field.endswith("Ref") and isinstance(value, dict):
                out.append(value["name"])
            elif field.endswith("Refs"):
                out += [v["name"] for v in value]
            else:
                out += _refs(value)
        return out
    if isinstance(node, list):
        return [n for item in node for n in _refs(item)]
    return []


def test_a_managed_cluster_with_replicas_on_it_refuses_its_own_deletion() -> None:
    ic = managed("EKS")
    composed = provisioned(ic).resources
    replica = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": "r0", "namespace": "ml", "labels": {"modelplane.ai/cluster": "west"}},
    }
    response = run(ic, composed, **{"model-replicas": [replica]})
    guard = response.resources["replica-guard"]
    assert guard["kind"] == "ClusterUsage"
    assert guard["spec"]["of"]["resourceRef"] == {"name": "west"}


@pytest.mark.parametrize("source", SOURCES)
def test_a_pool_removed_from_the_spec_is_held_by_nothing_that_stays(source: str) -> None:
    # A composed Usage is deleted only once its ``by`` is gone (crossplane v2.3.4
    # internal/controller/protection/usage/reconciler.go): a Usage holding the pool for a
    # resource that stays would keep the pool for good.
    ic = managed(source)
    composed = provisioned(ic).resources
    pool = composed["nodegroup-gpua" if source == "EKS" else "nodepool-gpua"]
    ic["spec"]["nodePools"] = [{**ic["spec"]["nodePools"][0], "name": "other"}]
    desired = run(ic, composed).resources
    assert pool["metadata"]["name"] not in {o["metadata"]["name"] for o in desired.values()}
    staying = {identity(o) for o in desired.values()}
    for usage in composed.values():
        if usage["kind"] != "Usage" or resolved(usage, usage["spec"]["of"]) != identity(pool):
            continue
        assert resolved(usage, usage["spec"]["by"]) not in staying, usage["metadata"]["name"]


def test_every_role_keeps_its_policies_while_anything_acts_with_it() -> None:
    # Users name only the role: the attachments are held for them, not by a reference.
    composed = provisioned(managed("EKS")).resources
    wave = wave_of(waves(composed))
    by_name = {o["metadata"]["name"]: k for k, o in composed.items()}
    users = {
        (by_name[o["spec"]["forProvider"][f]["name"]], k)
        for k, o in composed.items()
        if _is_cloud(o)
        for f in ("roleArnRef", "nodeRoleArnRef")
        if f in o["spec"]["forProvider"]
    }
    assert users
    for key, obj in composed.items():
        if obj["kind"] == "RolePolicyAttachment":
            role = by_name[obj["spec"]["forProvider"]["roleRef"]["name"]]
            for user in (u for r, u in users if r == role):
                assert wave[key] > wave[user], (key, user)
