"""Which callers may use a model, on the real API servers: a gateway with ``spec.auth``, a caller
Secret labelled for a team, and a ModelService whose ``spec.callers`` names one caller and
selects the team's compose, on the gateway's cluster, the service's SecurityPolicy allowing
exactly those callers and its BackendTrafficPolicy answering the 403, each admitted by Envoy
Gateway v1.8.1's CRDs there; the control plane refuses callers naming nobody, naming the field.
Envoy itself does not run in this tier: what the proxy does with them is held by
tests/conformance/test_envoy_gateway_authorization.py.

As in test_front_door_auth.py, the cert-manager Certificate CRD is applied so the gateway
composes whole; the service selects no endpoint (as in test_front_door_models.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from e2e import control, pki
from e2e.environment import Environment
from modelplane.compose.modelservice.callers import CALLER_HEADER
from modelplane.kube.names import unique_label
from tests.e2e.conftest import (
    ROOT,
    add_fleet,
    documents,
    eventually,
    guide_cluster,
    namespace,
    retire,
)

pytestmark = pytest.mark.e2e

CLUSTER = "callers-a"
GATEWAY = "callers-front"
TLS_SECRET = "callers-front-tls"
CALLERS = "callers-search"
LABELS = {"e2e.modelplane.ai/callers": "true"}
NAMESPACE = "callers"
NAME = "qwen"


def front_door() -> list[dict[str, Any]]:
    """docs/getting-started/frontdoor.yaml with auth, a caller Secret of team search, and the
    service open to caller ops and to team search."""
    gateway, service = documents(ROOT / "docs/getting-started/frontdoor.yaml")
    gateway["metadata"] = {"name": GATEWAY}
    gateway["spec"]["clusterName"] = CLUSTER
    gateway["spec"]["tls"] = {"secretRef": {"name": TLS_SECRET}}
    gateway["spec"]["auth"] = {"callerSecretSelector": {"matchLabels": LABELS}}
    service["metadata"] = {"name": NAME, "namespace": NAMESPACE}
    service["spec"]["endpoints"][0]["selector"]["matchLabels"] = {"e2e.modelplane.ai/none": NAME}
    service["spec"]["callers"] = {"names": ["ops"], "selector": {"matchLabels": {"team": "search"}}}
    hostname = gateway["spec"]["hostname"]
    cert = pki.leaf(pki.authority("e2e-callers-front"), hostname, dns=(hostname,), server=True)
    meta = {"namespace": control.NAMESPACE}
    secrets = [
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
            "metadata": {"name": CALLERS, "labels": LABELS | {"team": "search"}, **meta},
            "stringData": {"search-prod": "e2e-caller-key"},
        },
    ]
    return [*secrets, gateway, service]


@pytest.fixture(scope="module")
def front(e2e: Environment) -> Iterator[Environment]:
    classes = documents(ROOT / "docs/getting-started/classes.yaml")
    add_fleet(e2e, [*classes, guide_cluster(CLUSTER)])
    e2e.control.kubectl(
        "wait", f"inferencecluster/{CLUSTER}", "--for=condition=Ready", "--timeout=300s"
    )
    e2e.control.apply(documents(ROOT / "tests/upstream/crds/cert-manager.io_certificates.yaml"))
    namespace(e2e, NAMESPACE)
    e2e.control.apply(front_door())
    try:
        yield e2e
    finally:
        e2e.control.kubectl("-n", NAMESPACE, "delete", "modelservice", NAME, check=False)
        e2e.control.kubectl("delete", "inferencegateway", GATEWAY, "--timeout=300s", check=False)
        e2e.control.kubectl("-n", control.NAMESPACE, "delete", "secret", CALLERS, check=False)
        retire(e2e, {NAMESPACE}, {CLUSTER})


def on_host(env: Environment, kind: str, name: str) -> dict[str, Any]:
    items = env.workloads[CLUSTER].get(kind, "--all-namespaces")["items"]
    [found] = [i for i in items if i["metadata"]["name"] == name]
    return found


def test_the_authorization_allowing_the_services_callers_is_admitted(front: Environment) -> None:
    name = unique_label(GATEWAY, NAMESPACE, NAME, "callers")

    def admitted() -> None:
        policy = on_host(front, "securitypolicies.gateway.envoyproxy.io", name)
        [rule] = policy["spec"]["authorization"]["rules"]
        assert rule["principal"]["headers"] == [
            {"name": CALLER_HEADER, "values": ["ops", "search-prod"]}
        ]
        assert policy["spec"]["mergeType"] == "StrategicMerge"

    eventually(admitted, timeout=300, interval=2)


def test_the_403_body_is_admitted(front: Environment) -> None:
    name = unique_label(GATEWAY, NAMESPACE, NAME, "denied")

    def admitted() -> None:
        policy = on_host(front, "backendtrafficpolicies.gateway.envoyproxy.io", name)
        assert policy["spec"]["responseOverride"][0]["source"] == "Local"

    eventually(admitted, timeout=300, interval=2)


def test_callers_naming_nobody_are_refused_naming_the_field(front: Environment) -> None:
    service = front_door()[-1]
    service["metadata"]["name"] = "nobody"
    service["spec"]["callers"] = {}
    refused = front.control.kubectl(
        "apply", "--dry-run=server", "-f", "-", input=yaml.safe_dump(service), check=False
    )
    assert refused.returncode != 0
    assert "spec.callers" in refused.stderr
