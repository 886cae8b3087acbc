"""A managed cluster's teardown waits for the gateway's load balancer to be gone.

Envoy Gateway v1.8.1 puts the Gateway behind a Service of type LoadBalancer; the cloud's service
controller removes the load balancer before it releases the Service. An Object observes that
Service and deletes it with the cluster, and the kubeconfig, the system pool, the cluster and
the network are held (Usages) until that Object is gone. Deletion order is derived as Crossplane
v2.3.4 resolves Usages (``waves``), from what the FunctionRunner composes: a composed Usage being
deleted keeps its ``of`` in use while a Get still finds its ``by``, a terminating one included
(internal/controller/protection/usage/reconciler.go, "Waiting for the using resource"), and
replays the refused deletion of ``of`` once ``by`` is gone."""

from __future__ import annotations

import copy

import pytest

from modelplane.compose.inferencecluster.composer import CLASSES, REPLICAS
from modelplane.compose.inferencecluster.managed import CLOUDS
from modelplane.compose.inferencecluster.managed.load_balancer import (
    LOAD_BALANCER,
    envoy_service_name,
)
from tests.compose import through
from tests.compose.inferencecluster.managed import (
    managed,
    observed_as_ready,
    provisioned,
    run,
    wave_of,
    waves,
)
from tests.compose.inferencecluster.support import cluster

SOURCES = sorted(CLOUDS)
KUBECONFIG_WRITERS = {"EKS": "cluster-auth", "GKE": "cluster", "AKS": "cluster"}
NETWORK_KINDS = ("VPC", "Subnet", "Network", "Subnetwork", "VirtualNetwork", "ResourceGroup")
SYSTEM_POOLS = ("nodegroup-system", "nodepool-system")


def _service(composed: dict) -> dict:
    return composed[LOAD_BALANCER]["spec"]["forProvider"]["manifest"]


def _kept_by_the_load_balancer(composed: dict, source: str) -> list[str]:
    """The kubeconfig's writer, the system pool, the control plane and the network."""
    return [
        k
        for k, o in composed.items()
        if k in (KUBECONFIG_WRITERS[source], "cluster", *SYSTEM_POOLS) or o["kind"] in NETWORK_KINDS
    ]


@pytest.mark.parametrize("source", SOURCES)
def test_the_cluster_and_its_network_outlive_the_gateways_load_balancer(source: str) -> None:
    composed = provisioned(managed(source)).resources
    wave = wave_of(waves(composed))
    kept = _kept_by_the_load_balancer(composed, source)
    assert kept
    assert all(wave[LOAD_BALANCER] < wave[k] for k in kept), sorted(
        k for k in kept if wave[k] <= wave[LOAD_BALANCER]
    )


@pytest.mark.parametrize("source", SOURCES)
def test_the_service_is_deleted_only_once_the_gateway_is_gone(source: str) -> None:
    # Envoy Gateway re-creates a deleted Service for as long as its Gateway exists.
    composed = provisioned(managed(source)).resources
    wave = wave_of(waves(composed))
    assert wave["gateway"] < wave[LOAD_BALANCER]


@pytest.mark.parametrize("source", SOURCES)
def test_a_terminating_service_keeps_its_object_and_everything_it_holds(source: str) -> None:
    ic = managed(source)
    composed = provisioned(ic).resources
    observed = observed_as_ready(provisioned(ic))
    terminating = copy.deepcopy(observed[LOAD_BALANCER])
    service = terminating["status"]["atProvider"]["manifest"]
    service["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    service["metadata"]["finalizers"] = ["service.kubernetes.io/load-balancer-cleanup"]
    observed[LOAD_BALANCER] = terminating
    again = run(ic, observed).resources
    holding = {k for k, o in composed.items() if o["kind"] == "Usage" and LOAD_BALANCER in k}
    assert holding
    assert {k: again.get(k) for k in (LOAD_BALANCER, *holding)} == {
        k: composed[k] for k in (LOAD_BALANCER, *holding)
    }


@pytest.mark.parametrize("source", SOURCES)
def test_a_service_not_observed_yet_is_still_waited_for(source: str) -> None:
    # An Object whose Service does not exist yet reports no observation: no evidence that a
    # load balancer is not coming, so the Object and its Usages stay composed.
    ic = managed(source)
    observed = observed_as_ready(provisioned(ic))
    observed[LOAD_BALANCER] = {
        k: v for k, v in copy.deepcopy(observed[LOAD_BALANCER]).items() if k != "status"
    }
    again = run(ic, observed).resources
    assert LOAD_BALANCER in again
    held = [k for k, o in again.items() if o["kind"] == "Usage"]
    assert any(k.startswith(f"{LOAD_BALANCER}-uses-") for k in held)


def test_the_object_observes_the_service_envoy_gateway_creates_for_the_gateway() -> None:
    """envoyproxy/gateway v1.8.1: the Gateway's infrastructure is named for ``<namespace>/<name>``
    (internal/gatewayapi/translator.go ``gwInfraIR.Proxy.Name = irKey``, helpers.go
    ``irStringKey``) in the controller's namespace (internal/infrastructure/kubernetes/
    proxy_infra.go ``GetResourceNamespace``; the chart's values set no GatewayNamespace mode), and
    the Service takes ``ResourceRender.Name()`` unless the EnvoyProxy names one (ours does not):
    ``envoy-`` + ``utils.GetHashedName(name, 48)`` (proxy/resource.go, internal/utils/misc.go)."""
    composed = provisioned(managed("EKS")).resources
    assert _service(composed)["metadata"] == {
        "name": "envoy-modelplane-system-inference-gateway-5dbfd6c0",
        "namespace": "envoy-gateway-system",
    }


@pytest.mark.parametrize(
    ("namespace", "name", "expected"),
    [
        ("team-ns", "gw", "envoy-team-ns-gw-2854eaa4"),
        # Past 48 characters the readable part is cut, and a hyphen it would end on dropped.
        (
            "a-very-long-gateway-namespace-name",
            "and-a-long-gateway-name",
            "envoy-a-very-long-gateway-namespace-name-and-a-long-ga-5ac55beb",
        ),
        ("n" * 47, "gw", f"envoy-{'n' * 47}-c2f0e0ef"),
    ],
)
def test_envoy_gateways_service_name_keeps_48_characters_and_a_hash(
    namespace: str, name: str, expected: str
) -> None:
    assert envoy_service_name(namespace, name) == expected


def test_the_object_never_creates_or_changes_the_service_and_deletes_it_with_the_cluster() -> None:
    """crossplane-runtime (v2.0.0-rc.1, provider-kubernetes v1.2.1's; the same in v2.3.3)
    pkg/reconciler/managed/policies.go supports ``[Observe, Delete]`` ("like ObserveOnly, but the
    external resource is deleted"); reconciler.go, on deletion, calls Delete while Observe finds
    the object and removes the finalizer only once it does not. provider-kubernetes v1.2.1
    internal/controller/namespaced/object/object.go Observe reports a terminating object (it is
    still found) as existing."""
    composed = provisioned(managed("GKE")).resources
    assert composed[LOAD_BALANCER]["spec"]["managementPolicies"] == ["Observe", "Delete"]


@pytest.mark.parametrize(
    "spec",
    [
        {"gateway": {"mode": "External"}},
        {"servingStack": {"envoyGateway": {"mode": "External"}}},
        # Orphan waits on nothing on the cluster (it may be gone already).
        {"servingStack": {"deletionPolicy": "Orphan"}},
    ],
    ids=["external-gateway", "external-envoy-gateway", "orphaned-stack"],
)
def test_no_service_is_observed_where_teardown_does_not_remove_the_gateway(spec: dict) -> None:
    composed = provisioned(managed("AKS", **spec)).resources
    assert LOAD_BALANCER not in composed


def test_an_existing_cluster_observes_no_load_balancer() -> None:
    # Its network is not Modelplane's to delete.
    ic = cluster("west")
    required = {CLASSES: [], REPLICAS: []}
    first = through.run(ic, None, required)
    assert LOAD_BALANCER not in through.run(ic, observed_as_ready(first), required).resources
