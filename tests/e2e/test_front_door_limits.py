"""Budgets per caller, on the real API servers: a gateway with ``spec.auth`` and ``spec.limits``
composes, on its cluster, the BackendTrafficPolicy counting each caller's requests and tokens,
admitted by Envoy Gateway v1.8.1's CRD there, and the identity guard also removing the model
header (a per-model budget). Envoy itself does not run in this tier, nor Envoy Gateway's
rate-limit service: what the proxy counts is held by tests/conformance/test_envoy_rate_limits.py.

Set up as tests/e2e/test_front_door_auth.py is (its own cluster, gateway and caller Secret)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from e2e import control, pki
from e2e.environment import Environment
from tests.e2e.conftest import ROOT, add_fleet, documents, eventually, guide_cluster, retire

pytestmark = pytest.mark.e2e

CLUSTER = "limits-a"
GATEWAY = "limits-front"
TLS_SECRET = "limits-front-tls"
CALLERS = "limits-callers"
LABELS = {"e2e.modelplane.ai/limit-callers": "true"}
LIMITS = [
    {"callers": {"names": ["search-prod"]}, "requestsPerMinute": 60, "perModel": True},
    {"tokensPerMinute": {"input": 1000, "output": 500, "total": 1500}},
]


def gateway() -> dict[str, Any]:
    (gw, _service) = documents(ROOT / "docs/getting-started/frontdoor.yaml")
    gw["metadata"] = {"name": GATEWAY}
    gw["spec"]["clusterName"] = CLUSTER
    gw["spec"]["tls"] = {"secretRef": {"name": TLS_SECRET}}
    gw["spec"]["auth"] = {"callerSecretSelector": {"matchLabels": LABELS}}
    gw["spec"]["limits"] = LIMITS
    return gw


def secrets(hostname: str) -> list[dict[str, Any]]:
    cert = pki.leaf(pki.authority("e2e-limits-front"), hostname, dns=(hostname,), server=True)
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
            "stringData": {"search-prod": "e2e-limits-key"},
        },
    ]


@pytest.fixture(scope="module")
def front(e2e: Environment) -> Iterator[Environment]:
    add_fleet(e2e, [*documents(ROOT / "docs/getting-started/classes.yaml"), guide_cluster(CLUSTER)])
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


def test_the_rate_limit_policy_is_admitted_with_a_rule_per_rate(front: Environment) -> None:
    def admitted() -> None:
        [policy] = on_host(front, "backendtrafficpolicies.gateway.envoyproxy.io")
        rules = policy["spec"]["rateLimit"]["global"]["rules"]
        assert [r["limit"]["requests"] for r in rules] == [60, 1000, 500, 1500]
        assert all(r["shared"] for r in rules)

    eventually(admitted, timeout=300, interval=2)


def test_the_guard_removes_the_model_header_for_a_per_model_budget(front: Environment) -> None:
    def admitted() -> None:
        [guard] = on_host(front, "clienttrafficpolicies.gateway.envoyproxy.io")
        remove = guard["spec"]["headers"]["earlyRequestHeaders"]["remove"]
        assert remove == ["x-modelplane-caller", "x-ai-eg-model"]

    eventually(admitted, timeout=300, interval=2)
