"""The objects of a front door: on the gateway's host cluster, in the namespace of that cluster's
inference Gateway; and on the control plane, its fleet client certificate (issued there, so the
fleet CA's key never reaches a workload cluster)."""

from __future__ import annotations

from modelplane.compose.shared.frontdoor import (
    CERT_MANAGER_API_VERSION,
    CERT_MANAGER_GROUP,
    CONTROL_NAMESPACE,
    ENVOY_API_VERSION,
    ENVOY_GROUP,
    FLEET_PORT,
    FLEET_PRIVATE_KEY,
    FRONT_LISTENER,
    FRONT_PORT,
    GATEWAY_API_VERSION,
    GATEWAY_GROUP,
    ClusterGateway,
    FleetPKI,
    backend_endpoint,
    client_identity,
    client_secret,
    cluster_backend_name,
    front_gateway_name,
    front_tls_secret,
    secret_copy_references,
)
from modelplane.compose.shared.remote import managed_metadata, secret_copy
from modelplane.kube.objects import Obj

ACME_LISTENER = "acme"
"""Port 80 for the hostname, only for an ACME HTTP-01 solver's route: nothing else attaches."""


def front_gateway(
    gateway: str, hostname: str, host: ClusterGateway, class_name: str, acme: bool = False
) -> Obj:
    """One HTTPS listener for ``hostname``. Only routes in its own namespace attach (Modelplane
    composes them there), so a tenant cannot put a route on the fleet's front door. The client
    certificate it presents on the hop to every cluster is set here, the Gateway API's own place
    for it (each Backend names it too, see ``cluster_backend``).

    With ``acme`` (a certificate from an issuer), an HTTP listener ``acme`` on port 80 too: an
    HTTP-01 solver's route (cert-manager v1.21.1 creates it in the Certificate's namespace, this
    Gateway's, with the parentRefs the issuer's ``gatewayHTTPRoute`` names) answers the challenge
    there. Every Modelplane route names the ``https`` section, so nothing else is served on it."""
    secret_ref = {"group": "", "kind": "Secret"}
    same_namespace = {
        "namespaces": {"from": "Same"},
        "kinds": [{"group": GATEWAY_GROUP, "kind": "HTTPRoute"}],
    }
    listeners: list[Obj] = [
        {
            "name": FRONT_LISTENER,
            "protocol": "HTTPS",
            "port": FRONT_PORT,
            "hostname": hostname,
            "tls": {
                "mode": "Terminate",
                "certificateRefs": [{**secret_ref, "name": front_tls_secret(gateway)}],
            },
            "allowedRoutes": same_namespace,
        }
    ]
    if acme:
        listeners.append(
            {
                "name": ACME_LISTENER,
                "protocol": "HTTP",
                "port": 80,
                "hostname": hostname,
                "allowedRoutes": same_namespace,
            }
        )
    return {
        "apiVersion": GATEWAY_API_VERSION,
        "kind": "Gateway",
        "metadata": managed_metadata(front_gateway_name(gateway), host.namespace),
        "spec": {
            "gatewayClassName": class_name,
            "listeners": listeners,
            "tls": {
                "backend": {"clientCertificateRef": {**secret_ref, "name": client_secret(gateway)}}
            },
        },
    }


def tls_secret_copy(gateway: str, host: ClusterGateway) -> Obj:
    """The front listener's certificate, copied from the user's Secret (data patched in by the
    Object's references, never written into the manifest)."""
    return secret_copy(front_tls_secret(gateway), host.namespace, "kubernetes.io/tls")


def tls_references(secret: str) -> list[Obj]:
    """The user's certificate, read from the gateway's own control-plane namespace only."""
    return secret_copy_references(
        CONTROL_NAMESPACE, [(secret, "tls.crt", "tls.crt"), (secret, "tls.key", "tls.key")]
    )


def tls_certificate(gateway: str, hostname: str, host: ClusterGateway, issuer: Obj) -> Obj:
    """The front listener's certificate, issued by the user's cert-manager issuer."""
    return {
        "apiVersion": CERT_MANAGER_API_VERSION,
        "kind": "Certificate",
        "metadata": managed_metadata(front_tls_secret(gateway), host.namespace),
        "spec": {
            "secretName": front_tls_secret(gateway),
            "dnsNames": [hostname],
            "issuerRef": {
                "name": str(issuer["name"]),
                "kind": str(issuer.get("kind") or "ClusterIssuer"),
                "group": str(issuer.get("group") or CERT_MANAGER_GROUP),
            },
            "privateKey": dict(FLEET_PRIVATE_KEY),
        },
    }


def client_certificate(gateway: str, pki: FleetPKI) -> Obj:
    """The client certificate the front gateway presents to every cluster's fleet listener,
    issued on the control plane by its host cluster's fleet Issuer (the CA key stays there), under
    the name of its copy on the host."""
    leaf = client_secret(gateway)
    return {
        "apiVersion": CERT_MANAGER_API_VERSION,
        "kind": "Certificate",
        "metadata": managed_metadata(leaf, pki.namespace),
        "spec": {
            "secretName": leaf,
            "dnsNames": [client_identity(gateway)],
            "usages": ["client auth", "digital signature"],
            "issuerRef": {"name": pki.issuer, "kind": "Issuer", "group": CERT_MANAGER_GROUP},
            "privateKey": dict(FLEET_PRIVATE_KEY),
        },
    }


def client_secret_copy(gateway: str, host: ClusterGateway) -> Obj:
    """The client certificate on the host cluster, with the fleet's trust bundle as ``ca.crt``
    (what the hop verifies each cluster's server certificate against); data patched in by the
    Object's references (``client_references``), never written into the manifest."""
    return secret_copy(client_secret(gateway), host.namespace, "kubernetes.io/tls")


def client_references(gateway: str, pki: FleetPKI) -> list[Obj]:
    leaf = client_secret(gateway)
    return secret_copy_references(
        pki.namespace,
        [
            (leaf, "tls.crt", "tls.crt"),
            (leaf, "tls.key", "tls.key"),
            (pki.trust_secret, pki.trust_key, "ca.crt"),
        ],
    )


def cluster_backend(gateway: str, host: ClusterGateway, target: ClusterGateway) -> Obj:
    """The hop to ``target``'s fleet listener: TLS to its gateway address, the server verified as
    ``<cluster>.fleet.modelplane.internal`` by the fleet CA, this gateway's client certificate
    presented."""
    secret = {"group": "", "kind": "Secret", "name": client_secret(gateway)}
    return {
        "apiVersion": ENVOY_API_VERSION,
        "kind": "Backend",
        "metadata": managed_metadata(cluster_backend_name(gateway, target.cluster), host.namespace),
        "spec": {
            "endpoints": [backend_endpoint(target.address.lower(), FLEET_PORT)],
            "tls": {
                "sni": target.fleet_hostname,
                "caCertificateRefs": [secret],
                "clientCertificateRef": {"kind": "Secret", "name": client_secret(gateway)},
            },
        },
    }


def cluster_backend_tls(gateway: str, host: ClusterGateway, target: ClusterGateway) -> Obj:
    """The Gateway API's own statement of the hop's server verification (hostname: SNI and the
    name the certificate must carry; the fleet CA), attached to the Backend."""
    name = cluster_backend_name(gateway, target.cluster)
    return {
        "apiVersion": GATEWAY_API_VERSION,
        "kind": "BackendTLSPolicy",
        "metadata": managed_metadata(name, host.namespace),
        "spec": {
            "targetRefs": [{"group": ENVOY_GROUP, "kind": "Backend", "name": name}],
            "validation": {
                "caCertificateRefs": [
                    {"group": "", "kind": "Secret", "name": client_secret(gateway)}
                ],
                "hostname": target.fleet_hostname,
            },
        },
    }
