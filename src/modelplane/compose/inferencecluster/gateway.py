"""The cluster's inference Gateway and the fleet listener's TLS (CONTRACT-gateway.md).

Managed: the namespace, an EnvoyProxy (the Service's external traffic policy, and a resolver
that never completes a name with the pod's search domains), a GatewayClass
for Envoy Gateway's controller, and the Gateway with one listener, ``fleet`` (HTTPS 443, mutual
TLS: a client certificate from the fleet CA required), where every replica's HTTPRoute and the
front door's fleet routes attach; nothing on the cluster is reachable without that certificate.
The fleet listener's server certificate is issued on the control plane by a cert-manager CA
Issuer over the fleet CA, and only that leaf and the CA's certificate are copied to the cluster
(patched in by provider-kubernetes, so no composed manifest ever carries a key); the CA's private
key never leaves the control plane. External: the
Gateway named by spec.gateway is observed, never created, changed or deleted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplane.compose.inferencecluster.components import EG_CONTROLLER, ENVOY_GATEWAY
from modelplane.compose.inferencecluster.releases import stack_object
from modelplane.compose.inferencecluster.target import Target
from modelplane.compose.shared.fleetsecrets import FLEET_SERVER
from modelplane.compose.shared.frontdoor import (
    CLIENT_DOMAIN,
    FLEET_LISTENER,
    FLEET_PRIVATE_KEY,
    listener_ref,
    secret_copy_references,
)
from modelplane.compose.shared.remote import (
    NEVER_DELETE,
    OBSERVE_ONLY,
    OBSERVED_MANIFEST,
    cel_readiness,
    secret_copy,
)
from modelplane.kube import objects
from modelplane.kube.names import suffixed
from modelplane.kube.objects import Obj
from modelplane.labels import MANAGED_BY, STACK_COMPONENT

GATEWAY_COMPONENT = "inference-gateway"
FLEET_COMPONENT = "fleet-tls"

GATEWAY_NAMESPACE = "gateway-namespace"
ENVOY_PROXY = "envoy-proxy"
GATEWAY_CLASS = "gateway-class"
GATEWAY = "gateway"
FLEET_CA = "fleet-ca"
FLEET_ISSUER = "fleet-issuer"
FLEET_CERTIFICATE = "fleet-certificate"
FLEET_TLS = "fleet-tls"
FLEET_CLIENT_VALIDATION = "fleet-client-validation"

FLEET_TLS_SECRET = "inference-gateway-fleet-tls"
FLEET_CA_COPY = "modelplane-fleet-ca"
FLEET_CERTIFICATE_NAME = "inference-gateway-fleet"
TLS_TYPE = "kubernetes.io/tls"
ENVOY_PROXY_NAME = "inference-gateway"

# A Gateway is reachable once it reports an address; that is what the Object's readiness waits
# for, and provider-kubernetes polls quickly until it holds.
GATEWAY_READY_QUERY = "has(object.status.addresses) && size(object.status.addresses) > 0"
CLASS_ACCEPTED_QUERY = (
    "has(object.status) && has(object.status.conditions)"
    ' && object.status.conditions.exists(c, c.type == "Accepted" && c.status == "True")'
)
# Envoy Gateway reports a policy per ancestor (the Gateway); a policy it did not accept would
# leave the fleet listener without client validation, so its acceptance is its readiness.
POLICY_ACCEPTED_QUERY = (
    "has(object.status) && has(object.status.ancestors)"
    " && object.status.ancestors.exists(a, has(a.conditions)"
    ' && a.conditions.exists(c, c.type == "Accepted" && c.status == "True"))'
)
# Envoy resolves every hostname a Backend names (an external endpoint's, a hop to a cluster's
# load balancer) with c-ares, which by default completes it with the pod's search domains
# (<ns>.svc.cluster.local, svc.cluster.local, cluster.local, the node's) before trying it as
# written: `vllm.dev` would reach Service vllm in namespace dev. Envoy Gateway v1.8.1 has no DNS
# field for it (api/v1alpha1/dns_types.go: refresh rate, TTL, lookup family), but merges a
# bootstrap given on the EnvoyProxy (internal/xds/bootstrap/util.go), and a resolver set there is
# the one every DNS cluster without its own uses (tests/conformance/test_envoy_gateway_dns.py).
# Its own xDS address is written fully qualified, with the root's dot, so it needs no search.
CARES_RESOLVER = "envoy.extensions.network.dns_resolver.cares.v3.CaresDnsResolverConfig"
NO_SEARCH_BOOTSTRAP = f"""\
typed_dns_resolver_config:
  name: envoy.network.dns_resolver.cares
  typed_config:
    "@type": type.googleapis.com/{CARES_RESOLVER}
    dns_resolver_options:
      no_default_search_domain: true
"""
# What a platform team renews the fleet's certificates by (docs/design/routing.md, "Rotation").
_COMPONENT = {STACK_COMPONENT: FLEET_COMPONENT, MANAGED_BY: "modelplane"}
_FROM_ALL = {"namespaces": {"from": "All"}}


def gateway_resources(t: Target) -> dict[str, Obj]:
    gw = t.gateway
    if gw.mode != "Managed":
        return {GATEWAY: observed_gateway(t)}
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": gw.namespace, "labels": {MANAGED_BY: "modelplane"}},
    }
    proxy = {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": "EnvoyProxy",
        "metadata": {"name": ENVOY_PROXY_NAME, "namespace": gw.namespace},
        "spec": {
            "provider": {
                "type": "Kubernetes",
                # Local drops traffic on nodes without a proxy pod on some load balancers
                # (Nebius rejects it outright); Cluster works everywhere.
                "kubernetes": {"envoyService": {"externalTrafficPolicy": "Cluster"}},
            },
            "bootstrap": {"type": "Merge", "value": NO_SEARCH_BOOTSTRAP},
        },
    }
    gateway_class = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "GatewayClass",
        "metadata": {"name": gw.class_name},
        "spec": {
            "controllerName": EG_CONTROLLER,
            "parametersRef": {
                "group": "gateway.envoyproxy.io",
                "kind": "EnvoyProxy",
                "name": ENVOY_PROXY_NAME,
                "namespace": gw.namespace,
            },
        },
    }
    gateway = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": gw.name, "namespace": gw.namespace},
        "spec": {
            "gatewayClassName": gw.class_name,
            "listeners": [
                {
                    "name": FLEET_LISTENER,
                    "protocol": "HTTPS",
                    "port": 443,
                    "tls": {
                        "mode": "Terminate",
                        "certificateRefs": [{"kind": "Secret", "name": FLEET_TLS_SECRET}],
                    },
                    "allowedRoutes": _FROM_ALL,
                }
            ],
        },
    }
    name = GATEWAY_COMPONENT
    return {
        # Replicas' namespaces are never deleted either: the Gateway's may hold the user's too.
        GATEWAY_NAMESPACE: stack_object(
            t, name, GATEWAY_NAMESPACE, namespace, management_policies=list(NEVER_DELETE)
        ),
        ENVOY_PROXY: stack_object(t, name, ENVOY_PROXY, proxy),
        GATEWAY_CLASS: stack_object(
            t, name, GATEWAY_CLASS, gateway_class, readiness=cel_readiness(CLASS_ACCEPTED_QUERY)
        ),
        GATEWAY: stack_object(
            t, name, GATEWAY, gateway, readiness=cel_readiness(GATEWAY_READY_QUERY)
        ),
    }


def observed_gateway(t: Target) -> Obj:
    """An observe-only Object on the cluster's own Gateway: never created nor deleted."""
    return stack_object(
        t,
        GATEWAY_COMPONENT,
        GATEWAY,
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "Gateway",
            "metadata": {"name": t.gateway.name, "namespace": t.gateway.namespace},
        },
        readiness=cel_readiness(GATEWAY_READY_QUERY),
        management_policies=OBSERVE_ONLY,
    )


def fleet_resources(t: Target) -> dict[str, Obj]:
    """The fleet listener's certificate and its client validation. The certificate is issued on
    the control plane (the fleet CA's key never leaves it) and copied here with the trust bundle;
    each cluster holds only its own leaf, so one cluster's Secrets mint nothing another accepts."""
    gw = t.gateway
    pki = gw.pki
    leaf = suffixed(t.cluster, FLEET_SERVER)
    issuer = {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Issuer",
        "metadata": {"name": pki.issuer, "namespace": pki.namespace, "labels": _COMPONENT},
        "spec": {"ca": {"secretName": pki.ca_secret}},
    }
    certificate = {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {"name": leaf, "namespace": pki.namespace, "labels": _COMPONENT},
        "spec": {
            "secretName": leaf,
            "dnsNames": [gw.fleet_hostname],
            "usages": ["server auth", "digital signature"],
            "issuerRef": {"group": "cert-manager.io", "kind": "Issuer", "name": pki.issuer},
            "privateKey": dict(FLEET_PRIVATE_KEY),
        },
    }
    tls_copy = stack_object(
        t, FLEET_COMPONENT, FLEET_TLS, secret_copy(FLEET_TLS_SECRET, gw.namespace, TLS_TYPE)
    )
    tls_copy["spec"]["references"] = secret_copy_references(
        pki.namespace, [(leaf, "tls.crt", "tls.crt"), (leaf, "tls.key", "tls.key")]
    )
    # ca.crt, the key Envoy Gateway reads a client-validation trust anchor from; no key at all.
    trust_copy = stack_object(
        t, FLEET_COMPONENT, FLEET_CA, secret_copy(FLEET_CA_COPY, gw.namespace, "Opaque")
    )
    trust_copy["spec"]["references"] = secret_copy_references(
        pki.namespace, [(pki.trust_secret, pki.trust_key, "ca.crt")]
    )
    policy = {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": "ClientTrafficPolicy",
        "metadata": {"name": FLEET_CERTIFICATE_NAME, "namespace": gw.namespace},
        "spec": {
            "targetRefs": [listener_ref(gw.name, FLEET_LISTENER)],
            "tls": {
                "clientValidation": {
                    "caCertificateRefs": [{"group": "", "kind": "Secret", "name": FLEET_CA_COPY}],
                    # Only front gateways' certificates: a cluster's own server certificate, from
                    # the same CA, is never a client of another cluster.
                    "subjectAltNames": {
                        "dnsNames": [{"type": "Suffix", "value": f".{CLIENT_DOMAIN}"}]
                    },
                }
            },
        },
    }
    return {
        FLEET_ISSUER: issuer,
        FLEET_CERTIFICATE: certificate,
        FLEET_TLS: tls_copy,
        FLEET_CA: trust_copy,
        FLEET_CLIENT_VALIDATION: stack_object(
            t,
            FLEET_COMPONENT,
            FLEET_CLIENT_VALIDATION,
            policy,
            readiness=cel_readiness(POLICY_ACCEPTED_QUERY),
        ),
    }


OUTLIVES = (
    # Envoy Gateway's controller clears the finalizer it puts on the GatewayClass, and removes
    # the proxies and load balancer it runs for the Gateway: it goes last.
    (GATEWAY_CLASS, GATEWAY),
    (ENVOY_GATEWAY, GATEWAY_CLASS),
    (ENVOY_GATEWAY, ENVOY_PROXY),
    (ENVOY_GATEWAY, FLEET_CLIENT_VALIDATION),
)


def gateway_address(observed: Mapping[str, Any] | None) -> str:
    """The first address the observed Gateway reports, or "" before it reports one."""
    for entry in objects.status(_manifest(observed)).get("addresses") or []:
        value = objects.dig(entry, "value")
        if value:
            return str(value)
    return ""


def gateway_not_programmed(observed: Mapping[str, Any] | None) -> str:
    """Why the observed Gateway says it is not programmed (its own Programmed=False), or ""
    when it says nothing of the kind: a Gateway re-created, or read before its controller wrote
    its status, is no evidence that its address went away."""
    for c in objects.status(_manifest(observed)).get("conditions") or []:
        if isinstance(c, Mapping) and c.get("type") == "Programmed" and c.get("status") == "False":
            return f"{c.get('reason') or 'NotProgrammed'}: {c.get('message') or ''}".rstrip(": ")
    return ""


def gateway_class_name(observed: Mapping[str, Any] | None) -> str:
    """The class an observed Gateway names, or "" before it is observed."""
    return str(objects.spec(_manifest(observed)).get("gatewayClassName") or "")


def _manifest(observed: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return objects.mapping(observed, *OBSERVED_MANIFEST)
