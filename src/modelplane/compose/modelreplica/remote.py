"""Remote objects travel to the workload cluster inside provider-kubernetes Objects."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from modelplane.compose.modelreplica.context import ReplicaContext
from modelplane.kube.names import dns_label
from modelplane.structs import frozen, layered

OBJECT_API_VERSION = "kubernetes.m.crossplane.io/v1alpha1"
PROVIDER_CONFIG_KIND = "ClusterProviderConfig"
# The Namespace is shared by every replica of a tenant on that cluster: never delete it.
NEVER_DELETE = frozen(["Observe", "Create", "Update", "LateInitialize"])
_CREATED = frozen({"policy": "SuccessfulCreate"})

Obj = dict[str, Any]


def wrap(
    ctx: ReplicaContext,
    key: str,
    manifest: Obj,
    *,
    readiness: Obj | None = None,
    management_policies: list[str] | None = None,
) -> Obj:
    """An Object (in the replica's namespace on the control plane) that applies ``manifest``.

    ``key`` is the composition resource name; the Object's name derives from it and the
    replica, so Objects of different replicas in one namespace never collide.
    """
    return remote_object(
        dns_label(ctx.name, key),
        ctx.namespace,
        ctx.provider_config,
        manifest,
        readiness=readiness,
        management_policies=management_policies,
    )


def remote_object(
    name: str,
    namespace: str,
    provider_config: str,
    manifest: Obj,
    *,
    readiness: Obj | None = None,
    management_policies: list[str] | None = None,
    references: list[Obj] | None = None,
) -> Obj:
    """A namespaced provider-kubernetes Object applying ``manifest`` through a cluster's
    ClusterProviderConfig; ready once created unless ``readiness`` says otherwise.
    ``references`` patch fields in from other objects (``spec.references``)."""
    # Only the names and the manifest differ between Objects: the rest is written as copies.
    policies = tuple(management_policies) if management_policies is not None else None
    settings = _settings(provider_config, tuple((readiness or _CREATED).items()), policies)
    varying: Obj = {"forProvider": {"manifest": manifest}}
    if references:
        varying["references"] = references
    spec = layered(settings, varying)
    return layered(_OBJECT, {"metadata": {"name": name, "namespace": namespace}, "spec": spec})


_OBJECT = frozen({"apiVersion": OBJECT_API_VERSION, "kind": "Object"})


# Every Object of every replica on a cluster carries the same reference and one of a few
# readiness policies.
@lru_cache(maxsize=1024)
def _settings(
    provider_config: str, readiness: tuple[tuple[str, Any], ...], policies: tuple[str, ...] | None
) -> Any:
    settings: Obj = {
        "providerConfigRef": {"kind": PROVIDER_CONFIG_KIND, "name": provider_config},
        "readiness": dict(readiness),
    }
    if policies is not None:
        settings["managementPolicies"] = list(policies)
    return frozen(settings)
