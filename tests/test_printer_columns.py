"""`kubectl get` shows what a person scans for: each printer column's JSONPath read from a
rendered composite gives the value the column promises."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from modelplane.compose.inferencecluster.waves import revision
from modelplane.compose.inferencegateway.shards import shard_name, shard_of
from tests.test_ready_conditions import example, find, named, render

APIS = Path(__file__).resolve().parents[1] / "apis"
_FILTER = re.compile(r"^\.status\.conditions\[\?\(@\.type=='(?P<type>\w+)'\)\]\.(?P<field>\w+)$")


def columns(plural: str) -> dict[str, str]:
    xrd = yaml.safe_load((APIS / plural / "definition.yaml").read_text())
    [version] = xrd["spec"]["versions"]
    return {c["name"]: c["jsonPath"] for c in version["additionalPrinterColumns"]}


def read(obj: dict[str, Any], path: str) -> Any:
    """The JSONPath subset the columns use: dotted fields, and a condition by type."""
    m = _FILTER.match(path)
    if m:
        found = [c for c in obj["status"]["conditions"] if c["type"] == m["type"]]
        return found[0].get(m["field"]) if found else None
    value: Any = obj
    for part in path.strip(".").split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def row(obj: dict[str, Any], plural: str) -> dict[str, Any]:
    return {name: read(obj, path) for name, path in columns(plural).items()}


def test_a_deployment_shows_desired_placed_serving_why_not_placed_and_its_rollout() -> None:
    docs = example("fleet-two-classes")
    named(docs, "ModelDeployment", "llama-70b")["spec"]["replicas"] = 40
    md = find(render(docs, ready_copies=1), "ModelDeployment", "llama-70b")
    assert row(md, "modeldeployments") == {
        "DESIRED": 40,
        "PLACED": 4,
        "SERVING": 4,
        "SCHEDULED": "InsufficientCapacity",
        "ROLLOUT": "Complete",
        "AUTOSCALING": None,
    }


def test_an_autoscaled_deployment_shows_its_autoscalers_state() -> None:
    docs = example("fleet-two-classes")
    named(docs, "ModelDeployment", "llama-70b")["spec"]["autoscaling"] = {
        "maxReplicas": 4,
        "targets": {"waitingRequestsPerReplica": 4},
    }
    md = find(render(docs, ready_copies=1), "ModelDeployment", "llama-70b")
    assert row(md, "modeldeployments")["AUTOSCALING"] == "NoMetricsEndpoint"


def test_a_cluster_shows_its_stack_state_and_whether_its_pools_resolve() -> None:
    docs = example("service-canary")
    named(docs, "InferenceCluster", "us-east")["spec"]["nodePools"][0]["className"] = "h200"
    cluster = find(render(docs), "InferenceCluster", "us-east")
    shown = row(cluster, "inferenceclusters")
    assert shown["STACK-STATE"] == "Installed"
    assert shown["POOLS"] == "ClassNotFound"
    assert shown["GATEWAY"]


def test_a_cluster_shows_the_stack_revision_it_runs() -> None:
    cluster = find(render(example("service-canary")), "InferenceCluster", "us-east")
    assert row(cluster, "inferenceclusters")["STACK-REVISION"] == revision()


def test_a_gateway_shows_why_it_does_not_serve() -> None:
    docs = example("service-canary")
    named(docs, "InferenceGateway", "main")["spec"]["clusterName"] = "nowhere"
    gateway = find(render(docs), "InferenceGateway", "main")
    assert row(gateway, "inferencegateways")["STATUS"] == "ClusterNotFound"


def test_a_service_shows_its_endpoints_and_routing_state() -> None:
    service = find(render(example("service-canary"), ready_copies=1), "ModelService", "qwen")
    shown = row(service, "modelservices")
    assert (shown["ENDPOINTS"], shown["ROUTING"], shown["READY-ENDPOINTS"]) == (
        "Resolved",
        "Accepted",
        3,
    )


def test_a_gateway_shard_shows_its_gateway_how_many_clusters_and_whether_its_hops_exist() -> None:
    docs = render(example("service-canary"), ready_copies=1)
    shard = find(docs, "InferenceGatewayShard", shard_name("main", shard_of("us-east")))
    assert row(shard, "inferencegatewayshards") == {
        "GATEWAY": "main",
        "CLUSTERS": 1,
        "STATUS": "HopsCreated",
    }
