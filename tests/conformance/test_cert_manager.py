"""cert-manager v1.21.1: what an ACME HTTP-01 challenge needs from the front Gateway."""

from __future__ import annotations

import pytest

from modelplane.dataplane import Fabric
from tests.conformance.fleets import SERVED, fleet


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
    f = fleet(name)
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
