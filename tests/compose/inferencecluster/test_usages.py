"""Deletion order: ProviderConfigs outlive their users, controllers outlive the objects they
finalize, and a cluster with replicas on it cannot be deleted."""

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
def test_each_provider_config_outlives_every_release_and_object_that_deletes_through_it(
    stack: str,
) -> None:
    result = installing(cluster(stack=stack))
    found = {
        (
            u["spec"]["of"]["apiVersion"],
            u["spec"]["of"]["kind"],
            u["spec"]["of"]["resourceRef"]["name"],
            u["spec"]["by"]["resourceRef"]["name"],
        )
        for u in usages(result)
    }
    for obj in resources(result).values():
        if obj["kind"] not in ("Release", "Object") or not deletes_on_cluster(obj):
            continue
        config = "helm" if obj["kind"] == "Release" else "kubernetes"
        version = "v1beta1" if config == "helm" else "v1alpha1"
        expected = (
            f"{config}.m.crossplane.io/{version}",
            "ClusterProviderConfig",
            "east",
            obj["metadata"]["name"],
        )
        assert expected in found, obj["metadata"]["name"]


def test_what_is_never_deleted_on_the_cluster_waits_for_no_provider_config() -> None:
    result = installing(cluster(gateway={"mode": "External"}))
    users = {by for _, by in pairs(result)}
    for key in ("inference-pool-crd", "gateway"):  # the CRD is kept; the Gateway only observed
        assert name(result, key) not in users, key


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
