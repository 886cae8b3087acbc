"""The front door and the serving stack agree: what the InferenceGateway and the ModelService
compose relies on exactly what every InferenceCluster's stack installs.

Both sides are rendered together from examples/service-canary (a gateway on the gateway-only
cluster ``edge``, a service over replicas on ``us-east`` and ``eu-west``), then each wiring
point of the fleet hop is followed from one side to the object it names on the other: the
listener the service's routes attach to, the issuer of the front gateway's client certificate
(on the control plane), the name each cluster's server certificate carries, the CA that
validates client certificates,
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
    """Manifests of ``kind`` applied to ``cluster``, composed by ``owner`` when given (a
    gateway's own, or by one of its InferenceGatewayShards)."""
    owners = {owner} | {
        d["metadata"]["name"]
        for d in docs
        if d.get("kind") == "InferenceGatewayShard" and d["spec"]["gatewayName"] == owner
    }
    out = []
    for d in docs:
        if d.get("kind") != "Object" or d["spec"]["providerConfigRef"]["name"] != cluster:
            continue
        if owner is not None and d["metadata"]["labels"]["crossplane.io/composite"] not in owners:
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


def copied(docs: list[Obj], cluster: str, secret: str) -> dict[str, tuple[str, str, str]]:
    """Where each key of the Secret ``secret`` on ``cluster`` is patched in from on the control
    plane: key -> (namespace, Secret, key)."""
    [obj] = [
        d
        for d in docs
        if d.get("kind") == "Object"
        and d["spec"]["providerConfigRef"]["name"] == cluster
        and d["spec"]["forProvider"]["manifest"]["kind"] == "Secret"
        and d["spec"]["forProvider"]["manifest"]["metadata"]["name"] == secret
    ]
    out = {}
    for ref in obj["spec"]["references"]:
        source = ref["patchesFrom"]
        key = ref["toFieldPath"].removeprefix("data[").removesuffix("]")
        read = source["fieldPath"].removeprefix("data[").removesuffix("]")
        out[key] = (source["namespace"], source["name"], read)
    return out


def issued(docs: list[Obj], kind: str) -> dict[tuple[str, str], Obj]:
    """cert-manager objects composed on the control plane, by namespace and name."""
    return {
        (d["metadata"]["namespace"], d["metadata"]["name"]): d
        for d in docs
        if d.get("kind") == kind and d.get("apiVersion") == "cert-manager.io/v1"
    }


def certificate_of(docs: list[Obj], namespace: str, secret: str) -> Obj:
    [found] = [
        c
        for (ns, _), c in issued(docs, "Certificate").items()
        if ns == namespace and c["spec"]["secretName"] == secret
    ]
    return found


def test_each_fleet_listener_serves_the_certificate_for_the_name_the_front_verifies(
    rendered: list[Obj],
) -> None:
    backends = {b["spec"]["tls"]["sni"]: b for b in on(rendered, "edge", "Backend", "main")}
    for cluster in WORKLOAD_CLUSTERS:
        gateway = one(rendered, cluster, "Gateway", cluster)
        [fleet] = [x for x in gateway["spec"]["listeners"] if x["name"] == "fleet"]
        [secret] = fleet["tls"]["certificateRefs"]
        keys = copied(rendered, cluster, secret["name"])
        namespace, leaf, _ = keys["tls.crt"]
        assert keys["tls.key"] == (namespace, leaf, "tls.key")
        certificate = certificate_of(rendered, namespace, leaf)
        hostname = cluster_status(rendered, cluster)["gateway"]["fleetHostname"]
        assert certificate["spec"]["dnsNames"] == [hostname]
        assert hostname in backends
        [policy] = [
            p
            for p in on(rendered, "edge", "BackendTLSPolicy", "main")
            if p["spec"]["targetRefs"][0]["name"] == backends[hostname]["metadata"]["name"]
        ]
        assert policy["spec"]["validation"]["hostname"] == hostname


def test_the_front_presents_a_client_certificate_from_the_ca_the_clusters_trust(
    rendered: list[Obj],
) -> None:
    backends = on(rendered, "edge", "Backend", "main")
    [secret] = {b["spec"]["tls"]["clientCertificateRef"]["name"] for b in backends}
    keys = copied(rendered, "edge", secret)
    namespace, leaf, _ = keys["tls.crt"]
    client = certificate_of(rendered, namespace, leaf)
    assert "client auth" in client["spec"]["usages"]
    issuer = issued(rendered, "Issuer")[(namespace, client["spec"]["issuerRef"]["name"])]
    ca = issuer["spec"]["ca"]["secretName"]
    # The front verifies clusters by the fleet CA's certificate, never holding its key.
    assert keys["ca.crt"] == (namespace, ca, "tls.crt")
    for cluster in WORKLOAD_CLUSTERS:
        policy = one(rendered, cluster, "ClientTrafficPolicy", cluster)
        [target] = policy["spec"]["targetRefs"]
        assert target["sectionName"] == "fleet"
        [trust] = policy["spec"]["tls"]["clientValidation"]["caCertificateRefs"]
        assert copied(rendered, cluster, trust["name"]) == {"ca.crt": (namespace, ca, "tls.crt")}


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


def test_a_fleet_listener_accepts_only_front_gateways_client_certificates(
    rendered: list[Obj],
) -> None:
    # Envoy Gateway v1.9.0 internal/gatewayapi/clienttrafficpolicy.go: subjectAltNames.dnsNames
    # become the listener's match_typed_subject_alt_names (helpers.go irStringMatch: Suffix).
    client = next(
        c for c in issued(rendered, "Certificate").values() if "client auth" in c["spec"]["usages"]
    )
    servers = [
        c for c in issued(rendered, "Certificate").values() if "server auth" in c["spec"]["usages"]
    ]
    for cluster in WORKLOAD_CLUSTERS:
        policy = one(rendered, cluster, "ClientTrafficPolicy", cluster)
        [match] = policy["spec"]["tls"]["clientValidation"]["subjectAltNames"]["dnsNames"]
        assert match["type"] == "Suffix"
        assert all(name.endswith(match["value"]) for name in client["spec"]["dnsNames"])
        for server in servers:
            assert not any(name.endswith(match["value"]) for name in server["spec"]["dnsNames"])
