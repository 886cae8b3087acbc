"""Callers who authenticate at an InferenceGateway, on the real API servers: a gateway with
``spec.auth`` and a caller Secret on the control plane compose, on the gateway's cluster, the
Secret's copy holding its entries (patched in by provider-kubernetes, never in a manifest), the
API-key SecurityPolicy naming it and the ClientTrafficPolicy removing the identity header, each
admitted by Envoy Gateway v1.8.1's CRDs there. Envoy itself does not run in this tier: what the
proxy does with them is held by tests/conformance/test_envoy_gateway_api_key.py.

The front door's client certificate is a cert-manager Certificate on the control plane, which
the tier does not otherwise install: its CRD is applied here so the gateway composes whole (no
controller issues it; nothing here waits for it)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

from e2e import control, pki
from e2e.environment import Environment
from modelplane.compose.inferencegateway.callers import copy_name
from tests.e2e.conftest import (
    ROOT,
    add_fleet,
    documents,
    eventually,
    guide_cluster,
    retire,
)

pytestmark = pytest.mark.e2e

CLUSTER = "auth-a"
GATEWAY = "auth-front"
TLS_SECRET = "auth-front-tls"
CALLERS = "auth-callers"
LABELS = {"e2e.modelplane.ai/callers": "true"}
KEY = "e2e-caller-key"


def gateway() -> dict[str, Any]:
    (gw, _service) = documents(ROOT / "docs/getting-started/frontdoor.yaml")
    gw["metadata"] = {"name": GATEWAY}
    gw["spec"]["clusterName"] = CLUSTER
    gw["spec"]["tls"] = {"secretRef": {"name": TLS_SECRET}}
    gw["spec"]["auth"] = {"callerSecretSelector": {"matchLabels": LABELS}}
    return gw


def secrets(hostname: str) -> list[dict[str, Any]]:
    cert = pki.leaf(pki.authority("e2e-auth-front"), hostname, dns=(hostname,), server=True)
    meta = {"namespace": control.NAMESPACE}
    return [
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/tls",
            "metadata": {"name": TLS_SECRET, **meta},
            "stringData": {"tls.crt": cert.cert.decode(), "tls.key": cert.key.decode()},
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "metadata": {"name": CALLERS, "labels": LABELS, **meta},
            "stringData": {"search-prod": KEY},
        },
    ]


@pytest.fixture(scope="module")
def front(e2e: Environment) -> Iterator[Environment]:
    classes = documents(ROOT / "docs/getting-started/classes.yaml")
    add_fleet(e2e, [*classes, guide_cluster(CLUSTER)])
    e2e.control.kubectl(
        "wait", f"inferencecluster/{CLUSTER}", "--for=condition=Ready", "--timeout=300s"
    )
    e2e.control.apply(documents(ROOT / "tests/upstream/crds/cert-manager.io_certificates.yaml"))
    gw = gateway()
    e2e.control.apply([*secrets(gw["spec"]["hostname"]), gw])
    try:
        yield e2e
    finally:
        e2e.control.kubectl("delete", "inferencegateway", GATEWAY, "--timeout=300s", check=False)
        e2e.control.kubectl("-n", control.NAMESPACE, "delete", "secret", CALLERS, check=False)
        retire(e2e, set(), {CLUSTER})


def on_host(env: Environment, kind: str) -> list[dict[str, Any]]:
    items = env.workloads[CLUSTER].get(kind, "--all-namespaces")["items"]
    return [i for i in items if i["metadata"]["name"].startswith(GATEWAY)]


def test_the_caller_secret_is_copied_to_the_gateways_cluster_with_its_entries(
    front: Environment,
) -> None:
    def copied() -> None:
        [copy] = [
            s
            for s in on_host(front, "secrets")
            if s["metadata"]["name"] == copy_name(GATEWAY, CALLERS)
        ]
        assert copy["type"] == "Opaque"
        assert base64.b64decode(copy["data"]["search-prod"]).decode() == KEY

    eventually(copied, timeout=300, interval=2)


def test_the_api_key_security_policy_is_admitted_naming_the_copy(front: Environment) -> None:
    def admitted() -> None:
        [policy] = on_host(front, "securitypolicies.gateway.envoyproxy.io")
        api_key = policy["spec"]["apiKeyAuth"]
        assert [r["name"] for r in api_key["credentialRefs"]] == [copy_name(GATEWAY, CALLERS)]
        assert api_key["forwardClientIDHeader"] == "x-modelplane-caller"
        assert api_key["sanitize"] is True

    eventually(admitted, timeout=300, interval=2)


def test_the_identity_header_guard_is_admitted(front: Environment) -> None:
    def admitted() -> None:
        [guard] = on_host(front, "clienttrafficpolicies.gateway.envoyproxy.io")
        remove = guard["spec"]["headers"]["earlyRequestHeaders"]["remove"]
        assert remove == ["x-modelplane-caller"]

    eventually(admitted, timeout=300, interval=2)
