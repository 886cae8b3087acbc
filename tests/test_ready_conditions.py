"""Ready is True only when a composite does its job: rendered as Crossplane would write it (the
composite's own readiness, from the function, over its composed resources'), with the condition
that names the problem first among those not True, as `render -o tree` shows it."""

from __future__ import annotations

import copy
import io
from pathlib import Path
from typing import Any

import yaml

from modelplane import output
from modelplane.compose.registry import default_registry
from modelplane.render import api_server_admission, render_documents
from modelplane.simulate import simulate_observed, simulate_stack
from tests.compose.through import run

Obj = dict[str, Any]
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def example(name: str) -> list[Obj]:
    return [
        d
        for p in sorted((EXAMPLES / name).glob("*.yaml"))
        for d in yaml.safe_load_all(p.read_text())
        if d
    ]


def render(docs: list[Obj], ready_copies: int | None = None) -> list[Obj]:
    simulate = (
        simulate_stack
        if ready_copies is None
        else lambda r: simulate_observed(r, ready_copies=ready_copies)
    )
    return render_documents(
        default_registry(), docs, admit=api_server_admission(), simulate=simulate
    )


def find(docs: list[Obj], kind: str, name: str) -> Obj:
    [found] = [
        d
        for d in docs
        if d.get("kind") == kind and d["metadata"].get("name") == name and "status" in d
    ]
    return found


def condition(doc: Obj, type_: str) -> Obj:
    return next(c for c in doc["status"]["conditions"] if c["type"] == type_)


def tree_row(docs: list[Obj], label: str) -> list[str]:
    out = io.StringIO()
    output.print_tree(
        output.tree(
            docs,
            lambda d: default_registry().handles(
                str(d.get("apiVersion", "")), str(d.get("kind", ""))
            ),
        ),
        out,
    )
    [row] = [line.split() for line in out.getvalue().splitlines() if line.startswith(label + " ")]
    return row


def named(docs: list[Obj], kind: str, name: str) -> Obj:
    return next(d for d in docs if d.get("kind") == kind and d["metadata"]["name"] == name)


def test_a_deployment_that_placed_nothing_for_want_of_capacity_is_not_ready() -> None:
    docs = example("fleet-two-classes")
    named(docs, "ModelDeployment", "llama-70b")["spec"]["replicas"] = 50
    md = find(render(docs), "ModelDeployment", "llama-70b")
    assert condition(md, "Ready")["status"] == "False"
    assert condition(md, "ReplicasScheduled")["reason"] == "InsufficientCapacity"


def test_a_deployment_no_cluster_may_take_is_not_ready_and_the_tree_names_why() -> None:
    docs = example("fleet-two-classes")
    md = named(docs, "ModelDeployment", "llama-70b")
    md["spec"]["template"]["spec"]["clusterSelector"] = {"matchLabels": {"region": "nowhere"}}
    rendered = render(docs)
    assert condition(find(rendered, "ModelDeployment", "llama-70b"), "Ready")["status"] == "False"
    assert tree_row(rendered, "ModelDeployment/ml-team/llama-70b")[1:] == [
        "False",
        "NoEligibleCluster",
    ]


def test_the_function_marks_a_deployment_short_of_capacity_not_ready() -> None:
    docs = example("fleet-two-classes")
    md = copy.deepcopy(named(docs, "ModelDeployment", "llama-70b"))
    md["spec"]["replicas"] = 50
    clusters = [d for d in docs if d["kind"] == "InferenceCluster"]
    classes = [d for d in docs if d["kind"] == "InferenceClass"]
    rsp = run(
        md,
        required={
            "inference-clusters": clusters,
            "inference-classes": classes,
            "model-replicas": [],
        },
    )
    assert rsp.composite_ready == "READY_FALSE"
    assert rsp.condition("ReplicasScheduled")[:2] == ("False", "InsufficientCapacity")


def test_a_deployment_placing_every_replica_leaves_readiness_to_its_replicas() -> None:
    docs = example("fleet-two-classes")
    md = named(docs, "ModelDeployment", "llama-70b")
    rsp = run(
        md,
        required={
            "inference-clusters": [d for d in docs if d["kind"] == "InferenceCluster"],
            "inference-classes": [d for d in docs if d["kind"] == "InferenceClass"],
            "model-replicas": [],
        },
    )
    assert rsp.condition("ReplicasScheduled")[0] == "True"
    assert rsp.composite_ready == "READY_UNSPECIFIED"


def test_a_deployment_with_no_cluster_at_all_warns_no_inference_clusters_found() -> None:
    docs = [d for d in example("fleet-two-classes") if d["kind"] != "InferenceCluster"]
    rsp = run(
        named(docs, "ModelDeployment", "llama-70b"),
        required={
            "inference-clusters": [],
            "inference-classes": [d for d in docs if d["kind"] == "InferenceClass"],
            "model-replicas": [],
        },
    )
    assert rsp.composite_ready == "READY_FALSE"
    assert any(
        sev == "Warning" and msg.startswith("No InferenceClusters found") for sev, msg in rsp.events
    )


def test_a_deployment_whose_fleet_vanished_warns_on_every_reconcile_and_keeps_its_replicas() -> (
    None
):
    docs = example("fleet-two-classes")
    md = named(docs, "ModelDeployment", "llama-70b")
    required = {
        "inference-clusters": [d for d in docs if d["kind"] == "InferenceCluster"],
        "inference-classes": [d for d in docs if d["kind"] == "InferenceClass"],
        "model-replicas": [],
    }
    placed = run(md, required=required).resources
    for _ in range(2):
        rsp = run(md, observed=placed, required={**required, "inference-clusters": []})
        assert sorted(rsp.resources) == sorted(placed)
        assert rsp.composite_ready == "READY_FALSE"
        assert [m for s, m in rsp.events if m.startswith("No InferenceClusters found")]


def test_a_cluster_whose_pool_names_a_missing_class_is_not_ready_and_says_class_not_found() -> None:
    docs = example("service-canary")
    cluster = named(docs, "InferenceCluster", "us-east")
    cluster["spec"]["nodePools"][0]["className"] = "h200"
    rendered = render(docs)
    found = find(rendered, "InferenceCluster", "us-east")
    assert condition(found, "Ready")["status"] == "False"
    assert condition(found, "PoolsResolved")["reason"] == "ClassNotFound"
    assert tree_row(rendered, "InferenceCluster/us-east")[1:] == ["False", "ClassNotFound"]


def test_a_ready_cluster_without_replicas_reads_available_not_no_replicas() -> None:
    rendered = render(example("service-canary"))
    assert tree_row(rendered, "InferenceCluster/edge")[1:] == ["True", "Available"]


def test_a_gateway_on_a_missing_cluster_is_not_ready_and_counts_no_such_cluster() -> None:
    docs = example("service-canary")
    named(docs, "InferenceGateway", "main")["spec"]["clusterName"] = "nowhere"
    rendered = render(docs)
    gateway = find(rendered, "InferenceGateway", "main")
    assert condition(gateway, "Ready")["status"] == "False"
    assert condition(gateway, "GatewayReady")["reason"] == "ClusterNotFound"
    out = io.StringIO()
    output.print_tree(
        output.tree(rendered, lambda d: default_registry().handles(d["apiVersion"], d["kind"])),
        out,
    )
    assert out.getvalue().splitlines()[-1].split(", on ")[1].startswith("3 clusters")


def test_a_service_selecting_no_endpoint_is_not_ready() -> None:
    docs = [d for d in example("service-canary") if d["kind"] != "InferenceGateway"]
    for entry in named(docs, "ModelService", "qwen")["spec"]["endpoints"]:
        entry["selector"]["matchLabels"] = {"modelplane.ai/deployment": "nothing"}
    service = find(render(docs, ready_copies=1), "ModelService", "qwen")
    assert condition(service, "Ready")["status"] == "False"
    # Every entry selects no replica either: a typo, named as such (render exits 1).
    assert condition(service, "EndpointsResolved")["reason"] == "EntryMatchesNothing"


def test_a_service_whose_only_gateway_is_on_a_missing_cluster_is_not_ready() -> None:
    docs = example("service-canary")
    named(docs, "InferenceGateway", "main")["spec"]["clusterName"] = "nowhere"
    service = find(render(docs, ready_copies=1), "ModelService", "qwen")
    assert condition(service, "EndpointsResolved")["status"] == "True"
    assert condition(service, "Ready")["status"] == "False"
    assert condition(service, "RoutingReady")["reason"] == "NoGateway"


def test_a_service_routed_on_every_gateway_to_every_entry_is_ready() -> None:
    service = find(render(example("service-canary"), ready_copies=1), "ModelService", "qwen")
    assert condition(service, "Ready")["status"] == "True"


def test_a_cache_no_cluster_is_selected_for_is_not_ready() -> None:
    docs = example("replica-cache")
    cache = named(docs, "ModelCache", "qwen3-8b")
    cache["spec"]["clusterSelector"] = {"matchLabels": {"region": "nowhere"}}
    found = find(render(docs), "ModelCache", "qwen3-8b")
    assert condition(found, "Hydrated")["reason"] == "NoMatchingCluster"
    assert condition(found, "Ready")["status"] == "False"


def test_an_endpoint_on_a_missing_cluster_is_not_ready() -> None:
    endpoint = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelEndpoint",
        "metadata": {"name": "e", "namespace": "ml"},
        "spec": {"url": "http://x/ml/e/v1", "clusterName": "nowhere", "inferencePool": "p"},
    }
    rsp = run(endpoint, required={"cluster": []})
    assert rsp.condition("RoutingReady")[:2] == ("False", "ClusterNotFound")
    assert rsp.composite_ready == "READY_FALSE"


def test_a_replica_whose_cluster_is_missing_composes_nothing_and_is_not_ready() -> None:
    docs = [d for d in example("replica-seed") if d["kind"] != "InferenceCluster"]
    replica = find(render(docs), "ModelReplica", "qwen3-8b-eks-l4-0")
    assert condition(replica, "ModelServing")["status"] == "False"
    assert condition(replica, "Ready")["status"] == "False"
