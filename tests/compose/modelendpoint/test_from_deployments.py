"""A ModelDeployment composes one ModelEndpoint per replica that is serving (ModelServing) on a
cluster that publishes a gateway address, labelled as the public API labels them, and withdraws
it on evidence that either stopped holding; the endpoint names the pool the ModelReplica
composition composes."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from modelplane.compose.modeldeployment import composer as deployment_composer
from modelplane.compose.modeldeployment.composer import (
    CLASSES,
    CLUSTERS,
    REPLICAS,
    compose_deployment,
)
from modelplane.compose.modeldeployment.endpoints import CLASSES as ENDPOINT_CLASSES
from modelplane.compose.modeldeployment.endpoints import CLUSTERS as ENDPOINT_CLUSTERS
from modelplane.compose.modelreplica.routing import pool_name
from modelplane.compose.shared.replicapool import replica_pool_name
from modelplane.composer import Inputs, Result
from tests.compose.through import composed_deployment
from tests.fleet.builders import H100, deployment, fleet, with_condition
from tests.fleet.xrd import errors

Obj = dict[str, Any]


def labelled(md: Obj) -> Obj:
    md = copy.deepcopy(md)
    md["spec"]["template"].setdefault("metadata", {})["labels"] = {"team": "search"}
    return md


def replicas(result: Result, ready: str = "True") -> dict[str, Obj]:
    """The composed replicas as observed next time, Ready (and serving) or not."""
    return {
        k: with_condition(with_condition(d.resource, "Ready", ready), "ModelServing", ready)
        for k, d in result.resources.items()
        if d.resource["kind"] == "ModelReplica"
    }


def endpoints(result: Result) -> dict[str, Obj]:
    return {
        k: d.resource for k, d in result.resources.items() if d.resource["kind"] == "ModelEndpoint"
    }


def test_a_ready_replica_on_a_cluster_with_a_gateway_address_gets_an_endpoint() -> None:
    md = labelled(deployment("qwen", replicas=2))
    first = composed_deployment(md, fleet("east", "west"))
    assert endpoints(first) == {}
    result = composed_deployment(md, fleet("east", "west"), replicas(first), replicas=[])
    found = endpoints(result)
    assert sorted(found) == ["endpoint-0-east", "endpoint-1-west"]
    replica = result.resources["replica-0-east"].resource
    endpoint = found["endpoint-0-east"]
    name = replica["metadata"]["name"]
    assert endpoint["metadata"] == {
        "name": name,
        "namespace": "ml",
        "labels": {
            "team": "search",
            "modelplane.ai/deployment": "qwen",
            "modelplane.ai/deployment-namespace": "ml",
            "modelplane.ai/cluster": "east",
            "modelplane.ai/replica-index": "0",
        },
    }
    assert endpoint["spec"] == {
        "url": f"https://10.0.0.4/ml/{name}/v1",
        "rewritePath": f"/ml/{name}/",
        "clusterName": "east",
        "inferencePool": pool_name(name),
    }
    assert errors("modelendpoints", endpoint) == []


def test_an_endpoint_is_ready_once_observed_ready() -> None:
    md = deployment("qwen")
    observed = replicas(composed_deployment(md, fleet("east")))
    result = composed_deployment(md, fleet("east"), observed, replicas=[])
    assert result.resources["endpoint-0-east"].ready == "False"
    observed["endpoint-0-east"] = with_condition(
        endpoints(result)["endpoint-0-east"], "Ready", "True"
    )
    assert (
        composed_deployment(md, fleet("east"), observed, replicas=[])
        .resources["endpoint-0-east"]
        .ready
        == "True"
    )


def test_a_replica_not_ready_gets_no_endpoint_and_loses_the_one_it_had() -> None:
    md = deployment("qwen")
    first = composed_deployment(md, fleet("east"))
    serving = composed_deployment(md, fleet("east"), replicas(first), replicas=[])
    observed = {**replicas(first, ready="False"), **endpoints(serving)}
    assert endpoints(composed_deployment(md, fleet("east"), observed, replicas=[])) == {}


def test_a_cluster_whose_gateway_is_not_ready_loses_its_endpoints() -> None:
    md = deployment("qwen")
    observed = replicas(composed_deployment(md, fleet("east")))
    [east] = fleet("east")
    del east["status"]["gateway"]["address"]
    east = with_condition(east, "GatewayReady", "False")
    assert endpoints(composed_deployment(md, [east], observed, replicas=[])) == {}


def test_until_the_fleet_is_read_endpoints_are_kept_as_they_are() -> None:
    md = deployment("qwen")
    first = composed_deployment(md, fleet("east"))
    observed = {
        **replicas(first),
        **endpoints(composed_deployment(md, fleet("east"), replicas(first), replicas=[])),
    }
    held = compose_deployment(Inputs(composite=md, observed=observed))
    assert sorted(endpoints(held)) == ["endpoint-0-east"]


def test_the_endpoints_read_the_deployments_own_fleet_requirements() -> None:
    assert ENDPOINT_CLUSTERS == deployment_composer.CLUSTERS
    assert ENDPOINT_CLASSES == deployment_composer.CLASSES


def test_with_no_cluster_or_class_listed_endpoints_are_held_as_they_are() -> None:
    md = deployment("qwen")
    first = composed_deployment(md, fleet("east"))
    observed = {
        **replicas(first),
        **endpoints(composed_deployment(md, fleet("east"), replicas(first), replicas=[])),
    }
    for clusters, classes in (([], [H100]), (fleet("east"), [])):
        required = {CLUSTERS: clusters, CLASSES: classes, REPLICAS: []}
        held = compose_deployment(Inputs(composite=md, required=required, observed=observed))
        assert endpoints(held) == {"endpoint-0-east": observed["endpoint-0-east"]}


@given(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=63).filter(
        lambda s: s[0].isalnum() and s[-1].isalnum()
    )
)
def test_the_pool_an_endpoint_names_is_the_one_the_replica_composes(replica: str) -> None:
    assert replica_pool_name(replica) == pool_name(replica)


def test_a_cluster_not_listed_or_listed_without_status_keeps_the_endpoints_there() -> None:
    md = deployment("qwen")
    first = composed_deployment(md, fleet("east"))
    observed = {
        **replicas(first),
        **endpoints(composed_deployment(md, fleet("east"), replicas(first), replicas=[])),
    }
    [east] = fleet("east")
    unwritten = {k: v for k, v in east.items() if k != "status"}
    result = composed_deployment(md, [unwritten], observed, replicas=[])
    assert endpoints(result) == {"endpoint-0-east": observed["endpoint-0-east"]}
