"""The front door's contract: what the InferenceGateway, ModelService, ModelEndpoint and
ModelDeployment compositions name alike, and what they rely on from every cluster's serving stack.

The serving stack gives every InferenceCluster an inference Gateway (published in
``status.gateway``) with a plain HTTP listener for the cluster's own replicas and an HTTPS listener
``fleet`` that requires a client certificate from the fleet CA, and a server certificate for
``<cluster>.fleet.modelplane.internal`` on the fleet listener; the fleet CA's key stays on the
control plane, where a cert-manager ``Issuer`` per cluster issues every leaf (``FleetPKI``,
docs/design/routing.md "Security model"). Each composition reads the names below from here, so two
of them can never disagree about an object one composes and the other refers to.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from modelplane.compose.shared.remote import cel_readiness
from modelplane.kube import objects
from modelplane.kube.names import dns_label, suffixed, unique_label
from modelplane.kube.objects import Obj
from modelplane.reasons import InferenceCluster
from modelplane.structs import frozen

GATEWAY_GROUP = "gateway.networking.k8s.io"
GATEWAY_API_VERSION = f"{GATEWAY_GROUP}/v1"
ENVOY_GROUP = "gateway.envoyproxy.io"
ENVOY_API_VERSION = f"{ENVOY_GROUP}/v1alpha1"
CERT_MANAGER_GROUP = "cert-manager.io"
CERT_MANAGER_API_VERSION = f"{CERT_MANAGER_GROUP}/v1"
POOL_GROUP = "inference.networking.k8s.io"

# Where Objects of the cluster-scoped InferenceGateway live on the control plane.
CONTROL_NAMESPACE = "crossplane-system"

# The cluster's inference Gateway, when its InferenceCluster publishes no name (the stack's).
DEFAULT_GATEWAY_NAME = "inference-gateway"
DEFAULT_GATEWAY_NAMESPACE = "modelplane-system"
FLEET_LISTENER = "fleet"
FLEET_PORT = 443
FLEET_DOMAIN = "fleet.modelplane.internal"
# Front gateways' client certificates carry names under their own domain, outside FLEET_DOMAIN,
# so no cluster's server certificate (``<cluster>.fleet.modelplane.internal``) is ever accepted
# as a client, and no gateway's as a cluster.
CLIENT_DOMAIN = "gateways.modelplane.internal"
FLEET_CA_SECRET = "modelplane-fleet-ca"
# ECDSA P-256, a new key on every renewal: the fleet's own certificates.
FLEET_PRIVATE_KEY = frozen({"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always"})
FRONT_LISTENER = "https"
FRONT_PORT = 443

# Set by the front gateway on the one backendRef that carries a request to an external
# endpoint's egress route (and removed everywhere else), so a client cannot pick a lane itself.
ENDPOINT_HEADER = "x-modelplane-endpoint"
# Set by the front gateway on the backendRef of each replica lane, naming the replica's
# InferencePool: the cluster's fleet route has one rule per pool matching it (one InferencePool
# per rule, as Envoy AI Gateway requires).
POOL_HEADER = "x-modelplane-pool"
# The caller's identity: set on each request by the api_key_auth filter of an InferenceGateway
# with ``auth``, never trusted from outside; ModelService callers policies and the AI Gateway's
# usage metrics read it.
CALLER_HEADER = "x-modelplane-caller"
# Set by Envoy AI Gateway's external processor from the request body's ``model``
# (``internalapi.ModelNameHeaderKeyDefault``) before any rate limit runs: a ModelService's model
# route matches it, and a gateway's per-model limits bucket by it.
MODEL_HEADER = "x-ai-eg-model"

# A caller's priority (InferenceGateway spec.priority), set by the front hop after it
# authenticates the caller and turned by each cluster's fleet hop into the endpoint picker's
# objective (docs/design/shared-front-door.md, "Priority as designed").
PRIORITY_HEADER = "x-modelplane-priority"
PRIORITY_VALUES = range(-5, 6)
"""The values spec.priority[].value may take, and one objective per pool each."""
OBJECTIVE_HEADERS = ("x-llm-d-inference-objective", "x-gateway-inference-objective")
"""The picker's objective header and its deprecated alias (llm-d-router v0.10.0
``pkg/epp/metadata/consts.go``): the new name is read first, so both are set or removed."""

WEIGHT_MAX = 1_000_000
"""The largest backendRef weight the Gateway API accepts."""
BACKENDS_MAX = 16
"""backendRefs per HTTPRoute rule, and rules per HTTPRoute, the Gateway API CRDs accept."""

# A route serves once its gateway accepted it and resolved every backend it names.
ROUTE_PROGRAMMED_QUERY = (
    "has(object.status) && has(object.status.parents) && size(object.status.parents) > 0"
    " && object.status.parents.all(p, has(p.conditions)"
    ' && p.conditions.exists(c, c.type == "Accepted" && c.status == "True")'
    ' && p.conditions.exists(c, c.type == "ResolvedRefs" && c.status == "True"))'
)
ROUTE_READINESS = cel_readiness(ROUTE_PROGRAMMED_QUERY)


@dataclass(frozen=True)
class ClusterGateway:
    """What an InferenceCluster publishes about its inference Gateway ("": not known)."""

    cluster: str
    name: str = ""
    namespace: str = ""
    address: str = ""
    fleet_hostname: str = ""
    class_name: str = ""
    provider_config: str = ""


def cluster_gateway(cluster: Mapping[str, Any]) -> ClusterGateway:
    """The cluster's inference Gateway as its status publishes it, defaults filled in.

    ``fleetHostname`` is fixed by the contract, so a cluster that does not publish it yet is
    still verified against the name its fleet certificate carries.
    """
    name = objects.name(cluster)
    gateway = objects.mapping(cluster, "status", "gateway")
    return ClusterGateway(
        cluster=name,
        name=str(gateway.get("name") or DEFAULT_GATEWAY_NAME),
        namespace=str(gateway.get("namespace") or DEFAULT_GATEWAY_NAMESPACE),
        address=str(gateway.get("address") or ""),
        fleet_hostname=str(gateway.get("fleetHostname") or fleet_hostname(name)),
        class_name=str(gateway.get("className") or ""),
        provider_config=str(objects.dig(cluster, "status", "providerConfigRef", "name") or ""),
    )


@dataclass(frozen=True)
class FleetPKI:
    """Where a cluster's fleet certificates are issued: on the control plane, by a cert-manager
    CA Issuer in the fleet CA Secret's namespace. The CA's key never leaves it; each cluster and
    each front gateway receives only its own leaf (copied by provider-kubernetes from the
    Secret cert-manager writes there) and the trust bundle."""

    namespace: str
    ca_secret: str
    issuer: str
    """The control-plane Issuer this cluster's leaves (and its front gateways') come from."""
    trust_secret: str
    trust_key: str
    """The key of ``trust_secret`` holding the CA certificates a cluster and its front gateways
    trust: the CA Secret's own ``tls.crt`` unless ``fleetTrustSecretRef`` names a bundle (how a
    CA is rotated: docs/design/routing.md)."""


def fleet_pki(cluster: Mapping[str, Any]) -> FleetPKI:
    name = objects.name(cluster)
    gateway = objects.mapping(cluster, "spec", "gateway")
    ca = gateway.get("fleetCASecretRef") or {}
    trust = gateway.get("fleetTrustSecretRef") or {}
    ca_secret = str(ca.get("name") or FLEET_CA_SECRET)
    return FleetPKI(
        namespace=str(ca.get("namespace") or CONTROL_NAMESPACE),
        ca_secret=ca_secret,
        issuer=suffixed(name, "fleet-issuer"),
        trust_secret=str(trust.get("name") or ca_secret),
        trust_key=str(trust.get("key") or "ca.crt") if trust else "tls.crt",
    )


def listener_ref(gateway: str, listener: str) -> Obj:
    """A policy's targetRef: one listener of the Gateway named ``gateway``."""
    return {"group": GATEWAY_GROUP, "kind": "Gateway", "name": gateway, "sectionName": listener}


def secret_copy_references(namespace: str, copies: Sequence[tuple[str, str, str]]) -> list[Obj]:
    """provider-kubernetes references patching a copied Secret's data from control-plane Secrets,
    each ``(secret, key, key on the copy)``: the copy's manifest never holds the data."""
    return [
        {
            "patchesFrom": {
                "apiVersion": "v1",
                "kind": "Secret",
                "name": secret,
                "namespace": namespace,
                "fieldPath": f"data[{key}]",
            },
            "toFieldPath": f"data[{to}]",
        }
        for secret, key, to in copies
    ]


def client_identity(gateway: str) -> str:
    """The name a front gateway's client certificate carries."""
    return f"{dns_label(gateway)}.{CLIENT_DOMAIN}"


def gateway_withdrawn(cluster: Mapping[str, Any]) -> bool:
    """Whether the cluster says its gateway has no address (``GatewayReady`` False, written by
    its composition from the Gateway's own report). A cluster listed without status, or with
    only Crossplane's own conditions, says nothing about its gateway: no evidence it went away."""
    withdrawn = objects.condition(cluster, InferenceCluster.GATEWAY_READY)
    return objects.dig(withdrawn, "status") == "False"


def fleet_hostname(cluster: str) -> str:
    """The name the cluster's fleet listener certificate carries."""
    return f"{cluster}.{FLEET_DOMAIN}"


def caller_secret_selector(gateway_spec: Mapping[str, Any]) -> dict[str, str]:
    """The labels an InferenceGateway's caller Secrets carry
    (``spec.auth.callerSecretSelector.matchLabels``)."""
    labels = objects.mapping(gateway_spec, "auth", "callerSecretSelector", "matchLabels")
    return {str(k): str(v) for k, v in labels.items()}


def by_name(objs: Sequence[Mapping[str, Any]] | None) -> dict[str, Any]:
    """Objects by name (plain dicts or the read-only views the edge may deliver)."""
    return {
        str(o["metadata"]["name"]): o for o in objs or [] if isinstance(o.get("metadata"), Mapping)
    }


# --- names on a gateway's host cluster, in its inference Gateway's namespace --------------------


def front_gateway_name(gateway: str) -> str:
    """The InferenceGateway's own Gateway on its host cluster."""
    return suffixed(gateway, "front")


def front_tls_secret(gateway: str) -> str:
    """The Secret holding the front listener's server certificate."""
    return suffixed(gateway, "tls")


def client_secret(gateway: str) -> str:
    """The Secret holding the front gateway's fleet client certificate (and the fleet CA)."""
    return suffixed(gateway, "fleet-client")


# Several InferenceGateways may share a host cluster (and its gateway namespace): every name
# there carries the gateway's.


def cluster_backend_name(gateway: str, cluster: str) -> str:
    """The Backend a front gateway dials a cluster's fleet listener through."""
    return dns_label(gateway, cluster, "fleet")


def front_route_name(gateway: str, namespace: str, service: str, kept: str | None = None) -> str:
    """A ModelService's route on a front gateway. One namespace holds every tenant's, so a name
    cut to fit carries an 80-bit hash (``unique_label``); ``kept`` is the name the route was
    composed with, observed: one named before (``dns_label``, cut with a 32-bit hash) keeps
    it, as provider-kubernetes leaves the object a renamed manifest named in place, still
    routing (docs/design/security.md)."""
    return _kept_or_unique(kept, gateway, namespace, service)


def unavailable_filter_name(
    gateway: str, namespace: str, service: str, kept: str | None = None
) -> str:
    """The direct-response filter a front route answers 503 with while nothing is ready;
    ``kept`` as for ``front_route_name``."""
    return _kept_or_unique(kept, gateway, namespace, service, "unavailable")


def _kept_or_unique(kept: str | None, *parts: str) -> str:
    # Only the name these very parts had: an observed name is what this service composed, and
    # no new name of either layout can equal another service's old one (unique_label).
    if kept is not None and kept == dns_label(*parts):
        return kept
    return unique_label(*parts)


# --- names in the tenant's namespace on a cluster ------------------------------------------------


def priority_objective_name(pool: str, value: int) -> str:
    """The InferenceObjective of ``pool`` at priority ``value``: ``<pool>-priority-<value>``,
    ``m`` for a negative sign (``-m1``), a DNS subdomain. The picker finds an objective by name
    alone and keeps only its own pool's, so the name carries the pool."""
    return f"{pool}-priority-{'m' if value < 0 else ''}{abs(value)}"


def fleet_route_name(service: str) -> str:
    """A ModelService's route on a cluster's fleet listener, to the replicas' pools there."""
    return suffixed(service, "fleet")


def egress_route_name(service: str, endpoint: str) -> str:
    """A ModelService's route from a gateway's host cluster out to one external endpoint."""
    return dns_label(service, endpoint, "egress")


def external_backend_name(endpoint: str) -> str:
    """An external endpoint's Backend on every gateway's host cluster."""
    return suffixed(endpoint, "external")


def credential_name(endpoint: str) -> str:
    """An external endpoint's credential Secret, and the filter that injects it."""
    return suffixed(endpoint, "credential")


def service_prefix(namespace: str, service: str) -> str:
    """The path a ModelService answers under on every gateway that serves it."""
    return f"/{namespace}/{service}/"


# --- an endpoint's URL ---------------------------------------------------------------------------


@dataclass(frozen=True)
class EndpointURL:
    scheme: str
    host: str
    port: int
    path: str

    @property
    def is_ip(self) -> bool:
        try:
            ipaddress.ip_address(self.host)
        except ValueError:
            return False
        return True

    @property
    def tls(self) -> bool:
        return self.scheme == "https"


class InvalidURLError(ValueError):
    pass


def parse_url(url: str) -> EndpointURL:
    """``scheme://host[:port][/path]`` with scheme http or https; the port defaults by scheme."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as e:
        raise InvalidURLError(f"{url!r} is not a URL: {e}") from None
    if parts.scheme not in ("http", "https"):
        raise InvalidURLError(f"{url!r}: the scheme must be http or https")
    if not parts.hostname:
        raise InvalidURLError(f"{url!r} names no host")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise InvalidURLError(f"{url!r}: a query, fragment or user is not allowed")
    if port == 0:
        raise InvalidURLError(f"{url!r}: the port must be 1 to 65535")
    return EndpointURL(
        scheme=parts.scheme,
        host=parts.hostname,
        port=(443 if parts.scheme == "https" else 80) if port is None else port,
        path=parts.path or "/",
    )


def backend_endpoint(host: str, port: int) -> Obj:
    """An Envoy Gateway Backend endpoint: an IP address, or a name resolved by DNS."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return {"fqdn": {"hostname": host, "port": port}}
    return {"ip": {"address": host, "port": port}}


# A spent budget's answer: composed on the gateway's rate-limit policy, and again on every
# route policy a ModelService merges into it (merged, a route policy's responseOverride list
# replaces the gateway's: it has no merge key).
RETRY_AFTER = "60"
"""Seconds a refused caller waits: every budget counts per minute, so a minute always reaches
the next window. A header of the override cannot carry the exact reset: Envoy evaluates its
values with empty response headers (the body reads the refused reply's, below)."""
SPENT_LIMIT = "%RESP(X-RATELIMIT-LIMIT)%"
"""The refused reply's draft-03 ``x-ratelimit-limit``: the quota of the budget with nothing
left, then ``<quota>;w=<seconds>`` for every budget that counted the request, e.g.
``600, 600;w=60, 2000000;w=60``. Envoy formats the override's body with the headers of the
reply it replaces, where its rate-limit filter put these; "-" if absent."""
SPENT_RESET = "%RESP(X-RATELIMIT-RESET)%"
"""The refused reply's ``x-ratelimit-reset``: seconds until that budget's window resets."""
RATE_LIMITED_BODY = json.dumps(
    {
        "error": {
            "type": "rate_limit_exceeded",
            "code": 429,
            "message": (
                "a budget of this gateway (spec.limits) is spent for this caller: "
                f"limit {SPENT_LIMIT} (the spent budget's requests or tokens, then each "
                "budget counting this request as quota;w=window seconds); "
                f"it resets in {SPENT_RESET} seconds"
            ),
        }
    },
    sort_keys=True,
)
"""The 429's body, OpenAI's error shape. Envoy reads it as a format string: its only command
operators are the two above, whose values (digits, ", ", ";w=", or "-") keep it JSON."""


def budget_spent() -> Obj:
    """The answer to a request a budget refuses: Envoy's own 429 only (source ``Local``), never
    a backend's, with a body naming the limit that was hit and when its window resets, and
    ``Retry-After``."""
    return {
        "match": {"statusCodes": [{"type": "Value", "value": 429}]},
        "source": "Local",
        "response": {
            "contentType": "application/json",
            "body": {"type": "Inline", "inline": RATE_LIMITED_BODY},
            "header": {"set": [{"name": "Retry-After", "value": RETRY_AFTER}]},
        },
    }
