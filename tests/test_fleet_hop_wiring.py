"""The front door and the serving stack agree: what the InferenceGateway and the ModelService
compose relies on exactly what every InferenceCluster's stack installs.

Both sides are rendered together from examples/service-canary (a gateway on the gateway-only
cluster ``edge``, a service over replicas on ``us-east`` and ``eu-west``), then each wiring
point of the fleet hop is followed from one side to the object it names on the other: the
listener the service's routes attach to, the issuer of the front gateway's client certificate,
the name each cluster's server certificate carries, the CA that validates client certificates,
the GatewayClass, and the address each backend dials.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from modelplane import manifests
from modelplane.compose.registry import default_registry
from modelplane.render import api_server_admission, render_documents
from modelplane.simulate import simulate_observed

Obj = dict[str, Any]
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "service-canary"
WORKLOAD_CLUSTERS = ("eu-west", "us-east")


@pytest.fixture(scope="module")
def rendered() -> list[Obj]:
    inputs = [m.obj for m in manifests.load([str(EXAMPLE)])]
    simulate = functools.partial(simulate_observed, ready_copies=1)
    return render_documents(
        default_registry(), inputs, admit=api_server_admission(), simulate=simulate
    )


def on(docs: list[Obj], cluster: str, kind: str, owner: str | None = None) -> list[Obj]:
    """Manifests of ``kind`` applied to ``cluster``, composed by ``owner`` when given."""
    out = []
    for d in docs:
        if d.get("kind") != "Object" or d["spec"]["providerConfigRef"]["name"] != cluster:
            continue
        if owner is not None and d["metadata"]["labels"]["crossplane.io/composite"] != owner:
            continue
        manifest = d["spec"]["forProvider"]["manifest"]
        if manifest["kind"] == kind:
            out.append(manifest)
    return out


def one(docs: list[Obj], cluster: str, kind: str, owner: str | None = None) -> Obj:
    [found] = on(docs, cluster, kind, owner)
    return found


def cluster_status(docs: list[Obj], name: str) -> Obj:
    [found] = [d for d in docs if d["kind"] == "InferenceCluster" and d["metadata"]["name"] == name]
    return found["status"]


def test_the_services_routes_attach_to_each_clusters_fleet_listener(rendered: list[Obj]) -> None:
    for cluster in WORKLOAD_CLUSTERS:
        [route] = [r for r in on(rendered, cluster, "HTTPRoute", "qwen")]
        gateway = one(rendered, cluster, "Gateway", cluster)
        [parent] = route["spec"]["parentRefs"]
        assert (parent["name"], parent["namespace"]) == (
            gateway["metadata"]["name"],
            gateway["metadata"]["namespace"],
        )
        [listener] = [x for x in gateway["spec"]["listeners"] if x["name"] == parent["sectionName"]]
        assert (listener["protocol"], listener["port"]) == ("HTTPS", 443)
        assert listener["allowedRoutes"]["namespaces"]["from"] == "All"


def test_each_fleet_listener_serves_the_certificate_for_the_name_the_front_verifies(
    rendered: list[Obj],
) -> None:
    backends = {b["spec"]["tls"]["sni"]: b for b in on(rendered, "edge", "Backend", "main")}
    for cluster in WORKLOAD_CLUSTERS:
        gateway = one(rendered, cluster, "Gateway", cluster)
        [fleet] = [x for x in gateway["spec"]["listeners"] if x["name"] == "fleet"]
        [secret] = fleet["tls"]["certificateRefs"]
        [certificate] = [
            c
            for c in on(rendered, cluster, "Certificate", cluster)
            if c["spec"]["secretName"] == secret["name"]
        ]
        hostname = cluster_status(rendered, cluster)["gateway"]["fleetHostname"]
        assert certificate["spec"]["dnsNames"] == [hostname]
        assert hostname in backends
        [policy] = [
            p
            for p in on(rendered, "edge", "BackendTLSPolicy", "main")
            if p["spec"]["targetRefs"][0]["name"] == backends[hostname]["metadata"]["name"]
        ]
        assert policy["spec"]["validation"]["hostname"] == hostname


def test_the_front_presents_a_client_certificate_from_the_issuer_the_clusters_trust(
    rendered: list[Obj],
) -> None:
    issuers = {i["metadata"]["name"]: i for i in on(rendered, "edge", "Issuer", "edge")}
    [client] = [
        c
        for c in on(rendered, "edge", "Certificate", "main")
        if "client auth" in c["spec"].get("usages", [])
    ]
    issuer = issuers[client["spec"]["issuerRef"]["name"]]
    assert client["spec"]["issuerRef"]["kind"] == "Issuer"
    assert client["metadata"]["namespace"] == issuer["metadata"]["namespace"]
    for backend in on(rendered, "edge", "Backend", "main"):
        assert (
            backend["spec"]["tls"]["clientCertificateRef"]["name"] == client["spec"]["secretName"]
        )
    for cluster in WORKLOAD_CLUSTERS:
        # Every cluster's fleet issuer, and the CA its listener validates clients against, are
        # the same fleet CA the edge's issuer signs with.
        their = one(rendered, cluster, "Issuer", cluster)
        assert their["spec"]["ca"]["secretName"] == issuer["spec"]["ca"]["secretName"]
        policy = one(rendered, cluster, "ClientTrafficPolicy", cluster)
        [target] = policy["spec"]["targetRefs"]
        assert target["sectionName"] == "fleet"
        [ca] = policy["spec"]["tls"]["clientValidation"]["caCertificateRefs"]
        assert ca["name"] == issuer["spec"]["ca"]["secretName"]


def test_the_front_gateway_uses_the_class_its_hosts_stack_installs(rendered: list[Obj]) -> None:
    [front] = on(rendered, "edge", "Gateway", "main")
    [installed] = on(rendered, "edge", "GatewayClass", "edge")
    assert front["spec"]["gatewayClassName"] == installed["metadata"]["name"]
    assert cluster_status(rendered, "edge")["gateway"]["className"] == installed["metadata"]["name"]


def test_each_backend_dials_its_own_clusters_gateway_address(rendered: list[Obj]) -> None:
    dialled = {}
    for backend in on(rendered, "edge", "Backend", "main"):
        [endpoint] = backend["spec"]["endpoints"]
        target = endpoint.get("fqdn") or endpoint.get("ip")
        dialled[backend["spec"]["tls"]["sni"]] = target.get("hostname") or target.get("address")
    for cluster in WORKLOAD_CLUSTERS:
        status = cluster_status(rendered, cluster)["gateway"]
        assert dialled[status["fleetHostname"]] == status["address"]
    assert len(set(dialled.values())) == len(dialled)
