"""ModelEndpoint behaviours the public implementation's function tests assert, checked on ours
(docs/design/parity.md lists them)."""

from __future__ import annotations

import pytest

from modelplane.compose.modelendpoint.composer import compose_endpoint
from tests.compose.modelendpoint.test_endpoint import external, routing
from tests.compose.modelservice.kit import external_endpoint, manifests


@pytest.mark.parametrize("url", ["not-a-url", "https://host:abc/v1"])
def test_a_url_without_a_host_or_with_a_bad_port_composes_nothing_and_warns(url: str) -> None:
    result = compose_endpoint(external(external_endpoint("bad", url, ready=False)))
    assert result.resources == {}
    assert routing(result) == ("False", "InvalidURL")
    assert [e.severity for e in result.events] == ["Warning"]


def test_an_http_endpoint_by_ip_address_is_a_backend_dialling_that_address() -> None:
    url = "http://[2606:4700::1111]:8080/v1"
    result = compose_endpoint(external(external_endpoint("v6", url, ready=False)))
    backends = [m for m in manifests(result).values() if m["kind"] == "Backend"]
    assert backends
    assert {str(b["spec"]["endpoints"]) for b in backends} == {
        str([{"ip": {"address": "2606:4700::1111", "port": 8080}}])
    }
