"""Envoy AI Gateway v1.1.0, the extension server Envoy Gateway calls for InferencePool backends."""

from __future__ import annotations

import pytest

from tests.conformance.fleets import NAMES, rendered_fleet

POOL = ("inference.networking.k8s.io", "InferencePool")


@pytest.mark.parametrize("name", NAMES)
def test_no_route_rule_names_more_than_one_inference_pool(name: str) -> None:
    """envoyproxy/ai-gateway v1.1.0, internal/extensionserver/post_route_modify.go and
    post_cluster_modify.go: "at most one inferencepool can be referenced per route rule" is an
    error, and Envoy Gateway v1.8.1 (internal/xds/translator/translator.go, the extension manager
    not failing open; internal/xds/runner/runner.go) then publishes no xDS for the whole gateway:
    every route on it stays at its last good configuration."""
    crowded = [
        (r.cluster, r.manifest["metadata"]["name"], i)
        for r in rendered_fleet(name).remote("HTTPRoute")
        for i, rule in enumerate(r.manifest["spec"].get("rules") or [])
        if sum((b.get("group"), b.get("kind")) == POOL for b in rule.get("backendRefs") or []) > 1
    ]
    assert crowded == []


@pytest.mark.parametrize("name", NAMES)
def test_a_rule_naming_an_inference_pool_names_nothing_else(name: str) -> None:
    """The same files: the extension turns the whole rule's cluster into an ORIGINAL_DST cluster
    steered by the endpoint picker's header, so any other backend in the rule would be sent to
    the picker's choice of pod."""
    mixed = [
        (r.cluster, r.manifest["metadata"]["name"], i)
        for r in rendered_fleet(name).remote("HTTPRoute")
        for i, rule in enumerate(r.manifest["spec"].get("rules") or [])
        if any((b.get("group"), b.get("kind")) == POOL for b in rule.get("backendRefs") or [])
        and len(rule["backendRefs"]) > 1
    ]
    assert mixed == []


@pytest.mark.parametrize("name", NAMES)
def test_no_single_picker_pod_stands_between_the_gateway_and_the_engines(name: str) -> None:
    """internal/extensionserver/inferencepool.go: the picker's ext_proc filter is built with
    ``FailureModeAllow: false`` whatever the pool's ``endpointPickerRef.failureMode`` says, and
    the rule's cluster is ORIGINAL_DST: with no picker reachable, every request of the replica
    fails. So every picker runs more than one pod, under a disruption budget."""
    pickers = [
        r
        for r in rendered_fleet(name).remote("Deployment")
        if r.manifest["spec"]["selector"]["matchLabels"].get("modelplane.ai/component")
        == "endpoint-picker"
    ]
    assert pickers or not rendered_fleet(name).composites("ModelReplica")
    budgets = {
        (r.cluster, r.manifest["metadata"]["namespace"], r.manifest["metadata"]["name"])
        for r in rendered_fleet(name).remote("PodDisruptionBudget")
    }
    for p in pickers:
        meta = p.manifest["metadata"]
        assert p.manifest["spec"]["replicas"] >= 2, meta["name"]
        assert (p.cluster, meta["namespace"], meta["name"]) in budgets, meta["name"]
