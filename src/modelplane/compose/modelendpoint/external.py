"""An external endpoint's objects on a gateway's cluster, in the endpoint's namespace there (where
the ModelServices selecting it put their egress routes, so no reference crosses a namespace)."""

from __future__ import annotations

from modelplane.compose.shared.frontdoor import (
    ENVOY_API_VERSION,
    ENVOY_GROUP,
    GATEWAY_API_VERSION,
    EndpointURL,
    backend_endpoint,
    credential_name,
    external_backend_name,
    secret_copy_references,
)
from modelplane.compose.shared.remote import managed_metadata, secret_copy
from modelplane.kube.objects import Obj

CREDENTIAL_KEY = "credential"
"""The key Envoy Gateway's credential injection reads the header value from."""


def backend(endpoint: str, namespace: str, url: EndpointURL) -> Obj:
    return {
        "apiVersion": ENVOY_API_VERSION,
        "kind": "Backend",
        "metadata": managed_metadata(external_backend_name(endpoint), namespace),
        "spec": {"endpoints": [backend_endpoint(url.host, url.port)]},
    }


def backend_tls(endpoint: str, namespace: str, url: EndpointURL) -> Obj:
    """TLS to the provider, its certificate verified against the URL's host by the system CAs."""
    name = external_backend_name(endpoint)
    return {
        "apiVersion": GATEWAY_API_VERSION,
        "kind": "BackendTLSPolicy",
        "metadata": managed_metadata(name, namespace),
        "spec": {
            "targetRefs": [{"group": ENVOY_GROUP, "kind": "Backend", "name": name}],
            "validation": {"wellKnownCACertificates": "System", "hostname": url.host},
        },
    }


def credential_secret(endpoint: str, namespace: str) -> Obj:
    """The credential's copy; its data is patched in from the user's Secret by the Object."""
    return secret_copy(credential_name(endpoint), namespace)


def credential_references(namespace: str, auth: Obj) -> list[Obj]:
    """The credential's copy patched from the user's Secret in ``namespace``."""
    secret = auth["secretRef"]
    key = str(secret.get("key") or CREDENTIAL_KEY)
    return secret_copy_references(namespace, [(str(secret["name"]), key, CREDENTIAL_KEY)])


def credential_filter(endpoint: str, namespace: str, auth: Obj) -> Obj:
    """Envoy Gateway's credential injection: the Secret's value as the header, replacing any
    the client sent (the client's own key never reaches the provider)."""
    return {
        "apiVersion": ENVOY_API_VERSION,
        "kind": "HTTPRouteFilter",
        "metadata": managed_metadata(credential_name(endpoint), namespace),
        "spec": {
            "credentialInjection": {
                "header": str(auth.get("header") or "Authorization"),
                "overwrite": True,
                "credential": {
                    "valueRef": {"group": "", "kind": "Secret", "name": credential_name(endpoint)}
                },
            }
        },
    }
