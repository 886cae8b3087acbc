"""cert-manager starts after the Gateway API CRDs: its Release is composed once the CRD is
observed established, and from then on always."""

from __future__ import annotations

from modelplane.compose.inferencecluster.components import CERT_MANAGER, GATEWAY_API_BUNDLE
from modelplane.simulate import simulate_observed

from .support import cluster, condition, created, installing, run


def before_the_crd() -> dict:
    """Observed right after the ProviderConfigs and the stack's first resources were created."""
    ic = cluster()
    return created(run(ic, created(run(ic))))


def test_cert_manager_is_not_composed_before_the_gateway_api_crd_is_served() -> None:
    result = run(cluster(), before_the_crd())
    assert GATEWAY_API_BUNDLE in result.resources
    assert CERT_MANAGER not in result.resources


def test_the_stack_says_cert_manager_waits_for_the_gateway_api_crd() -> None:
    message = condition(run(cluster(), before_the_crd()), "StackReady").message
    assert (
        "cert-manager (cert-manager waits for CRD gateways.gateway.networking.k8s.io "
        "established)" in message
    )


def test_cert_manager_is_composed_once_the_gateway_api_crd_is_established() -> None:
    observed = before_the_crd()
    observed.update(simulate_observed({GATEWAY_API_BUNDLE: observed[GATEWAY_API_BUNDLE]}, 1))
    assert CERT_MANAGER in run(cluster(), observed).resources


def test_a_composed_cert_manager_stays_when_the_crd_is_not_reported_established() -> None:
    observed = created(installing(cluster()))
    assert CERT_MANAGER in observed
    assert CERT_MANAGER in run(cluster(), observed).resources


def test_cert_manager_runs_with_gateway_api_support() -> None:
    values = installing(cluster()).resources[CERT_MANAGER].resource["spec"]["forProvider"]
    assert values["values"]["config"] == {"gatewayAPI": {"enabled": True}}
