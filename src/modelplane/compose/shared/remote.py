"""Remote objects travel to a workload cluster inside provider-kubernetes Objects.

Shared by every composition that writes to a workload cluster: the Object wrapping, its
ClusterProviderConfig reference, the never-delete policy and the tenant's remote Namespace.
"""

from __future__ import annotations

from functools import lru_cache

from modelplane.kube.objects import Body, Obj, condition
from modelplane.labels import MANAGED_BY
from modelplane.structs import frozen

OBJECT_API_VERSION = "kubernetes.m.crossplane.io/v1alpha1"
# A Namespace shared by every replica and cache of a tenant on that cluster: never delete it.
NEVER_DELETE = frozen(["Observe", "Create", "Update", "LateInitialize"])
OBSERVE_ONLY = frozen(["Observe"])
"""For what Modelplane reads on a cluster but must neither change nor delete."""
_CREATED = frozen({"policy": "SuccessfulCreate"})
MANIFEST = ("spec", "forProvider", "manifest")
"""Where an Object holds the manifest it applies."""
OBSERVED_MANIFEST = ("status", "atProvider", "manifest")
"""Where an Object reports the remote object as provider-kubernetes last read it."""


def remote_object(
    name: str,
    namespace: str,
    provider_config: str,
    manifest: Obj,
    *,
    readiness: Obj | None = None,
    management_policies: list[str] | None = None,
) -> Obj:
    """A namespaced provider-kubernetes Object applying ``manifest`` through a cluster's
    ClusterProviderConfig; ready once created unless ``readiness`` says otherwise."""
    spec: Obj = {
        "forProvider": {"manifest": manifest},
        "providerConfigRef": _provider_config_ref(provider_config),
        "readiness": readiness or _CREATED,
    }
    if management_policies is not None:
        spec["managementPolicies"] = management_policies
    return {
        "apiVersion": OBJECT_API_VERSION,
        "kind": "Object",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def managed_metadata(name: str, namespace: str | None = None) -> Obj:
    """Metadata of an object Modelplane owns on a workload cluster: its name, its namespace
    (none for a cluster-scoped object) and the managed-by label ``kubectl`` shows."""
    meta: Obj = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = {MANAGED_BY: "modelplane"}
    return meta


def secret_copy(name: str, namespace: str, type_: str = "Opaque") -> Obj:
    """A Secret on a workload cluster whose data the Object's references patch in from the
    control plane: its manifest never holds the data."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": managed_metadata(name, namespace),
        "type": type_,
    }


def remote_namespace(name: str) -> Obj:
    """A tenant's namespace on a workload cluster. Its replicas and model caches each compose
    it, so it names none of them: they would otherwise fight over its labels."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": managed_metadata(name)}


def refused(obj: Body | None) -> str | None:
    """The apply error a provider reports on its resource (Synced=False), if any."""
    c = condition(obj, "Synced")
    if c is None or c.get("status") != "False":
        return None
    return str(c.get("message") or c.get("reason") or "not synced")


@lru_cache(maxsize=64)
def cel_readiness(*conditions: str) -> Obj:
    """An Object's readiness policy: Ready once every CEL condition holds of the remote object."""
    return frozen({"policy": "DeriveFromCelQuery", "celQuery": " && ".join(conditions)})


# Every Object of every replica on a cluster carries the same reference.
@lru_cache(maxsize=1024)
def _provider_config_ref(name: str) -> Obj:
    return frozen({"kind": "ClusterProviderConfig", "name": name})
