"""Deletion order: controllers outlive the objects they finalize, and a cluster with replicas on it
cannot be deleted."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane.compose.inferencecluster.composer import REPLICAS
from modelplane.compose.inferencecluster.usages import REPLICA_GUARD
from modelplane.labels import CLUSTER

from .support import cluster, condition, created, installing, resources, run

Obj = dict[str, Any]


def usages(result: Any) -> list[Obj]:
    return [r for r in resources(result).values() if r["kind"] == "Usage"]


def pairs(result: Any) -> set[tuple[str, str]]:
    """(of, by) by control-plane name, for every Usage composed."""
    return {
        (u["spec"]["of"]["resourceRef"]["name"], u["spec"]["by"]["resourceRef"]["name"])
        for u in usages(result)
    }


def name(result: Any, key: str) -> str:
    return str(resources(result)[key]["metadata"]["name"])


def deletes_on_cluster(obj: Obj) -> bool:
    policies = obj["spec"].get("managementPolicies")
    return policies is None or "*" in policies or "Delete" in policies


@pytest.mark.parametrize("stack", ["Standard", "Dynamo"])
def test_no_usage_names_a_provider_config_which_no_namespaced_usage_can_protect(
    stack: str,
) -> None:
    # A namespaced Usage of a cluster-scoped object never matches its deletion (Crossplane's
    # usage finder); the providers' own ProviderConfigUsages hold the configs instead
    # (tests/conformance/test_crossplane_usages.py).
    result = installing(cluster(stack=stack))
    assert {u["spec"]["of"]["kind"] for u in usages(result)} <= {"Release", "Object"}
    assert {u["spec"]["by"]["kind"] for u in usages(result)} <= {"Release", "Object"}


@pytest.mark.parametrize(
    ("of", "by"),
    [
        ("gateway-class", "gateway"),
        ("envoy-gateway", "gateway-class"),
        ("envoy-gateway", "envoy-proxy"),
        ("envoy-gateway", "fleet-client-validation"),
        ("kai-scheduler", "kai-queue"),
        ("kai-scheduler", "kai-queue-root"),
        ("prometheus", "podmonitor-endpoint-pickers"),
        ("prometheus", "podmonitor-engines"),
    ],
)
def test_a_controller_outlives_the_objects_it_finalizes_or_defines(of: str, by: str) -> None:
    result = installing(cluster(stack="Dynamo"))
    assert (name(result, of), name(result, by)) in pairs(result)


def test_an_external_controller_is_never_ordered_against_anything() -> None:
    external = {"envoyGateway": {"mode": "External"}, "kaiScheduler": {"mode": "External"}}
    result = installing(cluster(stack="Dynamo", servingStack=external))
    ofs = {u["spec"]["of"]["resourceRef"]["name"] for u in usages(result)}
    assert not any("envoy-gateway" in of or "kai-scheduler" in of for of in ofs)


def test_a_usage_replays_the_deletion_it_held_back() -> None:
    assert {u["spec"]["replayDeletion"] for u in usages(installing(cluster()))} == {True}


def test_replicas_are_read_by_the_cluster_label_in_every_namespace() -> None:
    requirement = run(cluster()).requirements[REPLICAS]
    assert (requirement.kind, requirement.match_labels, requirement.namespace) == (
        "ModelReplica",
        {CLUSTER: "east"},
        None,
    )


def test_a_cluster_with_replicas_on_it_refuses_deletion_and_says_why() -> None:
    replicas = [
        {"metadata": {"name": "llm-east-0", "namespace": "team-b"}},
        {"metadata": {"name": "llm-east-1", "namespace": "team-a"}},
    ]
    result = run(cluster(), replicas=replicas)
    guard = result.resources[REPLICA_GUARD].resource
    assert guard["kind"] == "ClusterUsage"
    assert guard["spec"]["of"] == {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "resourceRef": {"name": "east"},
    }
    assert "by" not in guard["spec"]
    reason = guard["spec"]["reason"]
    assert reason.startswith(
        "2 ModelReplicas run on InferenceCluster east (team-a/llm-east-1, team-b/llm-east-0)"
    )
    cond = condition(result, "InUse")
    assert (cond.status, cond.reason, cond.message) == ("True", "ReplicasRunning", reason)


def test_a_refused_delete_of_a_cluster_with_replicas_is_replayed_once_they_are_gone() -> None:
    replicas = [{"metadata": {"name": "llm-east-0", "namespace": "team-a"}}]
    guard = run(cluster(), replicas=replicas).resources[REPLICA_GUARD].resource
    assert guard["spec"]["replayDeletion"] is True
    assert guard["spec"]["reason"].endswith(
        "they are moved to other clusters first, and this delete is replayed once they are gone"
    )


def test_many_replicas_are_counted_and_the_first_five_named() -> None:
    replicas = [{"metadata": {"name": f"r{i}", "namespace": "t"}} for i in range(7)]
    reason = run(cluster(), replicas=replicas).resources[REPLICA_GUARD].resource["spec"]["reason"]
    assert "7 ModelReplicas run" in reason
    assert "(t/r0, t/r1, t/r2, t/r3, t/r4 and 2 more)" in reason


def test_a_cluster_without_replicas_carries_no_guard() -> None:
    result = run(cluster(), replicas=[])
    assert REPLICA_GUARD not in result.resources
    assert condition(result, "InUse").status == "False"


def test_until_replicas_are_read_the_guard_stands_as_observed() -> None:
    ic = cluster()
    guarded = run(ic, replicas=[{"metadata": {"name": "r", "namespace": "t"}}])
    observed = created(guarded)
    result = run(ic, observed)  # the replicas requirement not answered yet
    assert result.resources[REPLICA_GUARD].resource == observed[REPLICA_GUARD]


def test_the_guard_is_composed_before_anything_else_can_fail() -> None:
    # Even while nothing of the stack may be installed yet, the guard is there.
    result = run(cluster(), replicas=[{"metadata": {"name": "r", "namespace": "t"}}])
    assert REPLICA_GUARD in result.resources
    assert condition(result, "StackReady").reason == "WaitingForProviderConfigs"


def test_an_orphaning_cluster_deletes_nothing_on_the_cluster_and_waits_on_no_provider_config() -> (
    None
):
    result = installing(cluster(servingStack={"deletionPolicy": "Orphan"}))
    for key, obj in resources(result).items():
        if obj["kind"] in ("Release", "Object"):
            assert not deletes_on_cluster(obj), key
    assert not any(k.endswith("-uses-provider") for k in resources(result))


def test_by_default_every_managed_release_is_uninstalled_on_deletion() -> None:
    for r in resources(installing(cluster())).values():
        if r["kind"] == "Release":
            assert deletes_on_cluster(r)


def _inference_gateway(name: str, cluster_name: str) -> Obj:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceGateway",
        "metadata": {"name": name},
        "spec": {"clusterName": cluster_name, "hostname": f"{name}.example.com"},
    }


def test_a_cluster_hosting_a_gateway_is_deleted_only_after_it_and_says_so() -> None:
    gateways = [_inference_gateway("main", "east"), _inference_gateway("other", "west")]
    result = run(cluster(), gateways=gateways, replicas=[])
    guards = [r for r in resources(result).values() if r["kind"] == "ClusterUsage"]
    assert [g["spec"] for g in guards] == [
        {
            "of": {
                "apiVersion": "modelplane.ai/v1alpha1",
                "kind": "InferenceCluster",
                "resourceRef": {"name": "east"},
            },
            "by": {
                "apiVersion": "modelplane.ai/v1alpha1",
                "kind": "InferenceGateway",
                "resourceRef": {"name": "main"},
            },
            "replayDeletion": True,
        }
    ]
    in_use = condition(result, "InUse")
    assert (in_use.status, in_use.reason) == ("True", "GatewaysHosted")
    assert in_use.message.startswith("InferenceGateway main on this cluster: a front Gateway holds")


def test_the_gateway_guard_stays_while_the_gateways_are_not_read_yet() -> None:
    ic = cluster()
    first = run(ic, gateways=[_inference_gateway("main", "east")], replicas=[])
    held = created(first)
    result = run(ic, held, replicas=[])
    assert "gateway-guard/main" in result.resources


def test_a_cluster_hosting_no_gateway_has_no_gateway_guard() -> None:
    result = run(cluster(), gateways=[_inference_gateway("main", "west")], replicas=[])
    assert not any(k.startswith("gateway-guard/") for k in result.resources)
