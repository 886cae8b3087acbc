"""A ModelService by model name, on the real API servers: an InferenceGateway on a cluster and a
ModelService with ``spec.modelName`` compose, on the gateway's cluster, the service's
AIGatewayRoute matching ``x-ai-eg-model: <namespace>/<service>``, admitted by Envoy AI Gateway
v1.1.0's CRD there; and the control plane refuses a modelName the engines could not serve,
naming the field. Envoy and the AI Gateway's controller do not run in this tier: what they do
with the route is held by tests/conformance/test_envoy_ai_gateway_routing.py, and the lanes'
AIServiceBackends (a service with ready endpoints) by tests/compose/modelservice/test_models.py.

The service selects no endpoint, so its route has no backend yet; the gateway's certificates
would come from cert-manager, which the tier does not run, and the service needs only the
gateway's spec and its host cluster's status (as in test_rollout_routed.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from e2e import control, pki
from e2e.environment import Environment
from modelplane.compose.modelservice.models import MODEL_HEADER, model_route_name
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

CLUSTER = "models-a"
GATEWAY = "models-front"
TLS_SECRET = "models-front-tls"
NAMESPACE = "models"
NAME = "qwen"
SERVED = "Qwen/Qwen3-8B"


def front_door() -> list[dict[str, Any]]:
    """docs/getting-started/frontdoor.yaml on this cluster, the service naming its model."""
    gateway, service = documents(ROOT / "docs/getting-started/frontdoor.yaml")
    gateway["metadata"] = {"name": GATEWAY}
    gateway["spec"]["clusterName"] = CLUSTER
    gateway["spec"]["tls"] = {"secretRef": {"name": TLS_SECRET}}
    service["metadata"] = {"name": NAME, "namespace": NAMESPACE}
    service["spec"]["endpoints"][0]["selector"]["matchLabels"] = {"e2e.modelplane.ai/none": NAME}
    service["spec"]["modelName"] = SERVED
    hostname = gateway["spec"]["hostname"]
    cert = pki.leaf(pki.authority("e2e-models-front"), hostname, dns=(hostname,), server=True)
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/tls",
        "metadata": {"name": TLS_SECRET, "namespace": control.NAMESPACE},
        "stringData": {"tls.crt": cert.cert.decode(), "tls.key": cert.key.decode()},
    }
    return [secret, gateway, service]


@pytest.fixture(scope="module")
def front(e2e: Environment) -> Iterator[Environment]:
    classes = documents(ROOT / "docs/getting-started/classes.yaml")
    add_fleet(e2e, [*classes, guide_cluster(CLUSTER)])
    e2e.control.kubectl(
        "wait", f"inferencecluster/{CLUSTER}", "--for=condition=Ready", "--timeout=300s"
    )
    namespace(e2e, NAMESPACE)
    e2e.control.apply(front_door())
    try:
        yield e2e
    finally:
        e2e.control.kubectl("-n", NAMESPACE, "delete", "modelservice", NAME, check=False)
        e2e.control.kubectl("delete", "inferencegateway", GATEWAY, "--timeout=300s", check=False)
        retire(e2e, {NAMESPACE}, {CLUSTER})


def test_the_services_model_route_is_admitted_on_the_gateways_cluster(front: Environment) -> None:
    name = model_route_name(GATEWAY, NAMESPACE, NAME)

    def admitted() -> None:
        routes = front.workloads[CLUSTER].get("aigatewayroutes.aigateway.envoyproxy.io", "-A")
        [route] = [r for r in routes["items"] if r["metadata"]["name"] == name]
        [rule] = route["spec"]["rules"]
        [match] = rule["matches"]
        assert match["headers"][0]["name"] == MODEL_HEADER
        assert match["headers"][0]["value"] == f"{NAMESPACE}/{NAME}"
        assert route["spec"]["parentRefs"][0]["name"] == f"{GATEWAY}-front"

    eventually(admitted, timeout=300, interval=2)


def test_a_model_name_with_a_space_is_refused_naming_the_field(front: Environment) -> None:
    [_, _, service] = front_door()
    service["metadata"]["name"] = "spaced"
    service["spec"]["modelName"] = "Qwen 3"
    refused = front.control.kubectl(
        "apply", "--dry-run=server", "-f", "-", input=yaml.safe_dump(service), check=False
    )
    assert refused.returncode != 0
    assert "spec.modelName" in refused.stderr
