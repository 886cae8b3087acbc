"""The ClusterProviderConfigs that reach a cluster: provider-kubernetes' (Objects, and every
ModelReplica and ModelCache on the cluster) and provider-helm's (the stack's Releases), both
built from the same kubeconfig Secret and optional identity."""

from __future__ import annotations

from modelplane.compose.inferencecluster.target import DEFAULT_SECRET_NAMESPACE
from modelplane.kube.objects import Obj

KUBERNETES_CONFIG_API_VERSION = "kubernetes.m.crossplane.io/v1alpha1"


def provider_config_for(
    name: str, existing: Obj, api_version: str = KUBERNETES_CONFIG_API_VERSION
) -> Obj:
    """The ClusterProviderConfig (of ``api_version``) that reaches the cluster through its
    kubeconfig Secret."""
    secret = existing["secretRef"]
    namespace = str(secret.get("namespace") or DEFAULT_SECRET_NAMESPACE)
    spec: Obj = {
        "credentials": {
            "source": "Secret",
            "secretRef": {
                "name": secret["name"],
                "namespace": namespace,
                "key": secret.get("key") or "kubeconfig",
            },
        }
    }
    identity = existing.get("identitySecretRef")
    if identity:
        spec["identity"] = {
            "source": "Secret",
            "type": identity.get("type") or "GoogleApplicationCredentials",
            "secretRef": {
                "name": identity["name"],
                "namespace": namespace,
                "key": identity.get("key") or "private_key",
            },
        }
    return {
        "apiVersion": api_version,
        "kind": "ClusterProviderConfig",
        "metadata": {"name": name},
        "spec": spec,
    }
