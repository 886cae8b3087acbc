"""The composer's contract: what it requires, when it holds, what it marks ready, bad input."""

from __future__ import annotations

import json

import pytest

from modelplane.compose.modelreplica.composer import compose_replica
from modelplane.compose.shared.remote import NEVER_DELETE
from modelplane.composer import Inputs, Requirement

from .support import (
    cluster,
    engine,
    leader,
    manifests,
    model_cache,
    replica,
    run,
    standalone,
    worker,
)


def test_requires_the_pinned_cluster_by_name():
    result = run(replica(cluster_name="eks-l4"))
    assert result.requirements == {
        "cluster": Requirement("modelplane.ai/v1alpha1", "InferenceCluster", match_name="eks-l4")
    }


def test_requires_the_model_cache_in_the_replicas_namespace():
    result = run(replica(cache="weights", namespace="ml"), cache=model_cache("weights", "ml"))
    assert result.requirements["modelcache"] == Requirement(
        "modelplane.ai/v1alpha1", "ModelCache", match_name="weights", namespace="ml"
    )


def test_every_remote_object_rides_in_an_object_on_the_clusters_provider_config():
    result = run(replica(engine("main", leader(), worker())), on=cluster(provider="pc-eks"))
    for key, desired in result.resources.items():
        obj = desired.resource
        assert obj["apiVersion"] == "kubernetes.m.crossplane.io/v1alpha1", key
        assert obj["kind"] == "Object", key
        assert obj["metadata"]["namespace"] == "team", key
        assert obj["spec"]["providerConfigRef"] == {
            "kind": "ClusterProviderConfig",
            "name": "pc-eks",
        }


def test_remote_objects_live_in_the_replicas_namespace():
    result = run(replica(engine("main", leader(), worker()), namespace="ml-team"))
    found = manifests(result)
    assert found["namespace"]["metadata"]["name"] == "ml-team"
    for key, manifest in found.items():
        if key != "namespace":
            assert manifest["metadata"]["namespace"] == "ml-team", key


def test_the_namespace_is_never_deleted():
    result = run(replica())
    spec = result.resources["namespace"].resource["spec"]
    assert spec["managementPolicies"] == NEVER_DELETE
    assert "Delete" not in NEVER_DELETE and "*" not in NEVER_DELETE


def test_the_namespace_is_identical_for_every_replica_sharing_it():
    a = manifests(run(replica(name="a")))["namespace"]
    b = manifests(run(replica(name="b")))["namespace"]
    assert a == b


def test_nothing_is_ready_until_observed_ready():
    assert {d.ready for d in run(replica()).resources.values()} == {"False"}


def test_each_resource_is_ready_exactly_when_its_observed_object_is():
    first = run(replica())
    observed = {
        "namespace": observed_object(first, "namespace", ready=True),
        "workload-main": observed_object(first, "workload-main", ready=False),
    }
    result = run(replica(), observed=observed)
    assert result.resources["namespace"].ready == "True"
    assert result.resources["workload-main"].ready == "False"
    (claims,) = [d for k, d in result.resources.items() if k.startswith("claims-")]
    assert claims.ready == "False"


@pytest.mark.parametrize(
    ("required", "reason"),
    [
        ({}, "WaitingForCluster"),
        ({"cluster": []}, "WaitingForCluster"),
        ({"cluster": [cluster(provider=None)]}, "WaitingForCluster"),
        ({"cluster": [cluster()], "modelcache": []}, "WaitingForModelCache"),
    ],
    ids=["not-fetched", "missing", "no-provider-config", "cache-missing"],
)
def test_first_reconcile_without_usable_inputs_composes_nothing_and_says_why(required, reason):
    result = compose_replica(Inputs(composite=replica(cache="weights"), required=required))
    assert result.fatal is None
    assert result.resources == {}
    (condition,) = result.conditions
    assert (condition.type, condition.status, condition.reason) == ("ModelServing", "False", reason)
    assert "nothing composed yet" in condition.message
    assert "cluster" in result.requirements


@pytest.mark.parametrize(
    "required",
    [{}, {"cluster": [cluster(provider=None)]}, {"cluster": [cluster()], "modelcache": []}],
    ids=["cluster-gone", "no-provider-config", "cache-gone"],
)
def test_losing_inputs_later_keeps_every_observed_resource_as_observed(required):
    composite = replica(cache="weights")
    first = run(composite, cache=model_cache())
    observed = {key: observed_object(first, key, ready=True) for key in first.resources}
    observed["some-routing-object"] = {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {"name": "x", "namespace": "team"},
        "spec": {"forProvider": {"manifest": {"kind": "Service"}}},
        "status": {"conditions": [{"type": "Ready", "status": "False"}]},
    }
    result = compose_replica(Inputs(composite=composite, required=required, observed=observed))
    assert set(result.resources) == set(observed)
    for key, desired in result.resources.items():
        assert desired.resource["spec"] == observed[key]["spec"], key
        assert desired.resource["metadata"]["name"] == observed[key]["metadata"]["name"], key
    assert result.resources["namespace"].ready == "True"
    assert result.resources["some-routing-object"].ready == "False"
    (condition,) = result.conditions
    assert condition.status == "False"
    assert f"keeping the {len(observed)} composed resources" in condition.message
    assert [e.severity for e in result.events] == ["Warning"]


def test_carried_resources_drop_server_set_fields():
    first = run(replica())
    observed = {key: observed_object(first, key, ready=True) for key in first.resources}
    result = compose_replica(Inputs(composite=replica(), required={}, observed=observed))
    for desired in result.resources.values():
        assert "status" not in desired.resource
        assert set(desired.resource["metadata"]) <= {"name", "namespace", "labels", "annotations"}


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda r: r.pop("spec"), "spec"),
        (lambda r: r["spec"].pop("clusterName"), "spec.clusterName"),
        (lambda r: r["spec"].update(engines=[]), "spec.engines"),
        (lambda r: r["spec"]["engines"][0].pop("members"), "spec.engines[0].members"),
        (
            lambda r: r["spec"]["engines"][0]["members"].append(worker()),
            "spec.engines[0]",
        ),
        (
            lambda r: r["spec"]["engines"][0]["members"][0].pop("nodePoolName"),
            "spec.engines[0].members[0].nodePoolName",
        ),
        (
            lambda r: r["spec"]["engines"][0]["members"][0]["template"].pop("spec"),
            "spec.engines[0].members[0].template.spec",
        ),
        (
            lambda r: r["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][
                0
            ].update(name="main"),
            "spec.engines[0].members[0].template.spec.containers",
        ),
        (
            lambda r: r["spec"]["engines"][0]["members"][0]["deviceRequests"][0].pop(
                "deviceClassName"
            ),
            "spec.engines[0].members[0].deviceRequests[0].deviceClassName",
        ),
        (lambda r: r["spec"]["engines"][0].update(copies="two"), "spec.engines[0].copies"),
        (
            lambda r: r["spec"]["engines"][0]["members"][0]["deviceRequests"][0].update(count=0),
            "spec.engines[0].members[0].deviceRequests[0].count",
        ),
        (
            lambda r: r["spec"]["engines"][0].update(members=[leader(), worker(nodes=1.5)]),
            "spec.engines[0].members[1].worker.nodes",
        ),
    ],
)
def test_bad_input_fails_cleanly_naming_the_field(mutate, field):
    composite = replica()
    mutate(composite)
    result = run(composite)
    assert result.fatal is not None
    assert f"{field}:" in result.fatal
    assert result.resources == {}


def test_a_gang_with_no_containers_anywhere_fails_naming_the_field():
    lead, work = leader(), worker()
    del lead["template"]["spec"], work["template"]["spec"]
    result = run(replica(engine("main", lead, work)))
    assert result.fatal is not None and "template.spec" in result.fatal


def test_output_is_byte_identical_across_runs():
    composite = replica(
        engine("main", leader(), worker(nodes=3), copies=2), engine("solo"), cache="w"
    )
    outputs = {
        json.dumps(
            {k: d.resource for k, d in run(composite, cache=model_cache("w")).resources.items()}
        )
        for _ in range(3)
    }
    assert len(outputs) == 1


def test_engines_compose_in_spec_order():
    result = run(replica(engine("zeta"), engine("alpha", leader(), worker())))
    keys = [k for k in result.resources if k.startswith("workload-")]
    assert keys == ["workload-zeta", "workload-alpha"]


def observed_object(result, key: str, *, ready: bool) -> dict:
    """What Crossplane would report for a composed Object, server-set fields included."""
    desired = result.resources[key].resource
    return {
        **desired,
        "metadata": {
            **desired["metadata"],
            "uid": "0000",
            "resourceVersion": "42",
            "managedFields": [{"manager": "crossplane"}],
            "annotations": {"crossplane.io/composition-resource-name": key},
        },
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def test_standalone_member_is_the_default_role():
    member = standalone()
    del member["role"]
    assert manifests(run(replica(engine("main", member))))["workload-main"]["kind"] == "Deployment"
