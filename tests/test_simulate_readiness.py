"""A readiness query is evaluated over the fields of the object it selects, with the verdict
it has over the whole object."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane import simulate
from modelplane.compose.inferencecluster import gateway, releases
from modelplane.compose.inferencegateway import composer as inferencegateway
from modelplane.compose.modelcache import composer as modelcache
from modelplane.compose.modelreplica import picker, routing, workloads
from modelplane.compose.shared import frontdoor
from modelplane.structs import frozen

QUERIES = {
    "gateway address": gateway.GATEWAY_READY_QUERY,
    "class accepted": gateway.CLASS_ACCEPTED_QUERY,
    "policy accepted": gateway.POLICY_ACCEPTED_QUERY,
    "front gateway": inferencegateway.GATEWAY_READY_QUERY,
    "certificate": inferencegateway.CERTIFICATE_READY_QUERY,
    "route programmed": frontdoor.ROUTE_PROGRAMMED_QUERY,
    "picker available": picker.AVAILABLE_QUERY,
    "route accepted": routing.ROUTE_ACCEPTED_QUERY,
    "crd established": releases.CRD_ESTABLISHED,
    "claim bound": modelcache.CLAIM_BOUND,
    "job complete": modelcache.JOB_COMPLETE,
    "deployment ready": workloads.DEPLOYMENT_READY["celQuery"],
    "leaderworkerset ready": workloads.LEADERWORKERSET_READY["celQuery"],
    "podcliqueset ready": workloads.PODCLIQUESET_READY["celQuery"],
    "gangs ready": workloads.GANGS_READY["celQuery"],
}
CONDITIONS = [
    {"type": t, "status": s, "reason": "R"}
    for t in ("Accepted", "Programmed", "Ready", "Available", "ResolvedRefs")
    for s in ("True",)
]
STATUSES: list[dict[str, Any] | None] = [
    None,
    {},
    {"conditions": CONDITIONS},
    {"conditions": [dict(c, status="False") for c in CONDITIONS]},
    {"addresses": [{"value": "10.0.0.1"}], "availableReplicas": 1, "replicas": 1},
    {"phase": "Bound", "succeeded": 1, "readyReplicas": 1, "updatedReplicas": 1},
    {
        "parents": [{"conditions": CONDITIONS}],
        "ancestors": [{"conditions": CONDITIONS}],
        "availableReplicas": 1,
        "conditions": CONDITIONS,
    },
]


def whole(query: str, obj: dict[str, Any]) -> bool:
    """The verdict over the whole object, as provider-kubernetes evaluates it."""
    return simulate._compiled(query).eval(data={"object": obj}).value() is True


@pytest.mark.parametrize("status", STATUSES, ids=range(len(STATUSES)))
@pytest.mark.parametrize("name", sorted(QUERIES))
def test_every_readiness_query_has_the_verdict_it_has_over_the_whole_object(
    name: str, status: dict[str, Any] | None
) -> None:
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Thing",
        "metadata": {"name": "t", "generation": 1},
        "spec": {"replicas": 1, "big": [{"k": i} for i in range(100)]},
    }
    if status is not None:
        obj["status"] = status
    assert simulate.evaluate(QUERIES[name], obj) == whole(QUERIES[name], obj)


def test_a_query_reads_the_fields_it_selects_and_nothing_else() -> None:
    assert simulate._fields_read("has(object.status) && object.spec.replicas > 0") == {
        "status",
        "spec",
    }
    query = "object.spec.replicas == 2 && object.metadata.name == 'web'"
    obj = frozen({"metadata": {"name": "web"}, "spec": {"replicas": 2}, "status": {}})
    assert simulate.evaluate(query, obj)


@pytest.mark.parametrize(
    "query",
    [
        "size(object) > 2",
        "object['status'] != null",
        "object.exists(k, k == 'status')",
        "object.all(k, k != 'spec')",
        "has(object.status) && 'object' != ''",
    ],
    ids=["whole", "index", "macro exists", "macro all", "word in a string"],
)
def test_a_query_that_may_read_more_than_fields_is_given_the_whole_object(query: str) -> None:
    assert simulate._fields_read(query) is None
    obj = {"metadata": {"name": "a"}, "spec": {}, "status": {}}
    assert simulate.evaluate(query, obj) == whole(query, obj)
