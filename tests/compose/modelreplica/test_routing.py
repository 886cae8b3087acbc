"""The routing path: InferencePool over the serving pods, HTTPRoute from the cluster's gateway."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.compose.modelreplica import picker, routing
from modelplane.compose.modelreplica.labelsets import component, pod_labels, serving_selector
from modelplane.kube.names import dns_label
from tests.compose.modelreplica.routing_fixtures import (
    cluster,
    context,
    manifest,
    prefill_decode,
    replica,
    standalone,
)
from tests.properties import examples

LONG = "a" * 53 + "-0123456789"  # 63 characters, as the ModelDeployment composer may generate


def test_composes_the_pool_the_route_and_every_picker_object() -> None:
    assert set(routing.compose_routing(context())) == {
        "inference-pool",
        "http-route",
        "epp-service-account",
        "epp-role",
        "epp-role-binding",
        "epp-config",
        "epp-deployment",
        "epp-service",
        "epp-disruption-budget",
    }


@pytest.mark.parametrize(
    "replica_obj",
    [replica(), prefill_decode()],
    ids=["Unified", "PrefillDecode"],
)
def test_pool_selects_exactly_the_serving_pods_in_both_modes(replica_obj: dict) -> None:
    pool = manifest(routing.compose_routing(context(replica_obj))["inference-pool"])
    assert pool["spec"]["selector"] == {
        "matchLabels": serving_selector(replica_obj["metadata"]["name"])
    }


def test_pool_never_selects_gang_workers() -> None:
    selector = serving_selector("r")
    worker = pod_labels("r", standalone("e"), "Worker")
    leader = pod_labels("r", standalone("e"), "Leader")
    assert not selector.items() <= worker.items()
    assert selector.items() <= leader.items()


def test_pool_never_selects_the_picker_pods() -> None:
    selector = serving_selector("r")
    assert not selector.items() <= component("r", picker.COMPONENT).items()


@pytest.mark.parametrize(("serving", "port"), [({}, 8000), ({"port": 9100}, 9100)])
def test_pool_targets_the_serving_port(serving: dict, port: int) -> None:
    pool = manifest(routing.compose_routing(context(replica(serving=serving)))["inference-pool"])
    assert pool["spec"]["targetPorts"] == [{"number": port}]


def test_pool_hands_endpoint_picking_to_the_picker_service() -> None:
    objs = routing.compose_routing(context())
    pool = manifest(objs["inference-pool"])
    service = manifest(objs["epp-service"])
    assert pool["spec"]["endpointPickerRef"] == {
        "name": service["metadata"]["name"],
        "port": {"number": 9002},
        "failureMode": "FailOpen",
    }
    assert 9002 in [p["port"] for p in service["spec"]["ports"]]


def test_route_matches_the_replica_path_and_rewrites_it_to_root() -> None:
    rule = manifest(routing.compose_routing(context())["http-route"])["spec"]["rules"][0]
    assert rule["matches"] == [
        {"path": {"type": "PathPrefix", "value": "/ml-team/qwen3-8b-eks-l4-0/"}}
    ]
    assert rule["filters"] == [
        {
            "type": "URLRewrite",
            "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}},
        }
    ]


def test_route_disables_the_request_timeout_so_streams_survive() -> None:
    rule = manifest(routing.compose_routing(context())["http-route"])["spec"]["rules"][0]
    assert rule["timeouts"] == {"request": "0s"}


def test_route_sends_to_the_pool() -> None:
    objs = routing.compose_routing(context())
    rule = manifest(objs["http-route"])["spec"]["rules"][0]
    assert rule["backendRefs"] == [
        {
            "group": "inference.networking.k8s.io",
            "kind": "InferencePool",
            "name": manifest(objs["inference-pool"])["metadata"]["name"],
        }
    ]


@pytest.mark.parametrize(
    ("gateway", "expected"),
    [
        (None, ("inference-gateway", "modelplane-system")),
        ({"address": "10.0.0.1"}, ("inference-gateway", "modelplane-system")),
        ({"name": "edge", "namespace": "gateways"}, ("edge", "gateways")),
        ({"name": "edge"}, ("edge", "modelplane-system")),
    ],
    ids=["no-gateway-status", "address-only", "published", "name-only"],
)
def test_route_attaches_to_the_clusters_gateway(gateway: dict | None, expected: tuple) -> None:
    route = manifest(
        routing.compose_routing(context(cluster_obj=cluster(gateway=gateway)))["http-route"]
    )
    ref = route["spec"]["parentRefs"][0]
    assert (ref["name"], ref["namespace"]) == expected
    assert (ref["group"], ref["kind"]) == ("gateway.networking.k8s.io", "Gateway")


def test_every_object_lands_in_the_replicas_namespace_through_the_clusters_provider_config() -> (
    None
):
    for key, obj in routing.compose_routing(context()).items():
        assert obj["spec"]["providerConfigRef"] == {
            "kind": "ClusterProviderConfig",
            "name": "eks-l4-kubeconfig",
        }, key
        assert manifest(obj)["metadata"]["namespace"] == "ml-team", key
        assert (
            manifest(obj)["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "modelplane"
        ), key


@pytest.mark.parametrize("name", ["r", "qwen3-8b-eks-l4-0", LONG])
def test_every_name_is_a_dns_label_of_at_most_63_characters(name: str) -> None:
    for key, obj in routing.compose_routing(context(replica(name))).items():
        remote = manifest(obj)["metadata"]["name"]
        assert len(remote) <= 63, key
        assert remote == dns_label(remote), key
        assert len(obj["metadata"]["name"]) <= 63, key


def test_short_names_read_as_the_replica_name_plus_a_role() -> None:
    objs = routing.compose_routing(context(replica("qwen3-8b-eks-l4-0")))
    assert manifest(objs["inference-pool"])["metadata"]["name"] == "qwen3-8b-eks-l4-0-pool"
    assert manifest(objs["epp-service"])["metadata"]["name"] == "qwen3-8b-eks-l4-0-epp"
    assert manifest(objs["http-route"])["metadata"]["name"] == "qwen3-8b-eks-l4-0-route"


def test_long_replica_names_that_share_a_prefix_get_distinct_routing_names() -> None:
    other = "a" * 53 + "-9876543210"
    assert routing.picker_name(LONG) != routing.picker_name(other)
    assert routing.pool_name(LONG) != routing.pool_name(other)


@pytest.mark.parametrize("engine", ["epp", "pool", "route"])
def test_routing_names_never_equal_a_workload_name_even_for_an_engine_named_like_a_suffix(
    engine: str,
) -> None:
    # A LeaderWorkerSet creates a Service named like itself: the picker's must differ.
    for name in ("r", LONG):
        workload = dns_label(name, engine)
        assert workload not in {
            routing.picker_name(name),
            routing.pool_name(name),
            routing.route_name(name),
        }


def test_route_waits_for_the_gateway_to_accept_it_and_resolve_the_pool() -> None:
    obj = routing.compose_routing(context())["http-route"]
    assert obj["spec"]["readiness"] == {
        "policy": "DeriveFromCelQuery",
        "celQuery": routing.ROUTE_ACCEPTED_QUERY,
    }


def test_composition_is_deterministic() -> None:
    assert routing.compose_routing(context(prefill_decode())) == routing.compose_routing(
        context(prefill_decode())
    )


_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?){0,3}"


@settings(max_examples=examples(200), deadline=None)
@given(st.from_regex(_SUBDOMAIN, fullmatch=True).filter(lambda n: len(n) <= 253))
def test_any_replica_name_gives_routing_names_that_are_dns_labels(name: str) -> None:
    for key, obj in routing.compose_routing(context(replica(name))).items():
        remote = manifest(obj)["metadata"]["name"]
        assert len(remote) <= 63 and remote == dns_label(remote), (key, remote)
        for value in manifest(obj)["metadata"]["labels"].values():
            assert len(value) <= 63, (key, value)


@settings(max_examples=examples(100), deadline=None)
@given(st.from_regex(_SUBDOMAIN, fullmatch=True), st.from_regex(_SUBDOMAIN, fullmatch=True))
def test_distinct_replicas_get_distinct_routing_names(a: str, b: str) -> None:
    if a != b:
        assert routing.picker_name(a) != routing.picker_name(b)
        assert routing.pool_name(a) != routing.pool_name(b)
