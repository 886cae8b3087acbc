"""Which control-plane Secrets a field that copies one to a workload cluster may name.

provider-kubernetes copies a Secret's keys from the control plane to a cluster with its own
rights, which reach every Secret there: a field naming the Secret to copy is a request made with
those rights, not with its writer's. Two fields do so:

- InferenceGateway ``spec.tls.secretRef`` (in ``crossplane-system``, where the fleet CA lives by
  default): its ``tls.crt`` and ``tls.key`` go to the gateway's host cluster;
- InferenceCluster ``spec.gateway.fleetTrustSecretRef`` (in the fleet CA's namespace): one key
  goes to the cluster, and to its front gateways' hosts, as ``ca.crt``.

Neither may name the fleet CA Secret's key (it signs every fleet certificate) or a Secret
Modelplane issues there: each cluster's fleet server certificate (``<cluster>-fleet-server``)
and each gateway's fleet client certificate (``<gateway>-fleet-client``), whose keys belong to
one cluster or gateway only. The trust bundle must be certificates: a key ending in ``.crt`` or
``.pem``, never ``tls.key`` (a kubeconfig or a cloud credential in the same namespace is no
bundle either). The XRDs refuse the same at admission (CEL); the composition checks again, and
also knows every cluster's own CA Secret name, which an InferenceGateway's admission cannot
(docs/design/security.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from modelplane.compose.shared.frontdoor import CONTROL_NAMESPACE, FLEET_CA_SECRET, fleet_pki
from modelplane.kube import objects

FLEET_SERVER = "fleet-server"
"""The suffix of each cluster's fleet server certificate Secret (``inferencecluster.gateway``)."""
FLEET_CLIENT = "fleet-client"
"""The suffix of each gateway's fleet client certificate Secret (``frontdoor.client_secret``)."""


def issued_secret(name: str) -> str:
    """What ``name`` is, when it is a fleet certificate Secret Modelplane issues, else ""."""
    if name.endswith(f"-{FLEET_SERVER}"):
        return "a cluster's fleet server certificate Secret (<cluster>-fleet-server)"
    if name.endswith(f"-{FLEET_CLIENT}"):
        return "a gateway's fleet client certificate Secret (<gateway>-fleet-client)"
    return ""


def fleet_ca_names(clusters: Iterable[Mapping[str, Any]]) -> set[str]:
    """The fleet CA Secrets in ``crossplane-system``: the default, and each cluster's own."""
    names = {FLEET_CA_SECRET}
    for cluster in clusters:
        pki = fleet_pki(cluster)
        if pki.namespace == CONTROL_NAMESPACE:
            names.add(pki.ca_secret)
    return names


def front_certificate_problem(name: str, ca_names: Iterable[str] = (FLEET_CA_SECRET,)) -> str:
    """Why an InferenceGateway may not copy ``name`` as its front certificate, or ""."""
    field = f"InferenceGateway spec.tls.secretRef.name {name!r}"
    if name in set(ca_names):
        return (
            f"{field} is the fleet CA Secret: its tls.key, which signs every fleet certificate, "
            "would be copied to the gateway's cluster; name the front certificate's own Secret. "
            "Nothing was changed"
        )
    issued = issued_secret(name)
    if issued:
        return (
            f"{field} is {issued}: its key belongs to that cluster or gateway alone and would "
            "be copied to this gateway's cluster; name the front certificate's own Secret. "
            "Nothing was changed"
        )
    return ""


def trust_bundle_problem(cluster: Mapping[str, Any]) -> str:
    """Why an InferenceCluster's ``fleetTrustSecretRef`` may not be copied as ``ca.crt``, or ""."""
    trust = objects.dig(cluster, "spec", "gateway", "fleetTrustSecretRef")
    if not isinstance(trust, Mapping):
        return ""
    name, key = str(trust.get("name") or ""), str(trust.get("key") or "ca.crt")
    field = "InferenceCluster spec.gateway.fleetTrustSecretRef"
    if key == "tls.key":
        what = "the fleet CA's private key" if name == fleet_pki(cluster).ca_secret else "a key"
        return (
            f"{field}.key {key!r} is a TLS Secret's private key ({what}), which would be copied "
            "to the cluster as ca.crt; name the bundle's certificates (ca.crt). Nothing was changed"
        )
    if not key.endswith((".crt", ".pem")):
        return (
            f"{field}.key {key!r} names no PEM certificate bundle (a key ending in .crt or "
            ".pem): whatever it holds (a kubeconfig, a credential) would be copied to the "
            "cluster as ca.crt. Nothing was changed"
        )
    issued = issued_secret(name)
    if issued:
        return (
            f"{field}.name {name!r} is {issued}, not a trust bundle: name the platform team's "
            "bundle Secret. Nothing was changed"
        )
    return ""
