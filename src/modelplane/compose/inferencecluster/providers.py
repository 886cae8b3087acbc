"""The ClusterProviderConfigs that reach a cluster: provider-kubernetes' (Objects, and every
ModelReplica and ModelCache on the cluster) and provider-helm's (the stack's Releases), both
built from the same kubeconfig Secret and optional identity."""

from __future__ import annotations

from modelplane.compose.inferencecluster.target import DEFAULT_SECRET_NAMESPACE
from modelplane.kube.objects import Obj

KUBERNETES_CONFIG_API_VERSION = "kubernetes.m.crossplane.io/v1alpha1"
DEFAULT_SECRET_KEY = "kubeconfig"
DEFAULT_IDENTITY_KEY = "private_key"
DEFAULT_IDENTITY_TYPE = "GoogleApplicationCredentials"


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
                "key": secret.get("key") or DEFAULT_SECRET_KEY,
            },
        }
    }
    identity = existing.get("identitySecretRef")
    if identity:
        spec["identity"] = {
            "source": "Secret",
            "type": identity.get("type") or DEFAULT_IDENTITY_TYPE,
            "secretRef": {
                "name": identity["name"],
                "namespace": namespace,
                "key": identity.get("key") or DEFAULT_IDENTITY_KEY,
            },
        }
    return {
        "apiVersion": api_version,
        "kind": "ClusterProviderConfig",
        "metadata": {"name": name},
        "spec": spec,
    }
