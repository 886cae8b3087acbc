"""cert-manager v1.21.1: what an ACME HTTP-01 challenge needs from the front Gateway and from
cert-manager itself.

The front door's issuers solve HTTP-01 with ``gatewayHTTPRoute``. That the solver's HTTPRoute
has a listener to attach to (httproute.go) is not enough: cert-manager creates it only with
Gateway API support on, which is off unless its configuration turns it on, and on only if the
Gateway API CRDs were served when it started."""

from __future__ import annotations

import pytest

from modelplane.compose.inferencecluster.components import (
    CERT_MANAGER,
    GATEWAY_API_BUNDLE,
    GATEWAY_API_CRD,
)
from modelplane.compose.inferencecluster.prerequisites import AFTER
from modelplane.dataplane import Fabric
from tests.conformance.fleets import SERVED, rendered_fleet


@pytest.mark.parametrize("name", SERVED)
def test_a_front_door_certified_by_an_issuer_can_answer_http01_and_serves_nothing_else_there(
    name: str,
) -> None:
    """cert-manager/cert-manager v1.21.1, pkg/issuer/acme/http/httproute.go: the solver's
    HTTPRoute is created in the challenge's namespace (the Certificate's: the front Gateway's)
    with the parentRefs of the issuer's ``gatewayHTTPRoute``, for the hostname, and the ACME
    server fetches it over plain HTTP on port 80. So a front Gateway whose certificate comes
    from an issuer has a port-80 listener for its hostname admitting its own namespace's routes,
    and no route Modelplane composes attaches there."""
    f = rendered_fleet(name)
    fab = Fabric(f.docs)
    for ig in f.composites("InferenceGateway"):
        if "issuerRef" not in ig["spec"]["tls"]:
            continue
        published = ig["status"]["gateway"]
        [listener] = [
            li
            for li in fab.listeners(published["clusterName"])
            if li.gateway["metadata"]["name"] == published["name"] and li.spec["port"] == 80
        ]
        assert listener.spec["protocol"] == "HTTP"
        assert listener.spec["hostname"] == ig["spec"]["hostname"]
        assert listener.spec["allowedRoutes"]["namespaces"] == {"from": "Same"}
        assert fab.attached(listener) == []


def cert_manager_values(name: str) -> dict:
    f = rendered_fleet(name)
    releases = [
        r
        for r in f.docs
        if r.get("kind") == "Release"
        and r["spec"]["forProvider"]["chart"]["name"] == "cert-manager"
    ]
    assert releases, name
    return releases[0]["spec"]["forProvider"]["values"]


@pytest.mark.parametrize("name", SERVED)
def test_cert_manager_runs_with_gateway_api_support_so_its_http01_solver_can_present(
    name: str,
) -> None:
    """cert-manager/cert-manager v1.21.1:
    internal/apis/config/controller/v1alpha1/defaults.go: ``defaultEnableGatewayAPI = false``,
    taken when the ControllerConfiguration's ``gatewayAPI.enabled`` (types.go,
    ``GatewayAPIConfig`` json ``gatewayAPI``) is unset; pkg/issuer/acme/http/http.go (Present):
    a ``gatewayHTTPRoute`` solver without it fails "gateway api is not enabled", so no Secret and
    no HTTPS listener. deploy/charts/cert-manager/templates/controller-config.yaml writes the
    chart's ``config`` value as that ControllerConfiguration (apiVersion and kind defaulted) and
    templates/deployment.yaml passes it with ``--config``."""
    assert cert_manager_values(name)["config"] == {"gatewayAPI": {"enabled": True}}


def test_cert_manager_is_installed_only_after_the_gateway_api_crds_are_served() -> None:
    """cert-manager/cert-manager v1.21.1, pkg/controller/context.go (buildClients): with Gateway
    API support on, the controller asks discovery for gateway.networking.k8s.io/v1 once at
    start and exits ("the Gateway API CRDs do not seem to be present") when it is not served;
    it never looks again (``GatewaySolverEnabled`` is fixed from that answer). Envoy Gateway's
    chart brings those CRDs, so cert-manager's Release waits for them."""
    assert AFTER[CERT_MANAGER][0] == GATEWAY_API_BUNDLE
    assert GATEWAY_API_CRD == "gateways.gateway.networking.k8s.io"
