"""`modelplane render` sees a cluster's serving stack installed: Releases deployed, the stack's
Objects as their controllers report them, and everything else as created."""

from __future__ import annotations

import functools
from typing import Any

from modelplane.compose.registry import default_registry
from modelplane.render import api_server_admission, render_documents
from modelplane.simulate import simulate_observed, simulate_stack

from .support import H100, cluster, condition, created, installing, run

Obj = dict[str, Any]


def test_a_release_is_observed_deployed_and_ready_whatever_the_ready_copies() -> None:
    release = created(installing(cluster()))["cert-manager"]
    for copies in (0, 1):
        observed = simulate_observed({"r": release}, ready_copies=copies)["r"]
        assert observed["status"]["atProvider"]["state"] == "deployed"
        ready = {c["type"]: c["status"] for c in observed["status"]["conditions"]}
        assert ready == {"Ready": "True", "Synced": "True"}


def test_stack_simulation_observes_the_stack_ready_and_leaves_everything_else_as_created() -> None:
    stack = created(installing(cluster()))
    workload = {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"forProvider": {"manifest": {"apiVersion": "v1", "kind": "ConfigMap"}}},
    }
    observed = simulate_stack({**stack, "workload": workload})
    assert observed["workload"] == workload
    result = run(cluster(), observed)
    assert condition(result, "StackReady").status == "True"
    assert {d.ready for d in result.resources.values()} == {"True"}


def test_stack_objects_are_observed_as_their_controllers_report_them() -> None:
    observed = simulate_stack(created(installing(cluster())))
    manifests = {
        k: o["status"]["atProvider"]["manifest"]
        for k, o in observed.items()
        if o["kind"] == "Object"
    }
    established = {
        c["type"]: c["status"] for c in manifests["inference-pool-crd"]["status"]["conditions"]
    }
    assert established["Established"] == "True"
    assert manifests["gateway"]["status"]["addresses"]
    accepted = manifests["fleet-client-validation"]["status"]["ancestors"][0]["conditions"]
    assert accepted[0]["type"] == "Accepted"


def test_a_rendered_cluster_installs_its_stack_and_becomes_ready() -> None:
    ic = cluster()
    docs = render_documents(
        default_registry(), [ic, H100], [], api_server_admission(), simulate_stack
    )
    [rendered] = [d for d in docs if d["kind"] == "InferenceCluster"]
    conditions = {c["type"]: c["status"] for c in rendered["status"]["conditions"]}
    assert conditions["Ready"] == conditions["StackReady"] == "True"
    kinds = {d["kind"] for d in docs}
    assert {"Release", "Object", "Usage", "ClusterProviderConfig"} <= kinds


def test_with_simulated_copies_the_cluster_is_ready_too() -> None:
    simulate = functools.partial(simulate_observed, ready_copies=0)
    docs = render_documents(
        default_registry(), [cluster(), H100], [], api_server_admission(), simulate
    )
    [rendered] = [d for d in docs if d["kind"] == "InferenceCluster"]
    assert {c["type"]: c["status"] for c in rendered["status"]["conditions"]}[
        "StackReady"
    ] == "True"
